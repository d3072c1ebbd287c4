"""The model backend (vLLM): the pooled client, hints on its errors, the watch on its queue, and
calls whose `max_tokens` fit the model's window."""
