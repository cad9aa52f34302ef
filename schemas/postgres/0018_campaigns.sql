-- Campaigns: a tag on every delivery row, a kill switch, a funnel per
-- campaign, and stale devices.
--
-- * `deliveries.campaign` (and `delivery_attempt_log.campaign`): the
--   notification's `campaign`, NULL for a notification without one. The
--   partial index serves one campaign's rows (the funnel, `pushfleet campaign
--   status`, the cancel sweep) and costs a row without a campaign nothing: a
--   partial index is only maintained for the rows its predicate admits.
-- * `cancelled`, a new final status: a delivery of a cancelled campaign that
--   was not sent. A failure status, so `pushfleet_status_rank` (0016) gives it
--   NULL like the other failures (its CASE has no branch for it): a receipt
--   never moves it on.
-- * `campaign_cancellations`: the kill switch's state, written by `pushfleet
--   campaign cancel` / `resume`, read by every worker each second.
-- * Views: `campaign_funnel`, `stale_devices`; `delivery_funnel_hourly`
--   counts `cancelled`; `delivery_attempts` shows the campaign.
--
-- Upgrading: ADD COLUMN without a default rewrites nothing; the CHECK
-- constraint is validated over every deliveries row (one sequential read, as
-- 0016 did); the campaign index starts empty (no existing row has a campaign).

ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS campaign text;
ALTER TABLE delivery_attempt_log ADD COLUMN IF NOT EXISTS campaign text;
CREATE INDEX IF NOT EXISTS deliveries_campaign_idx ON deliveries (campaign, created_at)
    WHERE campaign IS NOT NULL;

ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_status_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check CHECK (status IN (
    'pending', 'retrying', 'parked', 'accepted', 'delivered', 'opened',
    'invalid_token', 'rejected', 'expired', 'dead_lettered', 'cancelled'));

-- One row per cancellation; a resume closes it (`resumed_at`), a later cancel
-- opens a new one, so the history stays. At most one open row per campaign:
-- the set every worker holds in memory is `WHERE resumed_at IS NULL`, which
-- the partial unique index answers without reading the history.
CREATE TABLE IF NOT EXISTS campaign_cancellations (
    id                   bigserial   PRIMARY KEY,
    campaign             text        NOT NULL CHECK (octet_length(campaign) BETWEEN 1 AND 128),
    reason               text,
    cancelled_by         text        NOT NULL,
    cancelled_at         timestamptz NOT NULL DEFAULT now(),
    -- Rows the command moved to `cancelled` (not-final ones already in the ledger).
    deliveries_cancelled bigint      NOT NULL DEFAULT 0,
    resumed_at           timestamptz,
    resumed_by           text
);
CREATE UNIQUE INDEX IF NOT EXISTS campaign_cancellations_open_idx ON campaign_cancellations (campaign)
    WHERE resumed_at IS NULL;

-- Every provider request, as 0012 made it, with the campaign.
CREATE OR REPLACE VIEW delivery_attempts AS
SELECT notification_id, created_at, token, attempt, attempted_at, outcome, provider,
       provider_status, provider_reason, latency_ms, worker, tier, campaign
FROM delivery_attempt_log
UNION ALL
SELECT notification_id, created_at, token, 1, first_attempt_at,
       CASE WHEN status IN ('delivered', 'opened') THEN 'accepted' ELSE status END,
       CASE platform WHEN 'ios' THEN 'apns' WHEN 'android' THEN 'fcm' WHEN 'web' THEN 'webpush'
                     WHEN 'huawei' THEN 'hms' ELSE platform END,
       provider_status, provider_reason, first_attempt_latency_ms, first_attempt_worker, NULL::text, campaign
FROM deliveries
WHERE first_attempt_latency_ms IS NOT NULL;

CREATE OR REPLACE FUNCTION pushfleet_delivery_attempts_insert() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO delivery_attempt_log (notification_id, created_at, token, attempt, attempted_at, outcome, provider,
                                      provider_status, provider_reason, latency_ms, worker, tier, campaign)
    VALUES (NEW.notification_id, NEW.created_at, NEW.token, NEW.attempt, NEW.attempted_at, NEW.outcome, NEW.provider,
            NEW.provider_status, NEW.provider_reason, NEW.latency_ms, NEW.worker, NEW.tier, NEW.campaign);
    RETURN NEW;
END;
$$;

-- The funnel of 0016, with cancelled deliveries counted (not in_progress).
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
       count(*) FILTER (WHERE status IN ('pending', 'retrying', 'parked')) AS in_progress,
       count(*) FILTER (WHERE status = 'cancelled')          AS cancelled
FROM deliveries
GROUP BY 1, 2, 3;

-- One row per (campaign, platform): the campaign's deliveries as the ledger
-- has them. A filter on campaign reaches deliveries_campaign_idx.
CREATE OR REPLACE VIEW campaign_funnel AS
SELECT campaign, platform,
       count(*)                                              AS deliveries,
       count(accepted_at)                                    AS accepted,
       count(delivered_at)                                   AS delivered,
       count(opened_at)                                      AS opened,
       count(*) FILTER (WHERE status = 'invalid_token')      AS invalid_token,
       count(*) FILTER (WHERE status = 'rejected')           AS rejected,
       count(*) FILTER (WHERE status = 'expired')            AS expired,
       count(*) FILTER (WHERE status = 'dead_lettered')      AS dead_lettered,
       count(*) FILTER (WHERE status = 'cancelled')          AS cancelled,
       count(*) FILTER (WHERE status IN ('pending', 'retrying', 'parked')) AS in_progress,
       round((percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - created_at)))::numeric, 3) AS p50_seconds,
       round((percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM accepted_at - created_at)))::numeric, 3) AS p99_seconds,
       min(first_attempt_at)                                 AS first_send,
       max(last_attempt_at)                                  AS last_send,
       min(created_at)                                       AS first_created,
       max(created_at)                                       AS last_created
FROM deliveries
WHERE campaign IS NOT NULL
GROUP BY 1, 2;

-- Devices by app and platform: how many are valid, how many of those were not
-- seen (registered or re-registered) for `stale_after` (left out of user-id
-- fan-out), and how many devices, valid or not, `pushfleet maintain` would
-- remove at `remove_after`. The view uses the defaults of
-- `registry.stale_after_days` and `registry.remove_after_days`; call the
-- function with your own when you changed them.
CREATE OR REPLACE FUNCTION pushfleet_stale_devices(stale_after interval, remove_after interval)
RETURNS TABLE (app text, platform text, valid_devices bigint, stale bigint, removable bigint, oldest_last_seen timestamptz)
LANGUAGE sql STABLE AS $$
    SELECT d.app, d.platform,
           count(*) FILTER (WHERE d.invalidated_at IS NULL),
           count(*) FILTER (WHERE d.invalidated_at IS NULL AND d.last_seen_at < now() - stale_after),
           count(*) FILTER (WHERE d.last_seen_at < now() - remove_after
                              AND COALESCE(d.invalidated_at, d.last_seen_at) < now() - remove_after),
           min(d.last_seen_at) FILTER (WHERE d.invalidated_at IS NULL)
    FROM devices d
    GROUP BY 1, 2
$$;

CREATE OR REPLACE VIEW stale_devices AS
SELECT * FROM pushfleet_stale_devices(interval '30 days', interval '270 days');
