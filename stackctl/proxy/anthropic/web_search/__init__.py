"""Anthropic's `web_search` server tool, run by the proxy: the tool's blocks (tool.py), the
model -> search -> model loop (loop.py) and the search backends (search_backend.py: the
interface; ddgs_search.py, searxng_search.py)."""
