"""CLI commands that live outside cli.py; each module exposes `register(app)`."""
