"""Namespaced tools, flattened for the model and restored for the client.

Codex sends groups of tools as `{"type": "namespace", "name": NS, "tools": [...]}` (its MCP
servers, its sub-agent tools). vLLM releases before namespaces reject the type, or drop the
namespace from a call's name. The model is shown plain function tools named `NS__NAME`, vLLM's
own flat spelling, so a release that flattens by itself renders the very same tokens; a call
to `NS__NAME` goes back to the client as `name: NAME, namespace: NS`, as the Responses API
spells it. A conversation sent back is flattened the same way, so each backend request renders
as the previous one did (vLLM's prefix cache).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stackctl.proxy.protocol.responses import (
    FunctionCallItem,
    FunctionTool,
    FunctionToolChoice,
    NamespaceTool,
    ResponsesRequest,
    Tool,
)

SEPARATOR = "__"


def flat_name(namespace: str, name: str) -> str:
    return f"{namespace}{SEPARATOR}{name}"


@dataclass
class NamespacedNames:
    """Flat name -> (namespace, name), for the tools one request offered."""

    members: dict[str, tuple[str, str]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.members)

    def restore(self, item: dict[str, Any]) -> bool:
        """A function call (an output item, or an event naming one) as the client named the
        tool; True if it changed."""
        name = item.get("name")
        member = self.members.get(name) if isinstance(name, str) else None
        if member is None:
            return False
        item["namespace"], item["name"] = member
        return True

    def restore_document(self, document: dict[str, Any]) -> bool:
        """Every function call a reply or stream event carries: the item of an
        `output_item.added/done` event, a `function_call_arguments.done` event itself, the
        output of a whole response (or of a `response.completed` event)."""
        changed = False
        if document.get("type") == "response.function_call_arguments.done":
            changed |= self.restore(document)
        item = document.get("item")
        if isinstance(item, dict) and item.get("type") == "function_call":
            changed |= self.restore(item)
        response = document.get("response", document)
        output = response.get("output") if isinstance(response, dict) else None
        for entry in output if isinstance(output, list) else ():
            if isinstance(entry, dict) and entry.get("type") == "function_call":
                changed |= self.restore(entry)
        return changed


def flatten_namespaces(request: ResponsesRequest) -> tuple[bool, NamespacedNames]:
    """Namespaced tools, the calls made to them earlier in the conversation and a forced
    choice of one, in their flat form (in place); whether anything changed, and the names to
    restore in the reply."""
    names = NamespacedNames()
    if not request.tools:
        return _flatten_calls(request, names), names
    tools: list[Tool] = []
    for tool in request.tools:
        if not isinstance(tool, NamespaceTool):
            tools.append(tool)
            continue
        for member in tool.tools:
            if isinstance(member, FunctionTool):
                flat = flat_name(tool.name, member.name)
                names.members[flat] = (tool.name, member.name)
                member = member.model_copy(update={"name": flat})
            tools.append(member)
    if not names:
        return _flatten_calls(request, names), names
    request.tools = tools
    _flatten_choice(request, names)
    _flatten_calls(request, names)
    return True, names


def _flatten_calls(request: ResponsesRequest, names: NamespacedNames) -> bool:
    if isinstance(request.input, str):
        return False
    changed = False
    for index, item in enumerate(request.input):
        if isinstance(item, FunctionCallItem) and item.namespace is not None:
            flat = flat_name(item.namespace, item.name)
            names.members.setdefault(flat, (item.namespace, item.name))
            # The namespace goes: the flat name says it all, as in vLLM's own rendering.
            fields = item.model_dump(exclude_unset=True, exclude={"namespace"})
            request.input[index] = FunctionCallItem.model_validate({**fields, "name": flat})
            changed = True
    return changed


def _flatten_choice(request: ResponsesRequest, names: NamespacedNames) -> None:
    choice = request.tool_choice
    if not isinstance(choice, FunctionToolChoice) or choice.name in names.members:
        return
    matches = [flat for flat, (_, name) in names.members.items() if name == choice.name]
    if len(matches) == 1:
        request.tool_choice = choice.model_copy(update={"name": matches[0]})
