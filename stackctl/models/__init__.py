"""Any Hugging Face model: its profile derived from config.json (derive), where that config
comes from (source)."""
