// Placeholder; delete once PushCoreTests has real tests.
