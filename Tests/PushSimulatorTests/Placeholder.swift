// Placeholder; delete once PushSimulatorTests has real tests.
