-- PushFleet core tables: device registry, delivery ledger, attempts, intake rejections.
-- Applied by `pushfleet migrate` (each file once, in order, recorded in schema_migrations).

-- The token registry. One row per (app, platform, token).
CREATE TABLE IF NOT EXISTS devices (
    id              bigserial PRIMARY KEY,
    app             text        NOT NULL,
    platform        text        NOT NULL CHECK (platform IN ('ios', 'android')),
    token           text        NOT NULL,
    user_id         text,
    environment     text        NOT NULL DEFAULT 'production' CHECK (environment IN ('production', 'sandbox')),
    registered_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at    timestamptz NOT NULL DEFAULT now(),
    invalidated_at  timestamptz,
    invalid_reason  text,
    UNIQUE (app, platform, token)
);
CREATE INDEX IF NOT EXISTS devices_user_idx ON devices (app, user_id) WHERE user_id IS NOT NULL AND invalidated_at IS NULL;
CREATE INDEX IF NOT EXISTS devices_invalidated_idx ON devices (invalidated_at) WHERE invalidated_at IS NOT NULL;

-- The delivery ledger: one row per (notification, device token), current status.
-- Partitioned by day on the notification's created_at.
CREATE TABLE IF NOT EXISTS deliveries (
    notification_id     uuid        NOT NULL,
    created_at          timestamptz NOT NULL,
    app                 text        NOT NULL,
    platform            text        NOT NULL,
    token               text        NOT NULL,
    status              text        NOT NULL CHECK (status IN (
                            'pending', 'retrying', 'accepted', 'delivered', 'opened',
                            'invalid_token', 'rejected', 'expired', 'dead_lettered')),
    attempts            integer     NOT NULL DEFAULT 0,
    provider_status     integer,
    provider_reason     text,
    provider_message_id text,
    detail              text,
    enqueued_at         timestamptz,
    first_attempt_at    timestamptz,
    last_attempt_at     timestamptz,
    accepted_at         timestamptz,
    delivered_at        timestamptz,
    opened_at           timestamptz,
    final_at            timestamptz,
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (notification_id, token, created_at)
) PARTITION BY RANGE (created_at);
CREATE TABLE IF NOT EXISTS deliveries_default PARTITION OF deliveries DEFAULT;
CREATE INDEX IF NOT EXISTS deliveries_app_created_idx ON deliveries (app, created_at);
CREATE INDEX IF NOT EXISTS deliveries_status_idx ON deliveries (status, created_at);

-- One row per attempt, append-only, partitioned like deliveries.
CREATE TABLE IF NOT EXISTS delivery_attempts (
    notification_id     uuid        NOT NULL,
    created_at          timestamptz NOT NULL,
    token               text        NOT NULL,
    attempt             integer     NOT NULL,
    attempted_at        timestamptz NOT NULL,
    outcome             text        NOT NULL,
    provider            text        NOT NULL,
    provider_status     integer,
    provider_reason     text,
    latency_ms          double precision,
    worker              text
) PARTITION BY RANGE (created_at);
CREATE TABLE IF NOT EXISTS delivery_attempts_default PARTITION OF delivery_attempts DEFAULT;
CREATE INDEX IF NOT EXISTS delivery_attempts_key_idx ON delivery_attempts (notification_id, token);

-- Intake messages that never became a notification (undecodable, unknown
-- schema version, invalid). notification_id is set when it could be read.
CREATE TABLE IF NOT EXISTS intake_rejections (
    id               bigserial   PRIMARY KEY,
    notification_id  uuid,
    app              text,
    kind             text        NOT NULL,
    reason           text        NOT NULL,
    kafka_topic      text        NOT NULL,
    kafka_partition  integer     NOT NULL,
    kafka_offset     bigint      NOT NULL,
    received_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (kafka_topic, kafka_partition, kafka_offset)
);

-- Creates the daily partitions of deliveries and delivery_attempts covering
-- [first_day, first_day + days). Safe to call concurrently and repeatedly.
CREATE OR REPLACE FUNCTION pushfleet_ensure_partitions(first_day date, days integer)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    d date;
    created integer := 0;
    parent text;
    child text;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('pushfleet_ensure_partitions'));
    FOR i IN 0 .. days - 1 LOOP
        d := first_day + i;
        FOREACH parent IN ARRAY ARRAY['deliveries', 'delivery_attempts'] LOOP
            child := parent || '_' || to_char(d, 'YYYYMMDD');
            IF to_regclass(child) IS NULL THEN
                EXECUTE format(
                    'CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                    child, parent, d::timestamp AT TIME ZONE 'UTC', (d + 1)::timestamp AT TIME ZONE 'UTC');
                created := created + 1;
            END IF;
        END LOOP;
    END LOOP;
    RETURN created;
END;
$$;

-- Partitions around the day the schema is created; workers and
-- `pushfleet maintain` create further days as they are needed.
SELECT pushfleet_ensure_partitions((now() AT TIME ZONE 'UTC')::date - 2, 10);

-- Analysts: counts per app, platform and status.
CREATE OR REPLACE VIEW delivery_status_counts AS
SELECT app, platform, status, count(*) AS deliveries
FROM deliveries
GROUP BY app, platform, status;

-- Analysts: tokens invalidated recently, newest first.
CREATE OR REPLACE VIEW recently_invalidated_tokens AS
SELECT app, platform, token, user_id, invalidated_at, invalid_reason
FROM devices
WHERE invalidated_at IS NOT NULL
ORDER BY invalidated_at DESC;
