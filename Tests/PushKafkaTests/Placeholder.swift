// Placeholder; delete once PushKafkaTests has real tests.
