-- Issue 18: the per-statement receipts merge (0004) looks before it updates.
--
-- Almost no outcome statement meets a receipt that overtook it, yet 0004's
-- AFTER INSERT trigger ran its UPDATE for every statement. That UPDATE joins
-- the transition table with `deliveries`, a partitioned table: PostgreSQL
-- plans it at each call (a transition table is new each time) and sets up an
-- index scan on every partition before it finds nothing. With batches of 32
-- rows (`bench pipeline --batch-size 32`, perf on the server) that set-up and
-- the trigger took a quarter of the server's CPU; at full batches, about 1 µs
-- per notification.
--
-- Now the trigger first asks `delivery_receipts` (one table, its primary key)
-- whether any inserted row has a receipt, and runs the same UPDATE only then.
-- The result is the same: receipt batches take the advisory lock exclusively,
-- and the insert holds it shared from before its first row until its commit
-- (0004), so no receipt can commit between the look and the UPDATE.

CREATE OR REPLACE FUNCTION pushfleet_deliveries_merge_receipts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1
                     FROM inserted_deliveries i
                     JOIN delivery_receipts x ON x.notification_id = i.notification_id AND x.token = i.token) THEN
        RETURN NULL;
    END IF;
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
