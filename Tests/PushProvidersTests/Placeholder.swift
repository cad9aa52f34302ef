// Placeholder; delete once PushProvidersTests has real tests.
