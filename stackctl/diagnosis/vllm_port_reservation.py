"""vLLM's own reservation of its API port, refused with "OSError: [Errno 98] Address already in use" right after a
vLLM on that port crashed or was restarted, read by the port signature and by the fallback alike.

vLLM 0.6.2 binds the API port with a socket of its own before the engine starts (vllm#8537), so nothing the engine
launches takes it; that socket was bound without SO_REUSEADDR, so for about a minute after a vLLM that had served a
request crashed or was stopped, the port's closed connections (TIME_WAIT) refused the new bind (vllm#9737: '"Address
already in use" for 1 minute after crash (since 0.6.2)'). vllm#10012 set SO_REUSEADDR on it (vLLM 0.6.4). The
frame that shows it is run_server's `sock.bind(("", args.port))` (`temp_socket.bind` in 0.6.1's development builds);
later releases bind through create_server_socket, with SO_REUSEADDR, so a refusal there is another process that
really listens on the port.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

RESERVATION = re.compile(r"\b(?:sock|temp_socket)\.bind\(\(\s*(?:\"\"|'')\s*,\s*args\.port\s*\)\)")
# How far above the error its traceback's frames are looked for.
_FRAMES = 12


def reserved_by_vllm(lines: Sequence[str], index: int) -> bool:
    """The refusal at `index` is vLLM's own reservation of its API port (a frame of it just above)."""
    return any(RESERVATION.search(line) for line in lines[max(0, index - _FRAMES):index + 1])


def reservation_fix(port: int | None) -> str:
    """What to do where vLLM's reservation of its API port was refused."""
    where = f"port {port}" if port else "its API port (ports.vllm)"
    listening = f"sport = :{port}" if port else "sport = :PORT"
    return (f"vLLM 0.6.2 and 0.6.3 reserve {where} with a socket of their own before the engine starts, bound without "
            "SO_REUSEADDR: for about a minute after a vLLM on that port crashed or was restarted while clients were "
            "connected, the port's closed connections (TIME_WAIT) refuse the new bind. Wait a minute and start again "
            "(`stackctl up`), or use vLLM 0.6.4 or later (images.vllm), whose port reservation sets SO_REUSEADDR. If "
            f"`ss -ltnp '{listening}'` shows a process LISTENING there, another process really holds the port: stop "
            "it (`stackctl down` for this stack's vLLM) or move ports.vllm in stack.yaml to a free port")
