-- Parked deliveries: a delivery its provider could not take (an open
-- circuit, a rate limit it would wait too long for, a credential that could
-- not be had) is parked on its lane's parked topic, keyed by app and
-- provider, without spending an attempt, until that provider can take it.
-- Its row says so with the status `parked`, which is not final: it moves on
-- to accepted, retrying or a failure status like `retrying` does.

ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_status_check;
ALTER TABLE deliveries ADD CONSTRAINT deliveries_status_check CHECK (status IN (
    'pending', 'retrying', 'parked', 'accepted', 'delivered', 'opened',
    'invalid_token', 'rejected', 'expired', 'dead_lettered'));

-- Receipts move a status forward only: parked ranks with retrying.
CREATE OR REPLACE FUNCTION pushfleet_status_rank(status text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE status WHEN 'pending' THEN 0 WHEN 'retrying' THEN 1 WHEN 'parked' THEN 1 WHEN 'accepted' THEN 2
                       WHEN 'delivered' THEN 3 WHEN 'opened' THEN 4 END
$$;

-- Unfinished rows, the operator's "what is still waiting" question, include parked ones.
DROP INDEX IF EXISTS deliveries_unfinished_idx;
CREATE INDEX IF NOT EXISTS deliveries_unfinished_idx ON deliveries (created_at)
    WHERE status IN ('pending', 'retrying', 'parked');

-- The funnel's in_progress counts parked rows too.
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
       count(*) FILTER (WHERE status IN ('pending', 'retrying', 'parked')) AS in_progress
FROM deliveries
GROUP BY 1, 2, 3;
