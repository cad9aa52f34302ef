-- PushFleet 0004: receipts that overtook the provider outcome are merged once
-- per INSERT statement instead of once per inserted row.
--
-- 0002's row trigger ran for every row the workers insert (a batch of up to
-- 256 per statement): one shared advisory-lock call and one lookup in
-- delivery_receipts per row, a fifth of the server's CPU at full rate, almost
-- always to find nothing. Now:
--  * BEFORE INSERT, per statement: the shared advisory lock, once, before any
--    row is written (the same order against receipt batches as before: a
--    receipt batch holding the lock exclusively has committed before the
--    merge below looks, or it waits for the insert's commit and finds the
--    rows with its own UPDATE);
--  * AFTER INSERT, per statement: one join of the inserted rows (transition
--    table) with delivery_receipts; matching rows get their receipt times
--    through an UPDATE, whose row trigger (0002's function, unchanged) moves
--    the status forward and sets final_at exactly as the insert branch did;
--  * the row trigger still runs on every UPDATE, and on an INSERT only for a
--    row that carries receipt times itself.
-- An upsert that updates an existing row is not in the insert transition
-- table; the existing row already has its receipts (0002's UPDATE branch
-- keeps them).

CREATE OR REPLACE FUNCTION pushfleet_deliveries_lock_for_receipts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(pushfleet_receipts_lock_key());
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION pushfleet_deliveries_merge_receipts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE deliveries d
       SET delivered_at = LEAST(d.delivered_at, r.delivered, r.opened),
           opened_at = LEAST(d.opened_at, r.opened)
      FROM (SELECT i.notification_id, i.token, i.created_at,
                   min(x.at) FILTER (WHERE x.kind = 'delivered') AS delivered,
                   min(x.at) FILTER (WHERE x.kind = 'opened') AS opened
              FROM inserted_deliveries i
              JOIN delivery_receipts x ON x.notification_id = i.notification_id AND x.token = i.token
             GROUP BY i.notification_id, i.token, i.created_at) r
     WHERE d.notification_id = r.notification_id AND d.token = r.token AND d.created_at = r.created_at
       AND (d.delivered_at IS DISTINCT FROM LEAST(d.delivered_at, r.delivered, r.opened)
            OR d.opened_at IS DISTINCT FROM LEAST(d.opened_at, r.opened));
    RETURN NULL;
END;
$$;

DROP TRIGGER IF EXISTS deliveries_keep_receipts ON deliveries;
DROP TRIGGER IF EXISTS deliveries_keep_receipts_on_update ON deliveries;
DROP TRIGGER IF EXISTS deliveries_keep_receipts_on_insert ON deliveries;
DROP TRIGGER IF EXISTS deliveries_lock_for_receipts ON deliveries;
DROP TRIGGER IF EXISTS deliveries_merge_receipts ON deliveries;

CREATE TRIGGER deliveries_keep_receipts_on_update
    BEFORE UPDATE ON deliveries
    FOR EACH ROW EXECUTE FUNCTION pushfleet_deliveries_keep_receipts();
CREATE TRIGGER deliveries_keep_receipts_on_insert
    BEFORE INSERT ON deliveries
    FOR EACH ROW WHEN (NEW.delivered_at IS NOT NULL OR NEW.opened_at IS NOT NULL)
    EXECUTE FUNCTION pushfleet_deliveries_keep_receipts();
CREATE TRIGGER deliveries_lock_for_receipts
    BEFORE INSERT ON deliveries
    FOR EACH STATEMENT EXECUTE FUNCTION pushfleet_deliveries_lock_for_receipts();
CREATE TRIGGER deliveries_merge_receipts
    AFTER INSERT ON deliveries
    REFERENCING NEW TABLE AS inserted_deliveries
    FOR EACH STATEMENT EXECUTE FUNCTION pushfleet_deliveries_merge_receipts();
