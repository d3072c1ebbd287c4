"""A SearXNG instance (self-hosted, or on an air-gapped LAN): its JSON API, no key.

The instance must allow the JSON format (`search.formats: [html, json]` in its settings.yml);
otherwise it answers 403, reported here as "unavailable" with that hint in the log.
"""

from __future__ import annotations

from typing import Any

import httpx2 as httpx

from stackctl.proxy.anthropic.web_search.search_backend import SearchError, SearchResult


def map_searxng_results(payload: Any) -> list[SearchResult]:
    if not isinstance(payload, dict) or not isinstance(payload.get("results"), list):
        raise SearchError("SearXNG reply has no results list", reason="unavailable")
    results = []
    for item in payload["results"]:
        if not isinstance(item, dict) or not item.get("url"):
            continue
        published = item.get("publishedDate")
        results.append(
            SearchResult(
                url=str(item["url"]),
                title=str(item.get("title") or item["url"]).strip(),
                snippet=str(item.get("content") or "").strip(),
                page_age=str(published) if published else None,
            )
        )
    return results


class SearxngSearch:
    name = "searxng"

    def __init__(self, base_url: str, *, timeout_s: float, transport: Any = None) -> None:
        self.base_url = base_url.rstrip("/")
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout_s),
            headers={"accept": "application/json"},
            transport=transport,
        )

    async def search(self, query: str, *, max_results: int) -> list[SearchResult]:
        try:
            reply = await self._client.get("/search", params={"q": query, "format": "json"})
        except httpx.TimeoutException:
            raise SearchError(f"SearXNG at {self.base_url} timed out", reason="timeout") from None
        except httpx.HTTPError as error:
            raise SearchError(
                f"SearXNG at {self.base_url} is not reachable ({type(error).__name__})",
                reason="unavailable",
            ) from None
        if reply.status_code == 429:
            raise SearchError(f"SearXNG at {self.base_url} rate limited us", reason="rate_limited")
        if reply.status_code != 200:
            hint = (
                " (is the json format enabled in its settings.yml?)"
                if reply.status_code == 403
                else ""
            )
            raise SearchError(
                f"SearXNG at {self.base_url} answered {reply.status_code}{hint}",
                reason="unavailable",
            )
        try:
            payload = reply.json()
        except ValueError:
            raise SearchError("SearXNG reply is not JSON", reason="unavailable") from None
        return map_searxng_results(payload)[:max_results]

    async def aclose(self) -> None:
        await self._client.aclose()
