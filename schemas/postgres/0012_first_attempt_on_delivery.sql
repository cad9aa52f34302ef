-- Issue 18: a first try that ends its delivery is kept on the delivery row.
--
-- Almost every delivery is one request whose answer is final (accepted, a dead
-- token, a refusal). Its attempt row repeated the delivery row (status,
-- provider status and reason, first_attempt_at) and added only the round trip
-- and the worker, at about 4 µs of server CPU and a third of the WAL per
-- notification. Such an attempt now lives on its `deliveries` row
-- (`first_attempt_latency_ms`, `first_attempt_worker`; a non-NULL latency
-- means "this row holds its first attempt"). Every other attempt (a transient
-- answer, a retry, one whose row may already exist) is appended, as before,
-- to the table renamed here `delivery_attempt_log`.
--
-- `delivery_attempts` becomes a view over both, with the same columns and one
-- row per provider request as before: the views, the report and analysts'
-- queries read it unchanged.

ALTER TABLE IF EXISTS delivery_attempts RENAME TO delivery_attempt_log;

-- The partitions follow the parent's name (`pushfleet maintain` finds a day's
-- partitions by `<parent>_YYYYMMDD`).
DO $$
DECLARE r record;
BEGIN
    FOR r IN
        SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'delivery_attempt_log'::regclass AND c.relname LIKE 'delivery\_attempts\_%'
    LOOP
        EXECUTE format('ALTER TABLE %I RENAME TO %I', r.relname,
                       'delivery_attempt_log_' || substr(r.relname, length('delivery_attempts_') + 1));
    END LOOP;
END;
$$;

ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS first_attempt_latency_ms double precision;
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS first_attempt_worker text;

-- One BRIN for the times a range is asked of: created_at (as before), and
-- for the attempts kept on the rows their attempted_at (first_attempt_at) and
-- its hour, which the attempt views filter on. Rows are written in about the
-- order of both, and a BRIN entry costs next to nothing to keep.
DROP INDEX IF EXISTS deliveries_created_brin;
CREATE INDEX IF NOT EXISTS deliveries_times_brin ON deliveries USING brin (
    created_at, first_attempt_at, (date_trunc('hour', first_attempt_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'));

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
        FOREACH parent IN ARRAY ARRAY['deliveries', 'delivery_attempt_log'] LOOP
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

-- Every provider request: the logged attempts, and the first attempts kept on
-- their delivery rows (outcome from the row's status: a receipt moves
-- `accepted` on to `delivered`/`opened`, the attempt's outcome stays `accepted`).
CREATE OR REPLACE VIEW delivery_attempts AS
SELECT notification_id, created_at, token, attempt, attempted_at, outcome, provider,
       provider_status, provider_reason, latency_ms, worker, tier
FROM delivery_attempt_log
UNION ALL
SELECT notification_id, created_at, token, 1, first_attempt_at,
       CASE WHEN status IN ('delivered', 'opened') THEN 'accepted' ELSE status END,
       CASE platform WHEN 'ios' THEN 'apns' WHEN 'android' THEN 'fcm' WHEN 'web' THEN 'webpush'
                     WHEN 'huawei' THEN 'hms' ELSE platform END,
       provider_status, provider_reason, first_attempt_latency_ms, first_attempt_worker, NULL::text
FROM deliveries
WHERE first_attempt_latency_ms IS NOT NULL;

-- The views over attempts followed the rename to the log; point them at the
-- view of every attempt again (same definitions as 0002 and 0008).
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

CREATE OR REPLACE VIEW attempt_latency_hourly AS
SELECT date_trunc('hour', attempted_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
       provider, count(*) AS attempts,
       percentile_cont(0.50) WITHIN GROUP (ORDER BY latency_ms) AS p50_ms,
       percentile_cont(0.90) WITHIN GROUP (ORDER BY latency_ms) AS p90_ms,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms) AS p99_ms
FROM delivery_attempts
WHERE latency_ms IS NOT NULL
GROUP BY 1, 2;

CREATE OR REPLACE VIEW retry_attempts_daily AS
SELECT date_trunc('day', attempted_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day,
       provider, COALESCE(tier, 'intake') AS tier,
       count(*)                                       AS attempts,
       count(*) FILTER (WHERE outcome = 'accepted')   AS accepted,
       count(*) FILTER (WHERE outcome IN ('transient', 'transport_error', 'auth_failure', 'unknown')) AS failed_again
FROM delivery_attempts
GROUP BY 1, 2, 3;

-- Workers of an older release (a rolling upgrade) still insert into
-- `delivery_attempts`: their rows go to the log.
CREATE OR REPLACE FUNCTION pushfleet_delivery_attempts_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO delivery_attempt_log (notification_id, created_at, token, attempt, attempted_at, outcome, provider,
                                      provider_status, provider_reason, latency_ms, worker, tier)
    VALUES (NEW.notification_id, NEW.created_at, NEW.token, NEW.attempt, NEW.attempted_at, NEW.outcome, NEW.provider,
            NEW.provider_status, NEW.provider_reason, NEW.latency_ms, NEW.worker, NEW.tier);
    RETURN NEW;
END;
$$;
DROP TRIGGER IF EXISTS delivery_attempts_insert ON delivery_attempts;
CREATE TRIGGER delivery_attempts_insert
    INSTEAD OF INSERT ON delivery_attempts
    FOR EACH ROW EXECUTE FUNCTION pushfleet_delivery_attempts_insert();
