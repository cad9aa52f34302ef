-- Device registry fed by PREFIX.devices: registered_at is the time of the
-- LATEST registration (what the APNs 410 timestamp rule compares against);
-- first_registered_at keeps the first one.
ALTER TABLE devices ADD COLUMN IF NOT EXISTS first_registered_at timestamptz;
UPDATE devices SET first_registered_at = registered_at WHERE first_registered_at IS NULL;
