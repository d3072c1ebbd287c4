"""stackctl: one GPU box -> a private, secure, observable LLM endpoint for coding agents."""

__version__ = "0.1.0"
