-- PushFleet 0017: a replay keeps the dead letter in the story, and each clock
-- that ends at acceptance has a view named for where it starts.
--
-- Replays. `pushfleet dlq replay` reopens dead-lettered deliveries, and the
-- replayed message starts a new attempt series (attempt 1 on the intake
-- topic). The ledger row now describes that series: the replay sets
-- `attempts` to 0 and `first_attempt_at` to NULL, so `attempts` never passes
-- `retry.max_attempts` and first → last attempt spans one series. What the
-- row said before (the series that was dead-lettered: its attempts, its
-- first attempt, when and why it was dead-lettered) is kept here, one row per
-- delivery per replay. A delivery's attempts over all its series are its
-- `attempts` plus the `attempts` of its rows here; every attempt is also in
-- `delivery_attempts` (a series' attempts are those at or after its
-- `replayed_at` and before the next one's).
--
-- Rows replayed before this migration keep what 0007 left: `attempts`
-- summed over their series and no row here (the ledger does not say where
-- one series ended).
CREATE TABLE IF NOT EXISTS delivery_replays (
    notification_id  uuid        NOT NULL,
    created_at       timestamptz NOT NULL,
    token            text        NOT NULL,
    app              text        NOT NULL,
    platform         text        NOT NULL,
    -- The replay: when, and the dead letter it re-published (topic/partition/offset).
    replayed_at      timestamptz NOT NULL,
    replay_of        text        NOT NULL,
    -- The series it ended: when it was dead-lettered (the row's final_at),
    -- its attempts and first attempt, and its reason (provider_reason, detail).
    dead_lettered_at timestamptz,
    attempts         integer     NOT NULL,
    first_attempt_at timestamptz,
    provider_reason  text,
    detail           text,
    PRIMARY KEY (notification_id, token, created_at, replayed_at)
);
CREATE INDEX IF NOT EXISTS delivery_replays_replayed_idx ON delivery_replays (replayed_at);
CREATE INDEX IF NOT EXISTS delivery_replays_dead_lettered_idx ON delivery_replays (dead_lettered_at);
CREATE INDEX IF NOT EXISTS delivery_replays_created_idx ON delivery_replays (created_at);

-- The kind of a dead-lettered delivery, from its provider reason and detail:
-- one definition for the views and the report.
CREATE OR REPLACE FUNCTION pushfleet_dead_letter_kind(provider_reason text, detail text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN provider_reason = 'ResponseLost' THEN 'response_lost'
                WHEN detail LIKE 'retries exhausted%' THEN 'exhausted'
                ELSE 'other' END
$$;

-- Every dead letter, replayed or not: the deliveries dead-lettered now, and
-- the dead-lettered series a replay reopened (by the day they were
-- dead-lettered). `replayed` counts those replayed since (0 for intake
-- rejections, which are not replayed into the ledger).
CREATE OR REPLACE VIEW dead_letters_daily AS
SELECT date_bin('1 day', received_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS day,
       'intake'::text AS source, COALESCE(app, '') AS app, kind,
       count(*) AS messages, min(reason) AS example_reason, 0::bigint AS replayed
FROM intake_rejections
GROUP BY 1, 2, 3, 4
UNION ALL
SELECT date_bin('1 day', at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS day,
       'delivery'::text AS source, app, kind,
       count(*) AS messages, min(reason) AS example_reason, count(*) FILTER (WHERE replayed) AS replayed
FROM (
    SELECT final_at AS at, app, pushfleet_dead_letter_kind(provider_reason, detail) AS kind,
           COALESCE(detail, provider_reason) AS reason, false AS replayed
    FROM deliveries
    WHERE status = 'dead_lettered'
    UNION ALL
    SELECT dead_lettered_at, app, pushfleet_dead_letter_kind(provider_reason, detail),
           COALESCE(detail, provider_reason), true
    FROM delivery_replays
) d
GROUP BY 1, 2, 3, 4;

-- What came of each replay, one row per delivery per replay: `result` is
-- `recovered` (accepted, delivered or opened now), `dead_lettered_again`
-- (now, or before a later replay of the same delivery), `failed` (now
-- invalid_token, rejected or expired), `in_progress` (pending, retrying,
-- parked) or `unknown` (its ledger row is past retention).
CREATE OR REPLACE VIEW delivery_replay_outcomes AS
SELECT r.notification_id, r.created_at, r.token, r.app, r.platform, r.replayed_at, r.replay_of,
       r.dead_lettered_at, r.attempts AS attempts_before, d.status,
       CASE WHEN r.next_replay IS NOT NULL OR d.status = 'dead_lettered' THEN 'dead_lettered_again'
            WHEN d.status IN ('accepted', 'delivered', 'opened') THEN 'recovered'
            WHEN d.status IN ('invalid_token', 'rejected', 'expired') THEN 'failed'
            WHEN d.status IN ('pending', 'retrying', 'parked') THEN 'in_progress'
            ELSE 'unknown' END AS result
FROM (
    SELECT *, lead(replayed_at) OVER (PARTITION BY notification_id, token, created_at ORDER BY replayed_at) AS next_replay
    FROM delivery_replays
) r
LEFT JOIN deliveries d
       ON d.notification_id = r.notification_id AND d.token = r.token AND d.created_at = r.created_at;

-- The replays per day of the replay; `attempts_before` sums the attempts of
-- the series they reopened.
CREATE OR REPLACE VIEW delivery_replays_daily AS
SELECT date_bin('1 day', replayed_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS day,
       app, platform,
       count(*)                                                 AS replayed,
       count(*) FILTER (WHERE result = 'recovered')             AS recovered,
       count(*) FILTER (WHERE result = 'dead_lettered_again')   AS dead_lettered_again,
       count(*) FILTER (WHERE result = 'failed')                AS failed,
       count(*) FILTER (WHERE result = 'in_progress')           AS in_progress,
       sum(attempts_before)                                     AS attempts_before
FROM delivery_replay_outcomes
GROUP BY 1, 2, 3;

-- Attempts per final delivery, counted per series (see above); `replayed`
-- counts the deliveries among them whose dead letter was replayed (their
-- attempts here are the replay's series).
CREATE OR REPLACE VIEW delivery_retries_daily AS
SELECT date_bin('1 day', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS day,
       app, platform, attempts,
       count(*)                                                   AS deliveries,
       count(*) FILTER (WHERE status IN ('accepted', 'delivered', 'opened')) AS accepted,
       count(*) FILTER (WHERE status = 'dead_lettered')           AS dead_lettered,
       round(avg(extract(epoch FROM last_attempt_at - first_attempt_at))::numeric, 3) AS avg_seconds_retrying,
       round(max(extract(epoch FROM last_attempt_at - first_attempt_at))::numeric, 3) AS max_seconds_retrying,
       count(*) FILTER (WHERE replays > 0)                        AS replayed
FROM deliveries
WHERE status NOT IN ('pending', 'retrying', 'parked') AND attempts > 0
GROUP BY 1, 2, 3, 4;

-- Clocks. Two times a delivery can be measured from end at accepted_at:
--  * created_at, the notification's own time, set by its producer: what a
--    user waited, the producer's delays and clock included;
--  * enqueued_at, the Kafka timestamp of the intake message the delivery
--    first came in: what the fleet took (its queue, its sends, its retries).
-- Each has a view named for it, bucketed by the hour of created_at like the
-- funnel (the hours the BRIN finds), in milliseconds. The worker's histograms
-- are named the same way (pushfleet_created_to_accepted_seconds,
-- pushfleet_enqueued_to_accepted_seconds; docs/metrics.md).
CREATE OR REPLACE VIEW delivery_created_to_accepted_hourly AS
SELECT date_bin('1 hour', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS hour,
       app, platform, count(*) AS accepted,
       percentile_cont(0.50) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - created_at) * 1000) AS p50_ms,
       percentile_cont(0.90) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - created_at) * 1000) AS p90_ms,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - created_at) * 1000) AS p99_ms
FROM deliveries
WHERE accepted_at IS NOT NULL
GROUP BY 1, 2, 3;

CREATE OR REPLACE VIEW delivery_enqueued_to_accepted_hourly AS
SELECT date_bin('1 hour', created_at, TIMESTAMPTZ '2000-01-01 00:00:00+00') AS hour,
       app, platform, count(*) AS accepted,
       percentile_cont(0.50) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - enqueued_at) * 1000) AS p50_ms,
       percentile_cont(0.90) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - enqueued_at) * 1000) AS p90_ms,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - enqueued_at) * 1000) AS p99_ms
FROM deliveries
WHERE accepted_at IS NOT NULL AND enqueued_at IS NOT NULL
GROUP BY 1, 2, 3;

-- The name queries and dashboards were written against: the enqueued clock.
CREATE OR REPLACE VIEW delivery_latency_hourly AS
SELECT * FROM delivery_enqueued_to_accepted_hourly;
COMMENT ON VIEW delivery_latency_hourly IS
    'The same as delivery_enqueued_to_accepted_hourly (enqueued_at → accepted_at); delivery_created_to_accepted_hourly measures from created_at.';
