"""OpenAI chat-completion models: the request the proxy sends and the replies it reads
(the streamed chunks, read per token, are openai_stream.py's).

Reply models are lenient (extra fields allowed, most fields optional) because backends differ:
vLLM adds `reasoning_content`/`reasoning` and `stop_reason`, llama.cpp and SGLang omit others.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class FunctionCall(BaseModel):
    name: str
    arguments: str


class ToolCall(BaseModel):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class ImageUrl(BaseModel):
    url: str


class TextPart(BaseModel):
    type: Literal["text"] = "text"
    text: str


class ImagePart(BaseModel):
    type: Literal["image_url"] = "image_url"
    image_url: ImageUrl


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | list[TextPart | ImagePart] | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None


class FunctionDefinition(BaseModel):
    name: str
    description: str | None = None
    parameters: dict[str, Any]


class ToolDefinition(BaseModel):
    type: Literal["function"] = "function"
    function: FunctionDefinition


class NamedToolChoice(BaseModel):
    type: Literal["function"] = "function"
    function: dict[str, str]


class StreamOptions(BaseModel):
    # Usage once, in the last chunk. Not `continuous_usage_stats`: usage on every chunk costs
    # vLLM itself TTFT and throughput under load (measured on an H100, docs/gpu.md), and only
    # message_start's input count would use it; that one is estimated (window_fit.py).
    include_usage: bool = True


class ChatRequest(BaseModel):
    model: str
    messages: list[ChatMessage]
    max_tokens: int | None = None
    stream: bool = False
    stream_options: StreamOptions | None = None
    stop: list[str] | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None  # a vLLM/SGLang/llama.cpp extension
    tools: list[ToolDefinition] | None = None
    tool_choice: Literal["auto", "required", "none"] | NamedToolChoice | None = None
    parallel_tool_calls: bool | None = None
    reasoning_effort: str | None = None
    chat_template_kwargs: dict[str, Any] | None = None

    def to_json(self) -> bytes:
        return self.model_dump_json(exclude_none=True).encode()


# ---- replies -------------------------------------------------------------------------------


class _Reply(BaseModel):
    model_config = ConfigDict(extra="allow")


class PromptTokensDetails(_Reply):
    cached_tokens: int | None = None


class Usage(_Reply):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # vLLM with --enable-prompt-tokens-details: how many prompt tokens its prefix cache served.
    # Absent without the flag, and on releases before vllm-project/vllm#44383 when none were.
    prompt_tokens_details: PromptTokensDetails | None = None

    @property
    def cached_tokens(self) -> int:
        details = self.prompt_tokens_details
        return (details.cached_tokens or 0) if details is not None else 0


class FunctionCallDelta(_Reply):
    name: str | None = None
    arguments: str | None = None


class ReplyToolCall(_Reply):
    id: str = ""
    function: FunctionCallDelta


class _AssistantText(_Reply):
    """What a reply message and a stream delta share: text and the model's reasoning."""

    content: str | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None  # newer vLLM spells it this way

    @property
    def thinking(self) -> str | None:
        return self.reasoning_content or self.reasoning


class ReplyMessage(_AssistantText):
    tool_calls: list[ReplyToolCall] | None = None


class Choice(_Reply):
    index: int = 0
    message: ReplyMessage
    finish_reason: str | None = None
    stop_reason: str | int | None = None  # vLLM: the stop string (or token id) that matched


class ChatCompletion(_Reply):
    id: str = ""
    model: str = ""
    choices: list[Choice] = Field(default_factory=list)
    usage: Usage | None = None


class TokenizeReply(_Reply):
    count: int


class TokenizeChatRequest(BaseModel):
    """vLLM's `/tokenize` renders chat messages with the served chat template, then counts."""

    model: str
    messages: list[ChatMessage]
    tools: list[ToolDefinition] | None = None
    add_generation_prompt: bool = True
    chat_template_kwargs: dict[str, Any] | None = None

    def to_json(self) -> bytes:
        return self.model_dump_json(exclude_none=True).encode()
