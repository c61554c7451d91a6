"""The test suite: one package, shared set-up in tests.support."""
