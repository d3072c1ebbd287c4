"""The filter-proxy's test machinery, for any test folder: a scripted vLLM stand-in, a SearXNG
stand-in, ASGI apps served on loopback, hostile request bodies, and a proxy to talk to."""
