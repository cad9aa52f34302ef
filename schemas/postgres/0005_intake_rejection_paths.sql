-- PushFleet 0005: every rejected message says which field made it so.
--
-- intake_rejections now holds every message a worker could not turn into
-- deliveries, from any topic it consumes (notifications, retry tiers,
-- devices, receipts), and every record PostgreSQL or Kafka refused
-- (`write_failed`, `dead_letter_failed`, `processing_failed`). `kind` is the
-- named reason (see README "Bad input"), `field_path` the JSON path of the
-- offending field (`$` for the whole message, NULL where no field is to blame).
ALTER TABLE intake_rejections ADD COLUMN IF NOT EXISTS field_path text;

CREATE INDEX IF NOT EXISTS intake_rejections_received_at ON intake_rejections (received_at);

-- Rejections per day, topic and reason: what analysts and alerts read.
CREATE OR REPLACE VIEW intake_rejections_daily AS
SELECT date_trunc('day', received_at) AS day,
       kafka_topic                     AS topic,
       kind,
       count(*)                        AS messages,
       max(received_at)                AS last_seen
FROM intake_rejections
GROUP BY 1, 2, 3;
