-- Issue 18: the hourly delivery views find their hours through a BRIN, not a
-- covering btree written for every delivery row.
--
-- deliveries_funnel_idx (0002) gave delivery_funnel_hourly and
-- delivery_latency_hourly an index-only scan over the hours asked for. It
-- cost every delivery row a btree entry of about 80 bytes (the INCLUDE
-- columns rule out deduplication), though its key was the same for every row
-- of an hour, app and platform: about 10 % of PostgreSQL's CPU per
-- notification in `bench pipeline` (docs/benchmarks.md). Rows are written in
-- about the order of their hours, so a BRIN over those hours finds the same
-- block ranges for a few bytes per 128 pages. The views then read the heap of
-- those blocks: on 1M rows over a day, the last 3 hours' funnel takes about
-- 55 ms where it took 35 (docs/analytics.md has the others).
--
-- The same BRIN also covers the hour of accepted_at, which
-- delivery_accepted_hourly filters on and no index served (a whole scan).
--
-- Upgrading a large ledger: building the BRIN reads each partition once and
-- holds a SHARE lock on it meanwhile, so the workers' inserts into that
-- partition wait for it (0.6 s per million rows here); apply it in a
-- quiet hour.

CREATE INDEX IF NOT EXISTS deliveries_hours_brin ON deliveries USING brin (
    created_at, first_attempt_at,
    (date_trunc('hour', first_attempt_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'),
    (date_trunc('hour', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'),
    (date_trunc('hour', accepted_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'));
DROP INDEX IF EXISTS deliveries_times_brin;
DROP INDEX IF EXISTS deliveries_funnel_idx;

-- Without the btree the planner must know that an hour range holds a few
-- (hour, app, platform) groups, not one per row: else it sorts every row of
-- the range before it groups them (twice as slow as hashing them). It learns
-- that from these statistics, which only an ANALYZE of the partitioned table
-- itself gathers (autovacuum analyzes the partitions, never their parent):
-- here, and daily by `pushfleet maintain`.
CREATE STATISTICS IF NOT EXISTS deliveries_created_hour_groups (ndistinct)
    ON (date_trunc('hour', created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'), app, platform FROM deliveries;
CREATE STATISTICS IF NOT EXISTS deliveries_accepted_hour_groups (ndistinct)
    ON (date_trunc('hour', accepted_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'), app, platform FROM deliveries;
ANALYZE deliveries;
