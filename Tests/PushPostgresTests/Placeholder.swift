// Placeholder; delete once PushPostgresTests has real tests.
