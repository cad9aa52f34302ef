-- PushFleet 0006: dead tokens stay dead, one notification id is one send per device.
--
-- devices: `invalidated_at` is when PushFleet learned a token is dead (the
-- provider's answer, or an unregister message); `provider_invalid_since` is
-- what the provider said (APNs 410 `timestamp`, else the time of the answer).
-- The views count by the former. A registration newer than
-- COALESCE(provider_invalid_since, invalidated_at) revives the token (Apple's
-- 410 rule: a device that registered after the timestamp holds a valid token).
ALTER TABLE devices ADD COLUMN IF NOT EXISTS provider_invalid_since timestamptz;
UPDATE devices SET provider_invalid_since = invalidated_at
WHERE invalidated_at IS NOT NULL AND provider_invalid_since IS NULL
  AND invalid_reason IS DISTINCT FROM 'unregistered';

-- Every notification id the ledger has seen and the created_at its delivery
-- rows are filed under. `deliveries` is partitioned by created_at, so its key
-- includes it; this small unpartitioned table is what makes (id, token) one
-- ledger row whatever created_at a replay carries: a later message with the
-- same id is filed under the first one's created_at. Rows are written with
-- the outcomes and purged by `pushfleet maintain` with the partitions.
CREATE TABLE IF NOT EXISTS notification_ids (
    notification_id uuid        PRIMARY KEY,
    created_at      timestamptz NOT NULL,
    first_seen_at   timestamptz NOT NULL DEFAULT now()
);
-- Purging by age reads a range of mostly increasing values: BRIN costs next to nothing to keep.
CREATE INDEX IF NOT EXISTS notification_ids_created_brin ON notification_ids USING brin (created_at);

-- Ids of the deliveries already in the ledger (upgrades): the first created_at per id.
INSERT INTO notification_ids (notification_id, created_at)
SELECT notification_id, min(created_at) FROM deliveries GROUP BY notification_id
ON CONFLICT (notification_id) DO NOTHING;
