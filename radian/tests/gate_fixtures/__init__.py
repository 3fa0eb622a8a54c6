"""Fixtures for the gate's tests: a tiny Python project, real git worlds, scripted reviewers."""
