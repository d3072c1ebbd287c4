"""Facts about models, on the ground floor: a model's shape read from its config.json (shape),
whether a context and concurrency fit a memory budget (fit), its tool-call family (family); and
any Hugging Face model's profile derived from those (derive), with where its config comes from
(source)."""
