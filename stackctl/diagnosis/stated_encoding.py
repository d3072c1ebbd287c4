"""Text a program could not encode, for the fallback to name the fix of: "UnicodeEncodeError:
'ascii' codec can't encode character(s) ... in position N" (Python; 'latin-1' from http.client).

Two causes share the line. An HTTP header can carry only ASCII (httpx encodes header values as
ASCII, http.client as Latin-1), so a token or key pasted with a look-alike letter, a curly quote or
an invisible space fails where a client builds `Authorization: Bearer <token>`: for vLLM that is
HF_TOKEN on its way to the Hub (openai-python#2409, crewAI#755, groq-python#16, hermes-agent#9946).
Or output is written where the locale is ASCII only (LANG=C, a bare container): the text itself is
fine and the locale is the fix. The traceback around the line tells them apart where it shows; a
bare line names both, the header first for the token that a service reads from .env.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stackctl.diagnosis.stated_cause import StatedCause
from stackctl.diagnosis.verdict import DiagnosisContext

_CANNOT_ENCODE = re.compile(r"UnicodeEncodeError: '(?P<codec>ascii|latin-?1)' codec can't encode characters? "
                            r"(?:u?'(?P<char>[^']+)' )?in position (?P<position>\d+)(?:-\d+)?")
# Where the traceback shows a header being built: httpx's, http.client's, requests' and aiohttp's code.
_IN_A_HEADER = re.compile(r"normalize_header_value|putheader|_normalize_header|\bheaders?\b.*\.encode\(|Authorization",
                          re.IGNORECASE)
# Where it shows output being written: print, a stream's write, logging's handler.
_IN_OUTPUT = re.compile(r"\bprint\(|sys\.std(?:out|err)|\.write\(|logging/__init__\.py|StreamHandler|in emit\b")
# The services whose token travels in a header to the Hugging Face Hub.
_HUB_CLIENTS = frozenset({"vllm", "ray-head", "ray-worker"})
# `Bearer ` is seven characters: an error from position 7 on is the token's own first character.
_AFTER_BEARER = 7
_FIND_IT = "`grep -nP '[^\\x00-\\x7F]' .env` shows the line and the character"
_LOCALE = ("set a UTF-8 locale in the service's environment (LANG=C.UTF-8, or PYTHONIOENCODING=utf-8 for Python's "
           "own output)")


def encodings_stated(lines: Sequence[str], context: DiagnosisContext) -> list[StatedCause]:
    """The cause of a UnicodeEncodeError among `lines` (the decisive error and the traceback around it)."""
    match = next((found for line in lines if (found := _CANNOT_ENCODE.search(line))), None)
    if match is None:
        return []
    position = int(match["position"])
    where = f"{'the character ' + match['char'] + ' ' if match['char'] else 'characters '}at position {position}"
    in_header = any(_IN_A_HEADER.search(line) for line in lines) or position == _AFTER_BEARER
    in_output = not in_header and any(_IN_OUTPUT.search(line) for line in lines)
    if in_output:
        return [StatedCause("text the locale cannot encode", (
            f"output with non-ASCII text ({where}) was written where the locale is ASCII only: {_LOCALE}"), env="LANG")]
    token = "HF_TOKEN" if context.service in _HUB_CLIENTS else "the token or API key"
    bearer = ", the first character after `Bearer `: the token itself" if position == _AFTER_BEARER else ""
    text = (f"a value with non-ASCII characters ({where}{bearer}) went where only ASCII is allowed: most often a token "
            f"or key pasted with a look-alike letter, a curly quote or an invisible space, which an HTTP header "
            f"(`Authorization: Bearer <token>`) cannot carry: retype {token} in .env with plain ASCII ({_FIND_IT})")
    if not in_header:
        text += f"; where no token or header is involved, {_LOCALE}"
    return [StatedCause("non-ASCII text", text,
                        env="HF_TOKEN" if context.service in _HUB_CLIENTS else None)]
