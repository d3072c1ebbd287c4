"""OpenAI chat-completion stream chunks, as the Anthropic translation reads them per token.

msgspec Structs, not pydantic models: this runs once per token per stream, and a vLLM chunk
decodes into these in ~0.4 us against ~3 us for the equivalent pydantic models (measured
with benchmarks/proxy_overhead.py's chunks). Lenient like the reply models in openai.py:
unknown fields are ignored and most fields are optional, because backends differ (vLLM adds
`reasoning_content`/`reasoning` and `stop_reason`, llama.cpp and SGLang omit others).

To read one more field (say `usage.prompt_tokens_details.cached_tokens`), add it here with a
default; the decoder picks it up, and absent stays the default.
"""

from __future__ import annotations

import msgspec


class FunctionCallDelta(msgspec.Struct):
    name: str | None = None
    arguments: str | None = None


class ToolCallDelta(msgspec.Struct):
    index: int = 0
    id: str | None = None
    function: FunctionCallDelta | None = None


class Delta(msgspec.Struct):
    content: str | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None  # newer vLLM spells it this way
    tool_calls: list[ToolCallDelta] | None = None

    @property
    def thinking(self) -> str | None:
        return self.reasoning_content or self.reasoning


class ChunkChoice(msgspec.Struct):
    index: int = 0
    delta: Delta = msgspec.field(default_factory=Delta)
    finish_reason: str | None = None
    stop_reason: str | int | None = None  # vLLM: the stop string (or token id) that matched


class PromptTokensDetails(msgspec.Struct):
    cached_tokens: int | None = None


class ChunkUsage(msgspec.Struct):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # vLLM with --enable-prompt-tokens-details, on the last usage chunk only.
    prompt_tokens_details: PromptTokensDetails | None = None


class ChatCompletionChunk(msgspec.Struct):
    id: str = ""
    model: str = ""
    choices: list[ChunkChoice] = msgspec.field(default_factory=list)
    usage: ChunkUsage | None = None


class MalformedChunk(ValueError):
    """The backend sent a data event that is not a chat-completion chunk."""


_DECODER = msgspec.json.Decoder(ChatCompletionChunk)


def decode_chunk(payload: bytes) -> ChatCompletionChunk:
    """One SSE event's data as a chunk; raises MalformedChunk."""
    try:
        return _DECODER.decode(payload)
    except msgspec.DecodeError as error:  # ValidationError is a DecodeError
        raise MalformedChunk(str(error)) from None
