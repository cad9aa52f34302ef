-- PushFleet 0008: every question about retries, rejections and dead letters has a view.

-- The retry tier an attempt's message came from (`5s`, `1m`, `10m`, …); NULL
-- for an attempt made from the intake topic (first tries, DLQ replays).
ALTER TABLE delivery_attempts ADD COLUMN IF NOT EXISTS tier text;

-- How many attempts deliveries needed, per app/platform/day (of created_at),
-- and how long those that needed more than one spent between their first and
-- their last attempt. Final deliveries only (the in-flight ones have not
-- finished counting).
CREATE OR REPLACE VIEW delivery_retries_daily AS
SELECT date_trunc('day', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day,
       app, platform, attempts,
       count(*)                                                   AS deliveries,
       count(*) FILTER (WHERE status IN ('accepted', 'delivered', 'opened')) AS accepted,
       count(*) FILTER (WHERE status = 'dead_lettered')           AS dead_lettered,
       round(avg(extract(epoch FROM last_attempt_at - first_attempt_at))::numeric, 3) AS avg_seconds_retrying,
       round(max(extract(epoch FROM last_attempt_at - first_attempt_at))::numeric, 3) AS max_seconds_retrying
FROM deliveries
WHERE status NOT IN ('pending', 'retrying') AND attempts > 0
GROUP BY 1, 2, 3, 4;

-- Provider requests made from each retry tier per day: retry volume and what came of it.
CREATE OR REPLACE VIEW retry_attempts_daily AS
SELECT date_trunc('day', attempted_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day,
       provider, COALESCE(tier, 'intake') AS tier,
       count(*)                                       AS attempts,
       count(*) FILTER (WHERE outcome = 'accepted')   AS accepted,
       count(*) FILTER (WHERE outcome IN ('transient', 'transport_error', 'auth_failure', 'unknown')) AS failed_again
FROM delivery_attempts
GROUP BY 1, 2, 3;

-- Everything that ended outside the ledger's happy path and needs a person:
-- messages refused at intake (one row each, with the reason and field) and
-- deliveries dead-lettered (retries exhausted, response lost, refused by
-- Kafka), per day, with the dead-letter reason (`pushfleet-reason`).
CREATE OR REPLACE VIEW dead_letters_daily AS
SELECT date_trunc('day', received_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day,
       'intake'::text AS source, COALESCE(app, '') AS app, kind,
       count(*) AS messages, min(reason) AS example_reason
FROM intake_rejections
GROUP BY 1, 2, 3, 4
UNION ALL
SELECT date_trunc('day', final_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day,
       'delivery'::text AS source, app,
       CASE WHEN provider_reason = 'ResponseLost' THEN 'response_lost'
            WHEN detail LIKE 'retries exhausted%' THEN 'exhausted'
            ELSE 'other' END AS kind,
       count(*) AS messages, min(COALESCE(detail, provider_reason)) AS example_reason
FROM deliveries
WHERE status = 'dead_lettered'
GROUP BY 1, 2, 3, 4;

-- The funnel by when things happened to deliveries, not when they were created:
-- accepted per hour of accepted_at, with created_at → accepted latency.
CREATE OR REPLACE VIEW delivery_accepted_hourly AS
SELECT date_trunc('hour', accepted_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS hour,
       app, platform,
       count(*) AS accepted,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - created_at)))::numeric, 3) AS p50_seconds,
       round((percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - created_at)))::numeric, 3) AS p99_seconds
FROM deliveries
WHERE accepted_at IS NOT NULL
GROUP BY 1, 2, 3;

COMMENT ON VIEW delivery_funnel_hourly IS
    'Buckets by the hour of created_at (when the producer made the notification); delivery_accepted_hourly buckets by accepted_at.';
