-- PushFleet 0007: a DLQ replay re-sends.
--
-- `pushfleet dlq replay` is an operator's explicit decision to send again what
-- was dead-lettered. It moves the chosen deliveries from `dead_lettered` back
-- to `pending` (so the ledger no longer suppresses them) and leaves a trail:
-- `replayed_at`, `replay_of` (the dead letter's topic/partition/offset) and
-- `replays`. The replayed message starts a new attempt series (attempt 1 on
-- the intake topic); its attempts are those with attempted_at >= replayed_at.
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS replayed_at timestamptz;
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS replay_of text;
ALTER TABLE deliveries ADD COLUMN IF NOT EXISTS replays integer NOT NULL DEFAULT 0;

-- Every dead letter that was replayed, once per message: a later run with
-- another filter does not replay it again (unless asked with --again).
CREATE TABLE IF NOT EXISTS dlq_replays (
    dlq_topic       text        NOT NULL,
    dlq_partition   integer     NOT NULL,
    dlq_offset      bigint      NOT NULL,
    notification_id uuid,
    reason          text,
    ledger_rows     integer     NOT NULL DEFAULT 0,
    replayed_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (dlq_topic, dlq_partition, dlq_offset)
);
