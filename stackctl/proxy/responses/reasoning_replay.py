"""Reasoning items sent back in a conversation, as the backend can take them.

Clients send the model's earlier reasoning back with the conversation. An item may carry
`encrypted_content`: reasoning only OpenAI's servers can read (Codex asks for it with
`include: ["reasoning.encrypted_content"]`, and a session started against OpenAI holds it).
vLLM refuses any such item ("Encrypted content is not supported"), which would end the session.
The opaque part goes; an item left with no text at all goes whole, since the model could not
read it anyway. The same item is always changed the same way, so the conversation still
renders as it did the turn before (vLLM's prefix cache).
"""

from __future__ import annotations

from stackctl.proxy.protocol.responses import InputItem, ReasoningItem, ResponsesRequest


def drop_encrypted_reasoning(request: ResponsesRequest) -> bool:
    """In place; True if anything changed."""
    if isinstance(request.input, str):
        return False
    if not any(_encrypted(item) for item in request.input):
        return False
    kept: list[InputItem] = []
    for item in request.input:
        if not _encrypted(item):
            kept.append(item)
            continue
        assert isinstance(item, ReasoningItem)
        if item.readable:
            fields = item.model_dump(exclude_unset=True, exclude={"encrypted_content"})
            kept.append(ReasoningItem.model_validate(fields))
    request.input = kept
    return True


def _encrypted(item: InputItem) -> bool:
    return isinstance(item, ReasoningItem) and item.encrypted_content is not None
