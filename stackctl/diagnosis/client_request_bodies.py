"""An endpoint refusing the shape of Claude Code's request body with a 400, read by the client signatures and by
the fallback alike. A 400 is the client's error, not the server failing: the gateway between Claude Code and the
model (or the API itself) did not accept what Claude Code sent.

- A role "system" entry inside messages[] ("messages[1].role must be either 'user' or 'assistant', but got
  'system'", one-api's "message[1].role must be 'user' or 'assistant'", a Rust gateway's "unknown variant `system`"):
  Claude Code 2.1.154 and later put a custom agent's system prompt there (anthropics/claude-code#63457 and #63469,
  api7/aisix#599), which the Messages API and strict gateways refuse. Laisky/one-api#350: CLAUDE_CODE_SIMPLE=1 in
  Claude Code's settings.json env until the gateway accepts it (one-api then did); sgasser/pasteguard#139 found the
  same shape behind a plugin and an MCP server.
- A body the gateway calls invalid without saying why ("Request body format invalid", "Invalid request body"):
  something Claude Code was told to add, a plugin's, a hook's or an MCP server's, is what the gateway refuses
  (anthropics/claude-code#63471: `claude --bare`, which loads none of them, worked; then the plugins one by one).

The Messages API's own refusals that name another cause keep their classes (a prompt too long, the anthropic-beta
header, a thinking budget); a body that is no valid JSON at all is Claude Code's own text, not a plugin's shape.
"""

from __future__ import annotations

import re

SYSTEM_ROLE = re.compile(r"messages?(?:\[\d+\]|\.\d+)\.?\s?role (?:must be (?:either )?'user' or 'assistant'"
                         r"|\"system\" is not 'user' or 'assistant')|messages?\[\d+\]\.role: unknown variant `system`"
                         r"|role 'system' must precede an 'assistant' message")
BODY_REFUSED = re.compile(r"API Error: 400\b[^\n]*?(?:Request body format invalid|Invalid request body"
                          r"|request body (?:format )?is invalid)", re.IGNORECASE)
_OWN_PROXY = ("stackctl's filter-proxy takes a system message inside messages (it moves it to the top-level system "
              "field, --system-placement) and names the field it refuses in its 400 (`stackctl connect claude-code` "
              "points Claude Code at it)")
_FIND_OUT = ("what was refused: the gateway's own log names the field, and `claude --debug` prints the request Claude "
             "Code sent and the whole error body")


def refused_body(text: str) -> str | None:
    """How the endpoint refused the request body ("system role" or "body"), or None where `text` says no such thing."""
    if SYSTEM_ROLE.search(text):
        return "system role"
    return "body" if BODY_REFUSED.search(text) else None


def system_role_fix() -> str:
    return ("the endpoint refused a message with role \"system\" inside messages[], which Claude Code 2.1.154 and later "
            "send (a custom agent's system prompt, /agents) and the Messages API and strict gateways accept only at "
            "the top level: set CLAUDE_CODE_SIMPLE=1 in Claude Code's environment (settings.json's env; the workaround "
            "one-api's users confirmed) or start it with `claude --bare` (which skips hooks, plugins and their MCP "
            "servers); update Claude Code and the gateway (one-api and others now fold such a message into the "
            f"top-level system). {_OWN_PROXY}; {_FIND_OUT}")


def body_fix() -> str:
    return ("a 400 is the client's error: the gateway or API behind ANTHROPIC_BASE_URL refused the shape of Claude "
            "Code's request body, most often something a plugin, a hook, an MCP server or a custom agent adds to it "
            "(a system message inside messages, tool definitions or fields the gateway does not know). Start Claude "
            "Code with `claude --bare` (which skips hooks, plugins and their MCP servers): if the error is gone, "
            "disable the plugins one at a time (`/plugin`) to find the one, and update it, Claude Code or the "
            f"gateway; {_FIND_OUT}. {_OWN_PROXY}")
