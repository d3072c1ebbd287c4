"""Log lines as the services write them, read for their message: the prefixes that multi-process
engines, Compose and supervisors put in front are taken off, and traceback noise is told apart
from the lines that say what went wrong.

Every service of the stack logs errors its own way: Python exceptions and `ERROR` records (vLLM,
the filter-proxy, certbot), `[emerg]`/`[crit]`/`[error]` (nginx), `level=error` (Prometheus, the
exporters, Grafana's `lvl=eror`), `panic:` (Go), logrus's `ERRO[0000]`, `CRIT`/`gave up`/`couldn't exec` (supervisord) and `Error
response from daemon` (Docker, the NVIDIA container runtime).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

# Prefixes, taken off repeatedly (they nest: `vllm-1  | (EngineCore_DP0 pid=7) [rank0]: ...`); each
# takes one separating space, so a traceback's indentation survives.
_PREFIXES = re.compile(
    r"^(?:"
    r"[\w.-]+-\d+\s+\| ?"  # docker compose logs: `vllm-1  | `
    r"|\((?:[A-Za-z_][\w-]*)(?:[ ,][^)]*)?\) "  # (EngineCore_DP0 pid=123), (RayWorkerWrapper pid=1, ip=..)
    r"|\[rank\d+\]: ?"  # torch.distributed: [rank0]:
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? "  # timestamps
    r"|\[\d{4}-\d\d-\d\d[T ][^\]]*\] "  # [2024-01-01 00:00:00,123]
    r"|[\w-]+\s+\| "  # `logs -f` of several services: `vllm | `
    r")"
)
# vLLM's (and its libraries') log record header: `ERROR 08-06 10:10:10 [core.py:700] `. The level is
# kept: the message after it may be one line of a traceback the record carries.
_RECORD = re.compile(
    r"^(?P<level>ERROR|WARNING|WARN|INFO|DEBUG|CRITICAL)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s(?:\[[^\]]+\] ?)?"
)
_TRACEBACK_NOISE = re.compile(
    r"^(?:Traceback \(most recent call last\):|\s+File \"|\s+\^[\^~ ]*$|\s*[~^]+\s*$|During handling of the above "
    r"exception|The above exception was the direct cause|\s+\.\.\.\s*$|\s*\[Previous line repeated)"
)
# A Python exception as it ends a traceback: `ValueError: ...`, `torch.OutOfMemoryError: ...`.
# A class under a module path is an exception whatever its name, when a message follows it
# (`certbot.errors.FailedChallenges: ...`).
_EXCEPTION = re.compile(
    r"^(?P<type>(?:[a-z_][\w]*\.)*(?:[A-Z]\w*)?(?:Error|Exception|Exit|Failure|Fault|Interrupt|Denied|Timeout|NotFound)"
    r"|(?:[a-z_][\w]*\.)+[A-Z]\w*(?=: ))"
    r"(?::\s*(?P<message>.*))?$"
)
_FATAL = re.compile(
    r"^panic: |\bfatal error: |\[(?:emerg|alert|crit)\]|\blevel=(?:fatal|crit)\b|\blvl=crit\b"
    r"|Error response from daemon|\bnvidia-container-cli: |\bOCI runtime (?:create|exec) failed"
    r"|^(?:Error|ERROR): |\bCRIT |\bgave up: |\bFATAL\b|\bCRITICAL\b|Segmentation fault|core dumped"
    r"|\bKilled\b$|^Aborted\b|^(?:FATA|PANI)\[\d+\]|^supervisor: couldn't ",
)
_ERROR = re.compile(
    r"^(?:ERROR|E\d{4}) |^ERRO\[\d+\]|\bERROR\b|\[error\]|\blevel=error\b|\blvl=eror\b|\berror: "
    r"|An unexpected error occurred"
    r"|^Error: |\bFailed to |\bfailed: |\bspawnerr\b|\berror=|\berr=\""
    # "Error loading model: ...", grafana-cli's indented " Error: ✗ ...", Python's "[Errno 98] ...".
    r"|^(?:Error|ERROR)(?: \w+){1,4}: |^\s+Error: |\[Errno \d+\]"
    # The operating system's own refusals, whoever logs them and however.
    r"|\b(?:[Pp]ermission denied|[Aa]ddress already in use|is not writable|is not executable|[Rr]ead-only file system"
    r"|[Nn]o space left on device)\b"
)
# supervisord's start-up notices it logs at CRIT (supervisor/options.py, http.py): running as root
# without user= in its config ("Supervisor is running as root.  Privileges were not dropped ...", before
# 4.0 "Supervisor running as root (no user in config file)"), the uid it dropped to, and an HTTP
# server without a password. It goes on running: not the failure.
_SUPERVISOR_NOTICE = re.compile(
    r"\bCRIT (?:Supervisor (?:is )?running as root\b|Set uid to user \d+|Server '[\w:-]+' running without any "
    r"HTTP authentication checking)")
# Records a service logs below the error level (a "Failed to ..." there is survived).
_QUIET = re.compile(
    r"^(?:INFO|WARNING|WARN|DEBUG|DEBU|NOTICE|I\d{4}|W\d{4})\b|\blevel=(?:info|warn|warning|debug)\b|\blvl=(?:info|warn|dbug)\b"
    r"|\[(?:warn|notice|info|debug)\]|^\s*\S+ (?:INFO|WARNING|DEBUG) "
)
# Lines that report a failure without saying what it was (the cause is logged above them).
_WRAPPER = re.compile(
    r"Engine core initialization failed|EngineCore failed to start|See (?:the )?root cause above|see stack trace above"
    r"|Worker failed with error|WorkerProc (?:failed|hit an exception)|Engine process failed to start"
    r"|EngineDeadError|EngineCore encountered an issue|Exception in worker|Error executing method"
    r"|Failed core proc\(s\)|^SystemExit\b|^KeyboardInterrupt|CancelledError|^ChildProcessError"
    r"|exited: \S+ \(exit status|entered FATAL state|Process \S+ exited with|Task exception was never retrieved"
    r"|^Error: Process completed with exit code|Traceback \(most recent call last\)|^ERROR:\s*$"
    r"|Exception in ASGI application|Exception in callback|unhandled exception during asyncio\.run\(\) shutdown"
    r"|^RuntimeError: Worker failed|Engine core proc \S+ died unexpectedly|shutting down|Shutting down"
    r"|WorkerProc initialization failed due to an exception in a background process|CUDA call failed lazily"
    r"|For debugging consider passing CUDA_LAUNCH_BLOCKING|Compile with `TORCH_USE_CUDA_DSA`"
    r"|^ERROR \S+ \S+ \[[\w.]+:\d+\]\s*$|error: exit status|^Error: exit status|child process was not spawned",
    re.IGNORECASE,
)
_CONTINUATION = re.compile(r"^\s+\S|^\s*Value error,|^\s*(?:Please|HINT|Hint|hint|Try|Consider|You can|To fix)\b")
_PYDANTIC_LINK = re.compile(r"^\s*For further information visit https://errors\.pydantic\.dev")
# How many continuation lines of a multi-line message are read with it.
_CONTINUATION_LINES = 3


class Weight(IntEnum):
    """How much a line says about why the service stopped."""

    none = 0
    error = 1  # an error record: may be survived
    crash = 2  # an exception ending a traceback, a panic, an [emerg], a refused container


@dataclass(frozen=True)
class ErrorLine:
    """The line that says what went wrong, as the service wrote it and without its prefixes."""

    index: int  # in the lines it was read from
    text: str  # the message, continuation lines joined
    weight: Weight
    # The exception type, when it is a Python exception (e.g. "ValueError").
    exception: str | None = None


def strip_prefixes(line: str) -> str:
    """The message of a log line: process, container and record prefixes taken off."""
    return _split_record(line)[1]


def _split_record(line: str) -> tuple[str | None, str]:
    text = line.rstrip("\r\n")
    for _ in range(6):
        stripped = _PREFIXES.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    record = _RECORD.match(text)
    if record is None:
        return None, text
    return record["level"], text[record.end():]


def is_traceback_noise(line: str) -> bool:
    return bool(_TRACEBACK_NOISE.search(line))


def weigh(message: str, level: str | None = None) -> Weight:
    if is_traceback_noise(message) or _WRAPPER.search(message) or _SUPERVISOR_NOTICE.search(message):
        return Weight.none
    if _EXCEPTION.match(message) and not message.startswith(" "):
        return Weight.crash
    if level in ("INFO", "WARNING", "WARN", "DEBUG") or _QUIET.search(message):
        return Weight.none
    if level in ("ERROR", "CRITICAL") and message.strip():
        return Weight.crash if _FATAL.search(message) else Weight.error
    if _FATAL.search(message):
        return Weight.crash
    if _ERROR.search(message):
        return Weight.error
    return Weight.none


def error_lines(lines: list[str]) -> list[ErrorLine]:
    """Every line that reports an error, in order, traceback noise and wrapper errors left out."""
    records = [_split_record(line) for line in lines]
    messages = [message for _level, message in records]
    found: list[ErrorLine] = []
    in_traceback = False
    for index, message in enumerate(messages):
        if message.startswith("Traceback (most recent call last)"):
            in_traceback = True
            continue
        if in_traceback and (message.startswith((" ", "\t")) or not message.strip()):
            continue  # the frames and the source lines they quote
        weight = weigh(message, records[index][0])
        exception = _EXCEPTION.match(message)
        if in_traceback and exception is None and weight is Weight.none and not _WRAPPER.search(message):
            # A traceback ends with its exception; a bare `RuntimeError` line or a message on its own.
            weight = Weight.crash if message.strip() else Weight.none
        in_traceback = False
        if weight is Weight.none:
            continue
        found.append(ErrorLine(index, _with_continuation(messages, index), weight,
                               exception.group("type") if exception else None))
    return found


def decisive_error(lines: list[str]) -> ErrorLine | None:
    """The line that most likely says why the service failed: the last crash (an exception that
    ends a traceback, a panic, an [emerg]) past the wrappers that only report it, else the last
    error record."""
    found = error_lines(lines)
    crashes = [line for line in found if line.weight is Weight.crash]
    if crashes:
        return _root_of(crashes)
    return found[-1] if found else None


# A failure stated in plain words, with no error level or exception to mark it: certbot's "The program
# nginx (process ID 32742) is already listening on TCP port 443", curl's "Failed connect to ...;
# Connection refused", Grafana's "data source not found". Read only where a log has no error line.
_STATED_FAILURE = re.compile(
    r"\b(?:could not|couldn't|cannot|can't|unable to|failed|failure|error|timed out|timeout|is already|are already"
    r"|already in use|not found|no such|denied|refused|invalid|must|not allowed|not supported|unsupported|not defined"
    r"|not installed|not (?:currently )?loaded|not recogni[sz]e|unrecogni[sz]ed|unknown|mismatch|insufficient|exceeds?"
    r"|too (?:old|many|long|large|small)|does not (?:exist|match|support|allow|appear)"
    r"|doesn't (?:exist|match|support|have|appear)|no available|requires"
    # A request refused for the model's context window, in the OpenAI API's words that servers repeat;
    # DNS's own word for a name that does not exist.
    r"|maximum context length|NXDOMAIN)\b"
    r"|^\s*Please\b",
    re.IGNORECASE,
)
# Lines that only echo what was run ("$ docker run ...", "curl 172.4.0.1:9092/metrics", "+ cmd").
_ECHOED = re.compile(r"^\s*(?:[$#>+] |\S*\$ |(?:sudo )?(?:curl|wget|docker|certbot|systemctl|nginx|apt(?:-get)?|pip3?"
                     r"|python3?\s+-m|vllm serve|supervisorctl) )")
# A line that is a record of its own, not the rest of a sentence ("metrics.py:453] Avg prompt ...").
_SOURCE_RECORD = re.compile(r"^[\w.-]+\.(?:py|go|cc|cpp|c|rs|js|ts):\d+\]")
# Lines that point elsewhere ("Please see the logfiles in /var/log/letsencrypt for more details") or
# only open a JSON body ('"error": {'): no failure of their own.
_NO_STATEMENT = re.compile(r"^\s*(?:Please )?(?:see|refer to|visit|read|consult|check) (?:the )?(?:log|https?:|doc|our )"
                           r"|^\s*[\"']?\w+[\"']?\s*:\s*[\[{]\s*$", re.IGNORECASE)
# Records below the warning level: a failure stated there is survived.
_INFO_OR_DEBUG = re.compile(r"^(?:INFO|DEBUG|DEBU|NOTICE|I\d{4})\b|\blevel=(?:info|debug)\b|\blvl=(?:info|dbug)\b"
                            r"|\[(?:notice|info|debug)\]|^\s*\S+ (?:INFO|DEBUG) |:(?:INFO|DEBUG):| - (?:INFO|DEBUG) - ",
                            re.IGNORECASE)
# Warnings (records, Python's warnings, dcgm-exporter's "Warning #2:"): read only from a service known
# to have failed, since a running one logs them too.
_WARNING = re.compile(r"^(?:WARNING|WARN|W\d{4})\b|\blevel=warn(?:ing)?\b|\blvl=warn\b|\[warn\]|^\s*\S+ WARNING "
                      r"|:WARNING:| - WARNING - |\b\w*Warning(?::| #)|warnings\.warn", re.IGNORECASE)


def stated_failure(lines: list[str], *, warnings: bool = False) -> ErrorLine | None:
    """Where a log has no error line at all: the last line that states a failure in words (not an
    info or debug record, a warning only where `warnings`, not an echoed command), with the lines its
    sentence wraps onto."""
    messages = [strip_prefixes(line) for line in lines]
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if (not _STATED_FAILURE.search(message) or _ECHOED.search(message) or _NO_STATEMENT.search(message)
                or _INFO_OR_DEBUG.search(message) or _WRAPPER.search(message) or is_traceback_noise(message)
                or (not warnings and _WARNING.search(message))):
            continue
        # A sentence wrapped at the terminal's width starts on a line above ("... is already listening
        # on TCP port 443. This" / "will prevent us ... Please stop the nginx program").
        while index > 0 and _wraps_onto(messages[index - 1], message):
            index -= 1
            message = messages[index]
        parts = [message.strip()]
        for following in messages[index + 1:index + 1 + _CONTINUATION_LINES]:
            if not _wraps_onto(parts[-1], following):
                break
            parts.append(following.strip())
        return ErrorLine(index, " ".join(parts), Weight.error)
    return None


def _wraps_onto(above: str, below: str) -> bool:
    """`below` goes on the sentence `above` began: it starts in lower case and `above` does not end one."""
    return bool(above.strip() and below[:1].islower() and not above.rstrip().endswith((".", ":", "!", "?"))
                and not _ECHOED.search(above) and not _ECHOED.search(below) and not _SOURCE_RECORD.match(below))


def error_block(lines: list[str], index: int) -> range:
    """The lines that log one error ending at `index`: its traceback (frames, the quoted source,
    chained "During handling" parts) and the record line that announced it, if any."""
    start = index
    while start > 0:
        previous = strip_prefixes(lines[start - 1])
        if is_traceback_noise(previous) or previous.startswith((" ", "\t")):
            start -= 1
            continue
        break
    if start > 0:
        level, header = _split_record(lines[start - 1])
        if not _EXCEPTION.match(header) and weigh(header, level) is not Weight.none:
            start -= 1  # "ERROR ... Error in preprocessing prompt inputs" above its traceback
    return range(start, index + 1)


def _root_of(crashes: list[ErrorLine]) -> ErrorLine:
    """The last crash, unless it only repeats an earlier one's type in other words (vLLM's API
    process re-raising its engine's error): then the first of that run of its kind."""
    last = crashes[-1]
    for earlier in reversed(crashes[:-1]):
        if earlier.text == last.text:
            last = earlier
    return last


def _with_continuation(messages: list[str], index: int) -> str:
    parts = [messages[index].strip()]
    exception = _EXCEPTION.match(messages[index])
    wraps = exception is not None and not (exception.group("message") or "").strip()
    for following in messages[index + 1:index + 1 + _CONTINUATION_LINES]:
        if _PYDANTIC_LINK.match(following) or is_traceback_noise(following) or not following.strip():
            break
        if not (_CONTINUATION.match(following) or wraps):
            break
        wraps = False
        parts.append(following.strip())
    return " ".join(parts)
