"""Helpers shared by the test suites (fixtures live in conftest.py; the machinery lives here)."""
