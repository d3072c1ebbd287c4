"""Anthropic Messages API request models: what `/v1/messages` accepts.

Unknown top-level fields (metadata, service_tier, context_management, ...) are ignored so new
client versions keep working; unknown *content block* types are rejected with the field path,
because silently dropping content would change what the model sees.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer


class _Lenient(BaseModel):
    # allow_inf_nan: a number too big for a float (1e999) is a client error, not a temperature.
    # cache_strings: keys repeat from request to request; prompt text does not.
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False, cache_strings="keys")


class TextBlock(_Lenient):
    type: Literal["text"]
    text: str


class Base64ImageSource(_Lenient):
    type: Literal["base64"]
    media_type: str
    data: str


class UrlImageSource(_Lenient):
    type: Literal["url"]
    url: str


class ImageBlock(_Lenient):
    type: Literal["image"]
    source: Annotated[Base64ImageSource | UrlImageSource, Field(discriminator="type")]


class ToolUseBlock(_Lenient):
    type: Literal["tool_use"]
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class ToolReferenceBlock(_Lenient):
    """Claude Code's ToolSearch result: the named deferred tool is loaded from here on."""

    type: Literal["tool_reference"]
    tool_name: str


ToolResultContent = Annotated[
    TextBlock | ImageBlock | ToolReferenceBlock, Field(discriminator="type")
]


class ToolResultBlock(_Lenient):
    type: Literal["tool_result"]
    tool_use_id: str
    content: str | list[ToolResultContent] | None = None
    is_error: bool = False


class ThinkingBlock(_Lenient):
    type: Literal["thinking"]
    thinking: str
    signature: str | None = None


class RedactedThinkingBlock(_Lenient):
    type: Literal["redacted_thinking"]
    data: str = ""


class ServerToolUseBlock(_Lenient):
    """A search the proxy ran in an earlier turn, sent back by the client with the history."""

    type: Literal["server_tool_use"]
    id: str
    name: str
    input: dict[str, Any] = Field(default_factory=dict)


class WebSearchResult(_Lenient):
    type: Literal["web_search_result"]
    url: str
    title: str = ""
    # Opaque to clients; the proxy's own results carry their snippet in it (anthropic/web_search/tool.py).
    encrypted_content: str = ""
    page_age: str | None = None


class WebSearchError(_Lenient):
    type: Literal["web_search_tool_result_error"]
    error_code: str


class WebSearchToolResultBlock(_Lenient):
    type: Literal["web_search_tool_result"]
    tool_use_id: str
    content: list[WebSearchResult] | WebSearchError


ContentBlock = Annotated[
    TextBlock
    | ImageBlock
    | ToolUseBlock
    | ToolResultBlock
    | ThinkingBlock
    | RedactedThinkingBlock
    | ServerToolUseBlock
    | WebSearchToolResultBlock,
    Field(discriminator="type"),
]


class Message(_Lenient):
    # "system" is not in Anthropic's schema, but Claude Code sends inline system messages.
    role: Literal["user", "assistant", "system"]
    content: str | list[ContentBlock]


class Tool(_Lenient):
    name: str
    description: str | None = None
    # Server tools (web search, ...) have a `type` and no schema; custom tools need one.
    type: str | None = None
    input_schema: dict[str, Any] | None = None
    # Web-search server tool options (the proxy runs the searches: web_search.py).
    max_uses: int | None = None
    allowed_domains: list[str] | None = None
    blocked_domains: list[str] | None = None
    # Loaded only once a tool_reference names it (Claude Code's ToolSearch).
    defer_loading: bool = False

    @property
    def is_custom(self) -> bool:
        return self.type in (None, "custom")


class ToolChoice(_Lenient):
    type: Literal["auto", "any", "tool", "none"]
    name: str | None = None
    disable_parallel_tool_use: bool | None = None


class ThinkingConfig(_Lenient):
    type: Literal["enabled", "disabled", "adaptive"]
    budget_tokens: int | None = None


class OutputConfig(_Lenient):
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None


class CountTokensRequest(_Lenient):
    model: str
    messages: list[Message] = Field(min_length=1)
    system: str | list[TextBlock] | None = None
    tools: list[Tool] | None = None
    tool_choice: ToolChoice | None = None
    thinking: ThinkingConfig | None = None


class MessagesRequest(CountTokensRequest):
    max_tokens: int = Field(ge=1)
    stop_sequences: list[str] | None = None
    stream: bool = False
    temperature: float | None = Field(default=None, ge=0)
    top_p: float | None = Field(default=None, ge=0, le=1)
    top_k: int | None = Field(default=None, ge=0)
    metadata: dict[str, Any] | None = None  # accepted and ignored: nothing to forward it to
    output_config: OutputConfig | None = None


# ---- replies -------------------------------------------------------------------------------


class ReplyText(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ReplyThinking(BaseModel):
    type: Literal["thinking"] = "thinking"
    thinking: str
    # Local models sign nothing; an empty signature keeps SDK models valid.
    signature: str = ""


class ReplyToolUse(BaseModel):
    type: Literal["tool_use"] = "tool_use"
    id: str
    name: str
    input: dict[str, Any]


class ReplyServerToolUse(BaseModel):
    type: Literal["server_tool_use"] = "server_tool_use"
    id: str
    name: str
    input: dict[str, Any]


class ReplyWebSearchToolResult(BaseModel):
    type: Literal["web_search_tool_result"] = "web_search_tool_result"
    tool_use_id: str
    content: list[WebSearchResult] | WebSearchError


class ServerToolUsage(BaseModel):
    web_search_requests: int = 0
    web_fetch_requests: int = 0


class ReplyUsage(BaseModel):
    """Anthropic's usage: `input_tokens` are the prompt tokens read from no cache; the whole
    prompt is input + cache_creation + cache_read. vLLM caches every prompt on its own and bills
    nothing for it: what it prefilled stays input (cache_creation 0, where vLLM's own
    /v1/messages reports its created_cache_tokens, which Claude Code would price as writes)."""

    input_tokens: int
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    output_tokens: int
    # Only in replies that searched: plain replies keep their exact shape.
    server_tool_use: ServerToolUsage | None = None

    @model_serializer(mode="wrap")
    def _without_empty_server_tool_use(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if data.get("server_tool_use") is None:
            data.pop("server_tool_use", None)
        return data

    @property
    def prompt_tokens(self) -> int:
        """The whole prompt, cached or not (what the backend reported as prompt_tokens)."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens


# pause_turn: the proxy's search loop hit its turn cap; sending the reply back continues it.
StopReason = Literal["end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn"]


class MessageReply(BaseModel):
    id: str
    type: Literal["message"] = "message"
    role: Literal["assistant"] = "assistant"
    model: str
    content: list[
        ReplyThinking | ReplyText | ReplyToolUse | ReplyServerToolUse | ReplyWebSearchToolResult
    ]
    stop_reason: StopReason
    stop_sequence: str | None = None
    usage: ReplyUsage


class CountTokensReply(BaseModel):
    input_tokens: int
