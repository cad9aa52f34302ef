// Placeholder; delete once PushFleetEndToEndTests has real tests.
