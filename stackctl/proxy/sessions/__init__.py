"""Per-session prefix stability: each conversation's requests compared with the one before
(what vLLM's prefix cache can reuse), the report of where prefixes broke, and the opt-in capture."""
