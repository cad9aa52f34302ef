-- Issue 19: browsers (Web Push) and Huawei phones (Push Kit) in the registry.
--
-- A browser registers a PushSubscription: its endpoint is the row's token
-- (the ledger's key too), and the two keys the payload is encrypted for live
-- beside it. Every other platform leaves them null; a web row the worker
-- learned of only from a 404/410 has none either (it is invalid until a
-- registration brings them).
ALTER TABLE devices DROP CONSTRAINT IF EXISTS devices_platform_check;
ALTER TABLE devices ADD CONSTRAINT devices_platform_check
    CHECK (platform IN ('ios', 'android', 'web', 'huawei'));
ALTER TABLE devices ADD COLUMN IF NOT EXISTS web_p256dh text;
ALTER TABLE devices ADD COLUMN IF NOT EXISTS web_auth text;
ALTER TABLE devices DROP CONSTRAINT IF EXISTS devices_web_keys_check;
ALTER TABLE devices ADD CONSTRAINT devices_web_keys_check
    CHECK (platform = 'web' OR (web_p256dh IS NULL AND web_auth IS NULL));
