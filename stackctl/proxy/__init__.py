"""The filter-proxy: Anthropic Messages <-> OpenAI translation, stream fixes, keys, aliases,
metrics. Self-contained: it never imports the orchestration code (it ships alone in its image).

Nothing is imported here: `stackctl --help` mounts the proxy's CLI, which must not load the
app (uvicorn, aiohttp, pydantic models). Import `stackctl.proxy.app.create_app` and
`stackctl.proxy.settings` directly.
"""
