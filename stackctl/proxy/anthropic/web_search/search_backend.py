"""What every search backend provides: `search(query, max_results)` -> results, or SearchError.

The proxy applies the timeout, the domain filters and the result cap itself, so a backend only
has to ask its service and map the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol


@dataclass(frozen=True)
class SearchResult:
    url: str
    title: str
    snippet: str = ""
    # As the service reports it ("2025-04-30", "3 days ago"); None when unknown.
    page_age: str | None = None


class SearchError(Exception):
    """The search could not be done; `reason` decides the error the model is shown."""

    def __init__(
        self, message: str, *, reason: Literal["unavailable", "rate_limited", "timeout"]
    ) -> None:
        super().__init__(message)
        self.reason = reason


class SearchBackend(Protocol):
    name: str

    async def search(self, query: str, *, max_results: int) -> list[SearchResult]:
        """Results best first (maybe none); raises SearchError when the service fails."""
        ...

    async def aclose(self) -> None: ...
