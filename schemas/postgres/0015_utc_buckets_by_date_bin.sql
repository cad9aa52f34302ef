-- Issue 18: UTC hours and days computed by date_bin, not by two time-zone
-- conversions around date_trunc.
--
-- Since 0002 every UTC bucket has been
--     date_trunc('hour', t AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
-- which looks the zone up by name twice and the unit once for every value:
-- about 87 ns a value here, where
--     date_bin('1 hour', t, TIMESTAMPTZ '2000-01-01 00:00:00+00')
-- is integer arithmetic on the microseconds (about 1 ns). Both are immutable
-- and give the same timestamptz for every input, before the origin, at
-- ±infinity and under any session time zone (UTC has no daylight saving;
-- checked on 500,000 random times over 80 years and the edge values, and by
-- AnalyticsViewTests). The cost was paid:
--  * by every delivery row written: deliveries_hours_brin (0014) holds three
--    of these expressions, so each insert computed three;
--  * by the analysts, twice a row read: once for the BRIN's recheck of the
--    hour filter and once for the GROUP BY.
-- So the views, the indexes their filters use and the planner's group
-- statistics move to date_bin together (a filter matches an index only if
-- the expressions are the same). The views' columns keep their names, types
-- and values; a query that compares them with a date_trunc expression of its
-- own still finds the same rows.
--
-- Upgrading a large ledger: like 0014, building the new BRIN reads each
-- deliveries partition once (about 0.6 s per million rows here), and the
-- whole file runs in one transaction that holds a SHARE lock on deliveries
-- until it commits: the workers' outcome writes wait meanwhile (nothing is
-- lost; their in-flight bound stops their polling). To keep that wait short
-- on a ledger of many millions of rows, build the BRIN online first; the
-- CREATE INDEX IF NOT EXISTS below then finds it and builds nothing:
--   CREATE INDEX deliveries_utc_hours_brin ON ONLY deliveries USING brin (<the columns below>);
--   -- for each partition P of deliveries (pg_inherits):
--   CREATE INDEX CONCURRENTLY P_utc_hours_brin ON P USING brin (<the same columns>);
--   ALTER INDEX deliveries_utc_hours_brin ATTACH PARTITION P_utc_hours_brin;
-- (checked on a ledger of 11 partitions: the parent index is valid once all
-- are attached, and the migration then adds no second BRIN). The ANALYZE at
-- the end samples at most 30,000 rows of each table and partition.

-- Indexes first: the new ones, then the old ones dropped.
CREATE INDEX IF NOT EXISTS deliveries_utc_hours_brin ON deliveries USING brin (
    created_at, first_attempt_at,
    (date_bin('1 hour', first_attempt_at, TIMESTAMPTZ '2000-01-01 00:00:00+00')),
    (date_bin('1 hour', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00')),
    (date_bin('1 hour', accepted_at, TIMESTAMPTZ '2000-01-01 00:00:00+00')));
DROP INDEX IF EXISTS deliveries_hours_brin;

CREATE INDEX IF NOT EXISTS delivery_attempt_log_utc_hour_idx ON delivery_attempt_log (
    (date_bin('1 hour', attempted_at, TIMESTAMPTZ '2000-01-01 00:00:00+00')), provider)
    INCLUDE (attempted_at, outcome, provider_reason, latency_ms);
DROP INDEX IF EXISTS delivery_attempts_hour_idx;

CREATE INDEX IF NOT EXISTS devices_invalidated_utc_day_idx ON devices (
    (date_bin('1 day', invalidated_at, TIMESTAMPTZ '2000-01-01 00:00:00+00')), app, platform)
    INCLUDE (invalid_reason) WHERE invalidated_at IS NOT NULL;
DROP INDEX IF EXISTS devices_invalidated_day_idx;

-- The planner's (hour, app, platform) group counts (see 0014), on the new expressions.
DROP STATISTICS IF EXISTS deliveries_created_hour_groups;
DROP STATISTICS IF EXISTS deliveries_accepted_hour_groups;
CREATE STATISTICS IF NOT EXISTS deliveries_created_utc_hour_groups (ndistinct)
    ON (date_bin('1 hour', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00')), app, platform FROM deliveries;
CREATE STATISTICS IF NOT EXISTS deliveries_accepted_utc_hour_groups (ndistinct)
    ON (date_bin('1 hour', accepted_at, TIMESTAMPTZ '2000-01-01 00:00:00+00')), app, platform FROM deliveries;

-- The views, as 0002, 0008 and 0012 left them, with their buckets by date_bin.
CREATE OR REPLACE VIEW delivery_funnel_hourly AS
SELECT date_bin('1 hour', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS hour,
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

CREATE OR REPLACE VIEW delivery_failure_reasons_daily AS
SELECT day, app, platform, status, reason, deliveries,
       round(deliveries::numeric / total, 6) AS share_of_deliveries
FROM (
    SELECT date_bin('1 day', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS day,
           app, platform, status, COALESCE(provider_reason, '') AS reason, count(*) AS deliveries,
           sum(count(*)) OVER (PARTITION BY date_bin('1 day', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), app, platform) AS total
    FROM deliveries
    GROUP BY 1, 2, 3, 4, 5
) s
WHERE status IN ('invalid_token', 'rejected', 'expired', 'dead_lettered');

CREATE OR REPLACE VIEW delivery_latency_hourly AS
SELECT date_bin('1 hour', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS hour,
       app, platform, count(*) AS accepted,
       percentile_cont(0.50) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - enqueued_at) * 1000) AS p50_ms,
       percentile_cont(0.90) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - enqueued_at) * 1000) AS p90_ms,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - enqueued_at) * 1000) AS p99_ms
FROM deliveries
WHERE accepted_at IS NOT NULL AND enqueued_at IS NOT NULL
GROUP BY 1, 2, 3;

CREATE OR REPLACE VIEW tokens_invalidated_daily AS
SELECT date_bin('1 day', invalidated_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS day,
       app, platform, COALESCE(invalid_reason, '') AS reason, count(*) AS tokens
FROM devices
WHERE invalidated_at IS NOT NULL
GROUP BY 1, 2, 3, 4;

CREATE OR REPLACE VIEW delivery_retries_daily AS
SELECT date_bin('1 day', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS day,
       app, platform, attempts,
       count(*)                                                   AS deliveries,
       count(*) FILTER (WHERE status IN ('accepted', 'delivered', 'opened')) AS accepted,
       count(*) FILTER (WHERE status = 'dead_lettered')           AS dead_lettered,
       round(avg(extract(epoch FROM last_attempt_at - first_attempt_at))::numeric, 3) AS avg_seconds_retrying,
       round(max(extract(epoch FROM last_attempt_at - first_attempt_at))::numeric, 3) AS max_seconds_retrying
FROM deliveries
WHERE status NOT IN ('pending', 'retrying') AND attempts > 0
GROUP BY 1, 2, 3, 4;

CREATE OR REPLACE VIEW dead_letters_daily AS
SELECT date_bin('1 day', received_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS day,
       'intake'::text AS source, COALESCE(app, '') AS app, kind,
       count(*) AS messages, min(reason) AS example_reason
FROM intake_rejections
GROUP BY 1, 2, 3, 4
UNION ALL
SELECT date_bin('1 day', final_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS day,
       'delivery'::text AS source, app,
       CASE WHEN provider_reason = 'ResponseLost' THEN 'response_lost'
            WHEN detail LIKE 'retries exhausted%' THEN 'exhausted'
            ELSE 'other' END AS kind,
       count(*) AS messages, min(COALESCE(detail, provider_reason)) AS example_reason
FROM deliveries
WHERE status = 'dead_lettered'
GROUP BY 1, 2, 3, 4;

CREATE OR REPLACE VIEW delivery_accepted_hourly AS
SELECT date_bin('1 hour', accepted_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS hour,
       app, platform,
       count(*) AS accepted,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - created_at)))::numeric, 3) AS p50_seconds,
       round((percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - created_at)))::numeric, 3) AS p99_seconds
FROM deliveries
WHERE accepted_at IS NOT NULL
GROUP BY 1, 2, 3;

CREATE OR REPLACE VIEW attempt_error_rates_daily AS
SELECT day, provider, outcome, reason, attempts,
       round(attempts::numeric / total, 6) AS share_of_attempts
FROM (
    SELECT date_bin('1 day', attempted_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS day,
           provider, outcome, COALESCE(provider_reason, '') AS reason, count(*) AS attempts,
           sum(count(*)) OVER (PARTITION BY date_bin('1 day', attempted_at, TIMESTAMPTZ '2000-01-01 00:00:00+00'), provider) AS total
    FROM delivery_attempts
    GROUP BY 1, 2, 3, 4
) s;

CREATE OR REPLACE VIEW attempt_latency_hourly AS
SELECT date_bin('1 hour', attempted_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS hour,
       provider, count(*) AS attempts,
       percentile_cont(0.50) WITHIN GROUP (ORDER BY latency_ms) AS p50_ms,
       percentile_cont(0.90) WITHIN GROUP (ORDER BY latency_ms) AS p90_ms,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY latency_ms) AS p99_ms
FROM delivery_attempts
WHERE latency_ms IS NOT NULL
GROUP BY 1, 2;

CREATE OR REPLACE VIEW retry_attempts_daily AS
SELECT date_bin('1 day', attempted_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS day,
       provider, COALESCE(tier, 'intake') AS tier,
       count(*)                                       AS attempts,
       count(*) FILTER (WHERE outcome = 'accepted')   AS accepted,
       count(*) FILTER (WHERE outcome IN ('transient', 'transport_error', 'auth_failure', 'unknown')) AS failed_again
FROM delivery_attempts
GROUP BY 1, 2, 3;

-- The new statistics and expression indexes are empty until analyzed.
ANALYZE deliveries;
ANALYZE delivery_attempt_log;
ANALYZE devices;
