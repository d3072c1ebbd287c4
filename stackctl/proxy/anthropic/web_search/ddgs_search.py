"""DuckDuckGo (and the other engines the `ddgs` package scrapes): no key, no account.

ddgs is synchronous, so each search runs in a worker thread; the caller's timeout abandons a
thread that hangs (ddgs's own timeout ends it soon after).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio.to_thread

from stackctl.proxy.anthropic.web_search.search_backend import SearchError, SearchResult

# (query, max_results) -> ddgs's result dicts: {"title", "href", "body", "date"?}
TextSearch = Callable[[str, int], list[dict[str, Any]]]


def map_ddgs_results(items: list[dict[str, Any]]) -> list[SearchResult]:
    """ddgs text/news dicts -> results; items without a URL are useless to cite and dropped."""
    results = []
    for item in items:
        url = str(item.get("href") or item.get("url") or "").strip()
        if not url:
            continue
        date = item.get("date")
        results.append(
            SearchResult(
                url=url,
                title=str(item.get("title") or url).strip(),
                snippet=str(item.get("body") or "").strip(),
                page_age=str(date).strip() if date else None,
            )
        )
    return results


class DdgsSearch:
    name = "ddgs"

    def __init__(self, *, timeout_s: float, text_search: TextSearch | None = None) -> None:
        self._timeout_s = timeout_s
        self._text_search = text_search or self._ddgs_text

    async def search(self, query: str, *, max_results: int) -> list[SearchResult]:
        items = await anyio.to_thread.run_sync(
            self._checked_search, query, max_results, abandon_on_cancel=True
        )
        return map_ddgs_results(items)

    async def aclose(self) -> None:
        return None

    def _checked_search(self, query: str, max_results: int) -> list[dict[str, Any]]:
        from ddgs.exceptions import DDGSException, RatelimitException, TimeoutException

        try:
            return self._text_search(query, max_results)
        except RatelimitException as error:
            raise SearchError(f"DuckDuckGo rate limit: {error}", reason="rate_limited") from None
        except TimeoutException as error:
            raise SearchError(f"DuckDuckGo timed out: {error}", reason="timeout") from None
        except DDGSException as error:
            if "no results" in str(error).lower():
                return []  # ddgs raises instead of returning an empty list
            raise SearchError(f"DuckDuckGo search failed: {error}", reason="unavailable") from None

    def _ddgs_text(self, query: str, max_results: int) -> list[dict[str, Any]]:
        from ddgs import DDGS  # imported late: the proxy starts without it when search is off

        # ddgs takes whole seconds; the caller's own (float) timeout is the real bound.
        with DDGS(timeout=max(1, round(self._timeout_s))) as client:
            return client.text(query, max_results=max_results)
