"""Search backends for the proxy's web-search tool: ddgs (default, no key) or SearXNG.

Anything with the `SearchBackend` shape can be plugged into `create_app(search_backend=...)`.
"""

from __future__ import annotations

from stackctl.proxy.search.base import SearchBackend, SearchError, SearchResult
from stackctl.proxy.search.ddgs_backend import DdgsSearch
from stackctl.proxy.search.searxng import SearxngSearch
from stackctl.proxy.settings import ProxySettings

__all__ = [
    "DdgsSearch",
    "SearchBackend",
    "SearchError",
    "SearchResult",
    "SearxngSearch",
    "build_search_backend",
]


def build_search_backend(settings: ProxySettings) -> SearchBackend | None:
    """The configured backend; None when web search is off."""
    if settings.search_backend == "searxng":
        assert settings.searxng_url  # build_settings refuses searxng without a URL
        return SearxngSearch(settings.searxng_url, timeout_s=settings.search_timeout_s)
    if settings.search_backend == "ddgs":
        return DdgsSearch(timeout_s=settings.search_timeout_s)
    return None
