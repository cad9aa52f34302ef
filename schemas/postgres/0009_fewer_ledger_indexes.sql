-- Issue 18: two fewer index insertions per delivery row.
--
-- deliveries_status_idx (status, created_at) indexed every row, though only
-- unfinished rows (pending, retrying) are ever looked up by status: the
-- operator's "what is still in flight" question. Almost every row is final
-- when first written, so the partial index below stays small and costs a
-- final row nothing.
--
-- deliveries_app_created_idx (app, created_at) duplicated what
-- deliveries_funnel_idx (hour, app, platform) already serves for a time range
-- and an app; no query of the worker, the views or the report needs it.
DROP INDEX IF EXISTS deliveries_status_idx;
DROP INDEX IF EXISTS deliveries_app_created_idx;
CREATE INDEX IF NOT EXISTS deliveries_unfinished_idx ON deliveries (created_at)
    WHERE status IN ('pending', 'retrying');

