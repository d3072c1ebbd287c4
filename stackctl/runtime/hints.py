"""Known failure signatures in service logs, each with the fix that worked."""

from __future__ import annotations

import re

_HINTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), hint)
    for pattern, hint in (
        (
            r"Unsupported CPU attention configuration|head_size .* is not supported",
            (
                "vLLM's CPU attention rejects this head size (16 fails, 64 and up work): regenerate the "
                "model with `stackctl demo-model --force` or use a model with head_dim >= 64"
            ),
        ),
        (
            r"CUDA out of memory|torch\.OutOfMemoryError|OutOfMemoryError|No available memory for the cache blocks",
            (
                "the GPU ran out of memory: lower vllm.max_model_len or vllm.max_num_seqs, or "
                "vllm.gpu_memory_utilization (0.70 on unified-memory hosts); `stackctl doctor` checks the fit"
            ),
        ),
        (
            r"unrecognized arguments|error: argument|invalid choice",
            (
                "vLLM refused a flag: check vllm.extra_args in stack.yaml against `python -m "
                "vllm.entrypoints.openai.api_server --help` of this engine (e.g. --dtype fp8 is not valid; use auto)"
            ),
        ),
        (
            r"Address already in use|bind\(\) to .* failed|\[Errno 98\]",
            "a port is already in use: stop the other process (`ss -ltnp`) or change `ports:` in stack.yaml",
        ),
        (
            r"No such file or directory: .*config\.json|does not appear to have a file named config\.json",
            "the model directory is missing or incomplete: check vllm.model_path, or run `stackctl demo-model`",
        ),
    )
)


def hint_for(log_lines: list[str]) -> str | None:
    """The fix for the last recognised failure in the log, if any."""
    for line in reversed(log_lines):
        for pattern, hint in _HINTS:
            if pattern.search(line):
                return hint
    return None
