"""A SearXNG stand-in on loopback: `GET /search?q=...&format=json` answers fixed results.

This machine has no internet, and a test needs exact results anyway. The query picks a mode:
`ratelimited` -> 429, `broken` -> 500, `slow` -> waits 5 s (past the proxy's timeout),
`nothing` -> no results; anything else -> RESULTS (plus one from a blocked-domain test site).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from starlette.types import Receive, Scope, Send

from tests.support.proxy.servers import answer_lifespan

# The proxy's search-time limit in the web-search tests (the `slow` mode waits past it).
SEARCH_TIMEOUT_S = 1.0

RESULTS = [
    {
        "url": "https://docs.example.org/releases/2.4",
        "title": "Release notes 2.4",
        "content": "Version 2.4 adds streaming web search.",
        "publishedDate": "2025-11-20T00:00:00",
        "engine": "duckduckgo",
    },
    {
        "url": "https://blog.example.com/posts/why-2-4",
        "title": "Why we built 2.4",
        "content": "A look behind the release.",
        "publishedDate": None,
        "engine": "bing",
    },
    {"url": "https://spam.invalid/page", "title": "Spam", "content": "buy now"},
]


@dataclass
class FakeSearxng:
    queries: list[str] = field(default_factory=list)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await answer_lifespan(receive, send)
            return
        params = parse_qs(scope["query_string"].decode())
        query = params.get("q", [""])[0]
        if scope["path"] != "/search" or params.get("format") != ["json"]:
            await _reply(send, 404, {"error": "not found"})
            return
        self.queries.append(query)
        if "ratelimited" in query:
            await _reply(send, 429, {"error": "too many requests"})
        elif "broken" in query:
            await _reply(send, 500, {"error": "internal"})
        elif "slow" in query:
            await asyncio.sleep(5)
            await _reply(send, 200, {"query": query, "results": RESULTS})
        elif "nothing" in query:
            await _reply(send, 200, {"query": query, "results": []})
        else:
            await _reply(send, 200, {"query": query, "number_of_results": 3, "results": RESULTS})


async def _reply(send: Send, status: int, payload: dict[str, Any]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": json.dumps(payload).encode()})
