"""The web_search server tool, the pure parts: what the model is offered, what the client sees.

Anthropic runs `web_search_*` server tools itself; a local model cannot, so the proxy offers the
model a plain `web_search(query)` function, runs the searches (loop.py), and reports
them to the client as the real blocks: `server_tool_use` and `web_search_tool_result`.

`encrypted_content` is opaque to clients and ours to fill: it carries the result's snippet, so
when the client sends the conversation back, to_openai can show the model what it saw before
(with exactly the text of the live turn, which keeps the backend's prefix cache warm).
"""

from __future__ import annotations

import base64
import json
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

from stackctl.proxy.anthropic.web_search.search_backend import SearchResult
from stackctl.proxy.errors import InvalidRequest
from stackctl.proxy.protocol.anthropic import (
    Tool,
    WebSearchError,
    WebSearchResult,
    WebSearchToolResultBlock,
)
from stackctl.proxy.protocol.openai import FunctionDefinition, ToolDefinition

# A client that sets no max_uses still gets a bounded loop.
DEFAULT_MAX_USES = 10
RESULTS_PER_SEARCH = 5
MAX_QUERY_CHARS = 400
_SNIPPET_CHARS = 1200
_CONTENT_PREFIX = "stackctl.v1."


@dataclass(frozen=True)
class WebSearchSpec:
    """The client's web_search tool: its name and the limits it sets."""

    name: str
    max_uses: int
    allowed_domains: tuple[str, ...] = ()
    blocked_domains: tuple[str, ...] = ()

    @property
    def max_turns(self) -> int:
        # Every search, plus the turn told "max uses exceeded", plus the answer.
        return self.max_uses + 2


def find_web_search_tool(tools: list[Tool] | None) -> WebSearchSpec | None:
    """The request's web-search server tool (any version: web_search_20250305, ...), if any."""
    found = None
    for position, tool in enumerate(tools or []):
        if tool.is_custom or not (tool.type or "").startswith("web_search_"):
            continue
        if tool.allowed_domains and tool.blocked_domains:
            raise InvalidRequest(
                f"tools.{position}: allowed_domains and blocked_domains cannot both be set",
                param=f"tools.{position}",
            )
        if tool.max_uses is not None and tool.max_uses < 1:
            raise InvalidRequest(
                f"tools.{position}.max_uses: must be at least 1", param=f"tools.{position}.max_uses"
            )
        found = WebSearchSpec(
            name=tool.name,
            max_uses=tool.max_uses or DEFAULT_MAX_USES,
            allowed_domains=tuple(_domain(d) for d in tool.allowed_domains or () if _domain(d)),
            blocked_domains=tuple(_domain(d) for d in tool.blocked_domains or () if _domain(d)),
        )
    if found is not None and any(t.is_custom and t.name == found.name for t in tools or []):
        return None  # the client brings its own tool of that name: its calls are the client's
    return found


def search_function(spec: WebSearchSpec) -> ToolDefinition:
    description = (
        "Search the web for current information: recent events, documentation, versions, facts "
        "after your training data. Returns the top results (title, URL, date, snippet). Cite "
        "the URLs you rely on."
    )
    if spec.allowed_domains:
        description += f" Results only come from: {', '.join(spec.allowed_domains)}."
    return ToolDefinition(
        function=FunctionDefinition(
            name=spec.name,
            description=description,
            parameters={
                "type": "object",
                "properties": {"query": {"type": "string", "description": "The search query."}},
                "required": ["query"],
            },
        )
    )


def server_tool_use_id() -> str:
    return f"srvtoolu_{secrets.token_hex(12)}"


# ---- domains ----------------------------------------------------------------------------------


def _domain(text: str) -> str:
    """'https://www.Example.com/path' -> 'example.com' (subdomains match it)."""
    text = text.strip().lower()
    host = urlsplit(text if "//" in text else f"//{text}").hostname or ""
    return host.removeprefix("www.")


def _matches(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)


def domain_allowed(url: str, spec: WebSearchSpec) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    if not host:
        return False
    if spec.allowed_domains and not any(_matches(host, d) for d in spec.allowed_domains):
        return False
    return not any(_matches(host, d) for d in spec.blocked_domains)


def backend_query(query: str, spec: WebSearchSpec) -> str:
    """One allowed domain becomes a `site:` hint (DuckDuckGo and SearXNG both understand it);
    with several, OR-ed hints confuse some engines, so results are only filtered afterwards."""
    if len(spec.allowed_domains) == 1:
        return f"{query} site:{spec.allowed_domains[0]}"
    return query


# ---- blocks and the model's view of them -----------------------------------------------------


def result_blocks(results: list[SearchResult]) -> list[WebSearchResult]:
    return [
        WebSearchResult(
            type="web_search_result",
            url=result.url,
            title=result.title,
            encrypted_content=encode_content(result),
            page_age=result.page_age,
        )
        for result in results
    ]


def encode_content(result: SearchResult) -> str:
    payload = {"snippet": result.snippet[:_SNIPPET_CHARS]}
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    return _CONTENT_PREFIX + base64.urlsafe_b64encode(data).decode()


def decode_snippet(encrypted_content: str) -> str | None:
    """The snippet we stored; None for content we did not write (e.g. from api.anthropic.com)."""
    if not encrypted_content.startswith(_CONTENT_PREFIX):
        return None
    try:
        data = base64.urlsafe_b64decode(encrypted_content.removeprefix(_CONTENT_PREFIX))
        snippet = json.loads(data).get("snippet")
    except (ValueError, AttributeError):
        return None
    return snippet if isinstance(snippet, str) else None


_ERROR_TEXT = {
    "max_uses_exceeded": "no more web searches are allowed for this request (max_uses reached); "
    "answer with the results you already have",
    "too_many_requests": "the search service is rate limiting; do not search again now",
    "query_too_long": f"the query is too long (at most {MAX_QUERY_CHARS} characters)",
    "invalid_tool_input": 'the call needs a non-empty string "query"',
    "unavailable": "the search service is unavailable",
}


def tool_result_text(block: WebSearchToolResultBlock) -> str:
    """What the model reads for one search, live or replayed from the history."""
    content = block.content
    if isinstance(content, WebSearchError):
        reason = _ERROR_TEXT.get(content.error_code, content.error_code)
        return (
            f"Web search failed ({content.error_code}): {reason}. Answer from what you know, "
            "and tell the user that the web search did not work."
        )
    if not content:
        return "The web search found no results."
    lines = ["Web search results:"]
    for number, result in enumerate(content, start=1):
        lines += ["", f"[{number}] {result.title or result.url}", f"URL: {result.url}"]
        if result.page_age:
            lines.append(f"Published: {result.page_age}")
        snippet = decode_snippet(result.encrypted_content)
        if snippet:
            lines.append(snippet)
    return "\n".join(lines)
