"""OpenAI Responses API models (`/v1/responses`): the parts of a request the proxy reads or
rewrites, and the events it writes itself when a stream fails.

Open models (extra fields kept): everything the proxy does not touch reaches the backend as the
client sent it, so a client's new fields keep working. Only what is rewritten is typed: tools
(namespaces flattened), reasoning items (encrypted content) and function calls (their namespace).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag


class _Open(BaseModel):
    # allow_inf_nan: a number too big for a float (1e999) is a client error, not a temperature.
    model_config = ConfigDict(extra="allow", allow_inf_nan=False, cache_strings="keys")


# ---- tools ---------------------------------------------------------------------------------


class FunctionTool(_Open):
    type: Literal["function"]
    name: str


class OtherTool(_Open):
    """Any other tool type (custom, web_search, mcp, ...): passed on as it came."""

    type: str


def _tool_kind(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in ("function", "namespace") else "other"


NamespaceMember = Annotated[
    Annotated[FunctionTool, Tag("function")] | Annotated[OtherTool, Tag("other")],
    Discriminator(lambda value: "function" if _tool_kind(value) == "function" else "other"),
]


class NamespaceTool(_Open):
    """A group of tools under one name (Codex sends its MCP servers and sub-agent tools so);
    the model calls a member as `<namespace>__<name>` (vLLM's own flat spelling)."""

    type: Literal["namespace"]
    name: str
    description: str | None = None
    tools: list[NamespaceMember] = Field(default_factory=list)


Tool = Annotated[
    Annotated[FunctionTool, Tag("function")]
    | Annotated[NamespaceTool, Tag("namespace")]
    | Annotated[OtherTool, Tag("other")],
    Discriminator(_tool_kind),
]


class FunctionToolChoice(_Open):
    type: Literal["function"]
    name: str


# ---- input items ---------------------------------------------------------------------------


class TextPart(_Open):
    type: str | None = None
    text: str = ""


class ReasoningItem(_Open):
    """The model's reasoning, sent back in later turns (`summary`, `content`), or as the
    opaque `encrypted_content` OpenAI's servers issue and only they can read."""

    type: Literal["reasoning"]
    summary: list[TextPart] = Field(default_factory=list)
    content: list[TextPart] | None = None
    encrypted_content: str | None = None

    @property
    def readable(self) -> bool:
        return any(part.text for part in [*(self.content or []), *self.summary])


class FunctionCallItem(_Open):
    type: Literal["function_call"]
    name: str
    namespace: str | None = None


class OtherItem(_Open):
    """Messages, tool outputs and anything else: passed on as it came."""

    type: str | None = None


def _item_kind(value: Any) -> str:
    kind = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return kind if kind in ("reasoning", "function_call") else "other"


InputItem = Annotated[
    Annotated[ReasoningItem, Tag("reasoning")]
    | Annotated[FunctionCallItem, Tag("function_call")]
    | Annotated[OtherItem, Tag("other")],
    Discriminator(_item_kind),
]


class ResponsesRequest(_Open):
    model: str
    input: str | list[InputItem]
    stream: bool = False
    max_output_tokens: int | None = Field(default=None, ge=1)
    tools: list[Tool] | None = None
    tool_choice: str | FunctionToolChoice | dict[str, Any] | None = None

    def to_json(self) -> bytes:
        return self.model_dump_json(exclude_unset=True).encode()


# ---- what the proxy writes into a stream ---------------------------------------------------


class ResponseError(BaseModel):
    code: str
    message: str


class ErrorEvent(BaseModel):
    """A stream's failure, as the Responses API announces it (before `response.failed`)."""

    type: Literal["error"] = "error"
    code: str
    message: str
    param: str | None = None
    sequence_number: int


class ResponseFailedEvent(BaseModel):
    """The stream's last event when it fails: the response as created, status `failed`.
    Codex retries a failed response, and compacts on `context_length_exceeded`."""

    type: Literal["response.failed"] = "response.failed"
    sequence_number: int
    response: dict[str, Any]
