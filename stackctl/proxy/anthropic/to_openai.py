"""Anthropic Messages request -> OpenAI chat-completion request (pure functions, no I/O)."""

from __future__ import annotations

import json

from stackctl.proxy.anthropic.system_turns import SystemPlacement, conversation
from stackctl.proxy.anthropic.web_search.tool import tool_result_text
from stackctl.proxy.errors import InvalidRequest
from stackctl.proxy.protocol.anthropic import (
    CountTokensRequest,
    ImageBlock,
    Message,
    MessagesRequest,
    ServerToolUseBlock,
    TextBlock,
    ThinkingConfig,
    Tool,
    ToolChoice,
    ToolReferenceBlock,
    ToolResultBlock,
    ToolUseBlock,
    WebSearchToolResultBlock,
)
from stackctl.proxy.protocol.openai import (
    ChatMessage,
    ChatRequest,
    FunctionCall,
    FunctionDefinition,
    ImagePart,
    ImageUrl,
    NamedToolChoice,
    StreamOptions,
    TextPart,
    TokenizeChatRequest,
    ToolCall,
    ToolDefinition,
)

Part = TextPart | ImagePart


def translate_messages_request(
    request: MessagesRequest, served_model: str, placement: SystemPlacement = "in-place"
) -> ChatRequest:
    tools = translate_tools(request.tools, loaded=referenced_tools(request.messages))
    return ChatRequest(
        model=served_model,
        messages=translate_conversation(request, placement),
        max_tokens=request.max_tokens,
        stream=request.stream,
        stream_options=StreamOptions() if request.stream else None,
        stop=request.stop_sequences or None,
        temperature=request.temperature,
        top_p=request.top_p,
        top_k=request.top_k,
        tools=tools,
        tool_choice=translate_tool_choice(request.tool_choice, has_tools=bool(tools)),
        parallel_tool_calls=_parallel_tool_calls(request.tool_choice, has_tools=bool(tools)),
        reasoning_effort=request.output_config.effort if request.output_config else None,
        chat_template_kwargs=translate_thinking(request.thinking),
    )


def translate_count_tokens_request(
    request: CountTokensRequest, served_model: str, placement: SystemPlacement = "in-place"
) -> TokenizeChatRequest:
    return TokenizeChatRequest(
        model=served_model,
        messages=translate_conversation(request, placement),
        tools=translate_tools(request.tools, loaded=referenced_tools(request.messages)),
        chat_template_kwargs=translate_thinking(request.thinking),
    )


def translate_conversation(
    request: CountTokensRequest, placement: SystemPlacement = "in-place"
) -> list[ChatMessage]:
    """The conversation in OpenAI's shape; system text placed as system_turns.py explains."""
    return conversation(request.system, request.messages, _chat_messages, placement)


def _chat_messages(message: Message) -> list[ChatMessage]:
    if message.role == "user":
        return _user_messages(message)
    return _assistant_messages(message)


def _user_messages(message: Message) -> list[ChatMessage]:
    if isinstance(message.content, str):
        return [ChatMessage(role="user", content=message.content)]
    # OpenAI wants tool results as `tool` messages right after the assistant's tool calls,
    # so they go first; the user's own text and images follow as one user message.
    tool_messages: list[ChatMessage] = []
    parts: list[Part] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            text, images = _tool_result_content(block)
            tool_messages.append(
                ChatMessage(role="tool", tool_call_id=block.tool_use_id, content=text)
            )
            parts.extend(images)
        elif isinstance(block, TextBlock):
            if block.text:
                parts.append(TextPart(text=block.text))
        elif isinstance(block, ImageBlock):
            parts.append(_image_part(block))
        # thinking blocks in a user turn carry nothing for the model
    result = tool_messages
    if parts:
        result.append(ChatMessage(role="user", content=_compact(parts)))
    return result


def _tool_result_content(block: ToolResultBlock) -> tuple[str, list[ImagePart]]:
    images: list[ImagePart] = []
    if block.content is None:
        text = ""
    elif isinstance(block.content, str):
        text = block.content
    else:
        texts = []
        for item in block.content:
            if isinstance(item, TextBlock):
                texts.append(item.text)
            elif isinstance(item, ToolReferenceBlock):
                # The tool itself joins the request's tools (translate_tools).
                texts.append(f"Tool loaded: {item.tool_name}")
            else:
                # Tool messages take text only; images ride in the user message after them.
                images.append(_image_part(item))
        text = "\n".join(texts)
    if block.is_error:
        # The model must be told the call failed; OpenAI has no field for it.
        text = f"Error: {text}" if text else "Error"
    return text, images


def _assistant_messages(message: Message) -> list[ChatMessage]:
    """One assistant message, or several when the proxy searched the web mid-turn: OpenAI wants
    each search's `tool` message right after the assistant message that called it."""
    if isinstance(message.content, str):
        return [ChatMessage(role="assistant", content=message.content)]
    answered = {
        block.tool_use_id
        for block in message.content
        if isinstance(block, WebSearchToolResultBlock)
    }
    messages: list[ChatMessage] = []
    parts: list[Part] = []
    tool_calls: list[ToolCall] = []

    def flush() -> None:
        if parts or tool_calls:
            messages.append(
                ChatMessage(
                    role="assistant",
                    content=_compact(parts) if parts else None,
                    tool_calls=list(tool_calls) or None,
                )
            )
        parts.clear()
        tool_calls.clear()

    for block in message.content:
        if isinstance(block, TextBlock):
            if block.text:
                parts.append(TextPart(text=block.text))
        elif isinstance(block, ToolUseBlock | ServerToolUseBlock):
            if isinstance(block, ServerToolUseBlock) and block.id not in answered:
                continue  # a call without its result would leave the model's history unbalanced
            tool_calls.append(
                ToolCall(
                    id=block.id,
                    function=FunctionCall(name=block.name, arguments=json.dumps(block.input)),
                )
            )
        elif isinstance(block, WebSearchToolResultBlock):
            flush()
            messages.append(
                ChatMessage(
                    role="tool", tool_call_id=block.tool_use_id, content=tool_result_text(block)
                )
            )
        elif isinstance(block, ImageBlock):
            parts.append(_image_part(block))
        # thinking / redacted_thinking: never replayed to the model as text
    flush()
    return messages


def _compact(parts: list[Part]) -> str | list[Part]:
    """One text part travels as a plain string, as most chat templates expect."""
    if len(parts) == 1 and isinstance(parts[0], TextPart):
        return parts[0].text
    return parts


def _image_part(block: ImageBlock) -> ImagePart:
    source = block.source
    if source.type == "base64":
        url = f"data:{source.media_type};base64,{source.data}"
    else:
        url = source.url
    return ImagePart(image_url=ImageUrl(url=url))


def referenced_tools(messages: list[Message]) -> frozenset[str]:
    """Deferred tools a ToolSearch result (tool_reference) has loaded in this conversation."""
    names: set[str] = set()
    for message in messages:
        if isinstance(message.content, str):
            continue
        for block in message.content:
            if isinstance(block, ToolResultBlock) and isinstance(block.content, list):
                names.update(
                    item.tool_name for item in block.content if isinstance(item, ToolReferenceBlock)
                )
    return frozenset(names)


def translate_tools(
    tools: list[Tool] | None, loaded: frozenset[str] = frozenset()
) -> list[ToolDefinition] | None:
    """Function definitions in the client's order (a stable order keeps the prompt's prefix).
    A deferred tool (`defer_loading`) is offered only once a tool_reference loaded it, as
    Anthropic's API does."""
    if not tools:
        return None
    definitions = []
    for position, tool in enumerate(tools):
        if not tool.is_custom or (tool.defer_loading and tool.name not in loaded):
            # Server tools (e.g. web_search_20250305) are the proxy's own business, not the
            # model's: web_search/loop.py offers the model its own function for web search.
            continue
        if tool.input_schema is None:
            raise InvalidRequest(
                f"tools.{position}.input_schema: Field required for tool {tool.name!r}",
                param=f"tools.{position}.input_schema",
            )
        definitions.append(
            ToolDefinition(
                function=FunctionDefinition(
                    name=tool.name, description=tool.description, parameters=tool.input_schema
                )
            )
        )
    return definitions or None


def translate_tool_choice(
    choice: ToolChoice | None, *, has_tools: bool
) -> str | NamedToolChoice | None:
    """Always explicit when tools are present: a dropped tool_choice made models ignore tools
    (vLLM's own default is "none" in some versions)."""
    if not has_tools:
        return None
    if choice is None or choice.type == "auto":
        return "auto"
    if choice.type == "any":
        return "required"
    if choice.type == "none":
        return "none"
    if not choice.name:
        raise InvalidRequest(
            "tool_choice.name: Field required when tool_choice.type is 'tool'",
            param="tool_choice.name",
        )
    return NamedToolChoice(function={"name": choice.name})


def _parallel_tool_calls(choice: ToolChoice | None, *, has_tools: bool) -> bool | None:
    if has_tools and choice is not None and choice.disable_parallel_tool_use:
        return False
    return None


def translate_thinking(thinking: ThinkingConfig | None) -> dict[str, object] | None:
    """Qwen3, DeepSeek and GLM templates switch reasoning with `enable_thinking`."""
    if thinking is None:
        return None
    return {"enable_thinking": thinking.type != "disabled"}
