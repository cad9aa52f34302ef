-- PushFleet 0002: device receipts, the analysts' views, and the indexes that
-- keep those views fast on millions of rows.
--
-- Time buckets are UTC: `date_trunc('hour', t AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`
-- is immutable (unlike date_trunc on timestamptz, which depends on the session
-- time zone), so it can be indexed and the views' `hour`/`day` filters use it.

-- Device receipts as they arrive from product services (topic PREFIX.receipts),
-- kept whether or not the delivery row exists yet: a receipt can overtake the
-- provider outcome, and the deliveries trigger below picks it up on insert.
CREATE TABLE IF NOT EXISTS delivery_receipts (
    notification_id uuid        NOT NULL,
    token           text        NOT NULL,
    kind            text        NOT NULL CHECK (kind IN ('delivered', 'opened')),
    app             text        NOT NULL,
    platform        text        NOT NULL,
    at              timestamptz NOT NULL,
    received_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (notification_id, token, kind)
);
CREATE INDEX IF NOT EXISTS delivery_receipts_at_brin ON delivery_receipts USING brin (at);

-- Forward order of the delivery statuses; NULL for the failure statuses,
-- which receipts never change.
CREATE OR REPLACE FUNCTION pushfleet_status_rank(status text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE status WHEN 'pending' THEN 0 WHEN 'retrying' THEN 1 WHEN 'accepted' THEN 2
                       WHEN 'delivered' THEN 3 WHEN 'opened' THEN 4 END
$$;

-- The advisory lock that orders receipt batches against delivery inserts:
-- inserts take it shared (they never wait for each other), a receipt batch
-- takes it exclusive before it writes, so a receipt is either seen by the
-- insert's trigger or finds the committed row with its own UPDATE.
CREATE OR REPLACE FUNCTION pushfleet_receipts_lock_key() RETURNS bigint
LANGUAGE sql IMMUTABLE AS $$ SELECT 8103516541718622324::bigint $$;

-- Keeps receipts and status order on every write of a delivery row:
--  * on insert, merges receipts that arrived before the provider outcome;
--  * delivered_at/opened_at are never cleared and keep the earliest time
--    (an open implies a delivery);
--  * a row with receipt times moves forward to delivered/opened unless it is
--    invalid_token/rejected/expired/dead_lettered (then only the times are kept);
--  * the status never moves backwards (pending < retrying < accepted < delivered < opened).
CREATE OR REPLACE FUNCTION pushfleet_deliveries_keep_receipts() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    r_delivered timestamptz;
    r_opened    timestamptz;
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM pg_advisory_xact_lock_shared(pushfleet_receipts_lock_key());
        SELECT min(at) FILTER (WHERE kind = 'delivered'), min(at) FILTER (WHERE kind = 'opened')
          INTO r_delivered, r_opened
          FROM delivery_receipts
         WHERE notification_id = NEW.notification_id AND token = NEW.token;
    ELSE
        r_delivered := OLD.delivered_at;
        r_opened := OLD.opened_at;
    END IF;
    NEW.opened_at := LEAST(NEW.opened_at, r_opened);
    NEW.delivered_at := LEAST(NEW.delivered_at, r_delivered, NEW.opened_at);
    IF pushfleet_status_rank(NEW.status) IS NOT NULL THEN
        IF NEW.opened_at IS NOT NULL THEN
            NEW.status := 'opened';
        ELSIF NEW.delivered_at IS NOT NULL AND pushfleet_status_rank(NEW.status) < 3 THEN
            NEW.status := 'delivered';
        END IF;
        IF NEW.status IN ('delivered', 'opened') THEN
            NEW.final_at := COALESCE(NEW.final_at, NEW.accepted_at, NEW.delivered_at);
        END IF;
    END IF;
    IF TG_OP = 'UPDATE' AND pushfleet_status_rank(OLD.status) > pushfleet_status_rank(NEW.status) THEN
        NEW.status := OLD.status;
    END IF;
    RETURN NEW;
END;
$$;

DROP TRIGGER IF EXISTS deliveries_keep_receipts ON deliveries;
CREATE TRIGGER deliveries_keep_receipts
    BEFORE INSERT OR UPDATE ON deliveries
    FOR EACH ROW EXECUTE FUNCTION pushfleet_deliveries_keep_receipts();

-- Indexes (created on the partitioned parents, so every partition, present
-- and future, gets them).
-- Funnel and latency views: an index-only scan over an hour range, already
-- in (hour, app, platform) order for the GROUP BY. created_at is included
-- because PostgreSQL plans an index-only scan on an expression index only
-- when the expression's column is in the index too.
CREATE INDEX IF NOT EXISTS deliveries_funnel_idx ON deliveries (
    (date_trunc('hour', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'), app, platform)
    INCLUDE (created_at, status, enqueued_at, accepted_at, delivered_at, opened_at);
-- Failures only (a few percent of the rows): top failure reasons.
CREATE INDEX IF NOT EXISTS deliveries_failures_idx ON deliveries (created_at, app, platform, status, provider_reason)
    WHERE status IN ('invalid_token', 'rejected', 'expired', 'dead_lettered');
-- Range scans on raw time within a day partition (rows arrive roughly in time order).
CREATE INDEX IF NOT EXISTS deliveries_created_brin ON deliveries USING brin (created_at);
CREATE INDEX IF NOT EXISTS delivery_attempts_attempted_brin ON delivery_attempts USING brin (attempted_at);
CREATE INDEX IF NOT EXISTS delivery_attempts_hour_idx ON delivery_attempts (
    (date_trunc('hour', attempted_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'), provider)
    INCLUDE (attempted_at, outcome, provider_reason, latency_ms);
CREATE INDEX IF NOT EXISTS devices_invalidated_day_idx ON devices (
    (date_trunc('day', invalidated_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'), app, platform)
    INCLUDE (invalid_reason) WHERE invalidated_at IS NOT NULL;

-- Funnel per app × platform × hour of the notification's created_at.
-- accepted counts every row the provider ever accepted (accepted_at set), so
-- delivered and opened rows count as accepted too; delivered counts rows with a
-- device receipt (an open implies a delivery).
CREATE OR REPLACE VIEW delivery_funnel_hourly AS
SELECT date_trunc('hour', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
       app, platform,
       count(*)                                              AS enqueued,
       count(accepted_at)                                    AS accepted,
       count(delivered_at)                                   AS delivered,
       count(opened_at)                                      AS opened,
       count(*) FILTER (WHERE status = 'invalid_token')      AS invalid_token,
       count(*) FILTER (WHERE status = 'rejected')           AS rejected,
       count(*) FILTER (WHERE status = 'expired')            AS expired,
       count(*) FILTER (WHERE status = 'dead_lettered')      AS dead_lettered,
       count(*) FILTER (WHERE status IN ('pending', 'retrying')) AS in_progress
FROM deliveries
GROUP BY 1, 2, 3;

-- Failed deliveries by final status and provider reason, per app/platform/day,
-- with their share of all the deliveries of that app/platform/day.
CREATE OR REPLACE VIEW delivery_failure_reasons_daily AS
SELECT day, app, platform, status, reason, deliveries,
       round(deliveries::numeric / total, 6) AS share_of_deliveries
FROM (
    SELECT date_trunc('day', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day,
           app, platform, status, COALESCE(provider_reason, '') AS reason, count(*) AS deliveries,
           sum(count(*)) OVER (PARTITION BY date_trunc('day', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', app, platform) AS total
    FROM deliveries
    GROUP BY 1, 2, 3, 4, 5
) s
WHERE status IN ('invalid_token', 'rejected', 'expired', 'dead_lettered');

-- Every provider attempt by outcome and reason, per provider/day, with its
-- share of that provider's attempts that day (retries included).
CREATE OR REPLACE VIEW attempt_error_rates_daily AS
SELECT day, provider, outcome, reason, attempts,
       round(attempts::numeric / total, 6) AS share_of_attempts
FROM (
    SELECT date_trunc('day', attempted_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day,
           provider, outcome, COALESCE(provider_reason, '') AS reason, count(*) AS attempts,
           sum(count(*)) OVER (PARTITION BY date_trunc('day', attempted_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC', provider) AS total
    FROM delivery_attempts
    GROUP BY 1, 2, 3, 4
) s;

-- Enqueue → accepted latency per app/platform/hour, in milliseconds.
CREATE OR REPLACE VIEW delivery_latency_hourly AS
SELECT date_trunc('hour', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
       app, platform, count(*) AS accepted,
       percentile_cont(0.50) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - enqueued_at) * 1000) AS p50_ms,
       percentile_cont(0.90) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - enqueued_at) * 1000) AS p90_ms,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - enqueued_at) * 1000) AS p99_ms
FROM deliveries
WHERE accepted_at IS NOT NULL AND enqueued_at IS NOT NULL
GROUP BY 1, 2, 3;

-- Provider round trip per provider/hour, in milliseconds (every attempt).
CREATE OR REPLACE VIEW attempt_latency_hourly AS
SELECT date_trunc('hour', attempted_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
       provider, count(*) AS attempts,
       percentile_cont(0.50) WITHIN GROUP (ORDER BY latency_ms) AS p50_ms,
       percentile_cont(0.90) WITHIN GROUP (ORDER BY latency_ms) AS p90_ms,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms) AS p99_ms
FROM delivery_attempts
WHERE latency_ms IS NOT NULL
GROUP BY 1, 2;

-- Tokens invalidated per app/platform/reason/day.
CREATE OR REPLACE VIEW tokens_invalidated_daily AS
SELECT date_trunc('day', invalidated_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day,
       app, platform, COALESCE(invalid_reason, '') AS reason, count(*) AS tokens
FROM devices
WHERE invalidated_at IS NOT NULL
GROUP BY 1, 2, 3, 4;
