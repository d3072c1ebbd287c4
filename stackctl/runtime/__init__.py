"""Runtimes that run a stack's services: Compose (production) and native processes."""
