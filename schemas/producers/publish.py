#!/usr/bin/env python3
"""Publishes notifications to PushFleet from Python, with any Kafka client.

This one uses confluent-kafka (pip install confluent-kafka). Each argument is
a JSON file holding one notification (schemas/notification.schema.json); with
none, each line of stdin is one. The lane is the topic:

  interactive  <prefix>.notifications       transactional pushes, one-time codes, chat
  bulk         <prefix>.notifications.bulk  campaigns: served with what interactive traffic leaves

Each message is keyed by its first recipient (a user id, a token, or a web
subscription's endpoint), so one recipient's notifications stay ordered, and
the producer is idempotent with acks=all, as PushFleet's own producers are.

  schemas/producers/publish.py --bootstrap-servers kafka:9092 --lane bulk campaign/*.json
"""
import argparse
import json
import sys

from confluent_kafka import Producer


def topic(prefix: str, lane: str) -> str:
    return f"{prefix}.notifications" + (".bulk" if lane == "bulk" else "")


def key(notification: dict) -> bytes:
    recipients = notification.get("recipients") or [{}]
    first = recipients[0] if isinstance(recipients[0], dict) else {}
    value = first.get("user_id") or first.get("token") or first.get("endpoint") or notification.get("id", "")
    return str(value).encode("utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--topic-prefix", default="push")
    parser.add_argument("--lane", choices=["interactive", "bulk"], default="interactive")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()

    texts = [open(path, encoding="utf-8").read() for path in args.files] if args.files else [l for l in sys.stdin if l.strip()]
    producer = Producer({"bootstrap.servers": args.bootstrap_servers, "enable.idempotence": True, "acks": "all"})
    failures = []
    to = topic(args.topic_prefix, args.lane)
    for text in texts:
        notification = json.loads(text)  # PushFleet validates too: a bad one is rejected and dead-lettered
        producer.produce(to, value=text.encode("utf-8"), key=key(notification),
                         on_delivery=lambda err, msg: failures.append(err) if err else None)
        producer.poll(0)
    producer.flush(30)
    if failures:
        print(f"publish: {len(failures)} of {len(texts)} not acknowledged: {failures[0]}", file=sys.stderr)
        return 1
    print(f"published {len(texts)} to {to}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
