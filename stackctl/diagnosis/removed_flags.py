"""vLLM's flags that a newer vLLM no longer takes, and what to write instead.

A stack.yaml written for an older engine refuses to start on a newer one with argparse's
"unrecognized arguments"; where vLLM names a successor, the fix names it too, with the value the
old flag carried where it maps one to one (vLLM's release notes and its deprecation messages).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RemovedFlag:
    """What became of a removed flag."""

    # When and why it went, for the summary.
    why: str
    # The flag to write instead; None where removing it is all (the behaviour is now the default).
    successor: str | None
    # The fix's words after "remove X": what to write instead, or why nothing is needed.
    instead: str


# --task went in vLLM 0.13 ("The 'task' option has been deprecated and will be removed in v0.13.0"):
# a pooling task is now --runner pooling with --convert for the head a generative model gets.
_TASK_SUCCESSORS = {
    "embed": "--runner pooling --convert embed",
    "embedding": "--runner pooling --convert embed",
    "classify": "--runner pooling --convert classify",
    "reward": "--runner pooling --convert reward",
    "score": "--runner pooling",
    "generate": "--runner generate",
    "transcription": "--runner generate",
}

_REMOVED = {
    "--enable-reasoning": RemovedFlag("removed in vLLM 0.10: --reasoning-parser alone turns reasoning on", None,
                                      "--reasoning-parser alone turns reasoning on"),
    "--worker-use-ray": RemovedFlag("removed: use --distributed-executor-backend ray",
                                    "--distributed-executor-backend", "write --distributed-executor-backend ray instead"),
    "--use-v2-block-manager": RemovedFlag("removed: the v2 block manager is the only one", None,
                                          "the v2 block manager is the only one"),
    "--disable-log-requests": RemovedFlag("removed in newer vLLM: requests are no longer logged unless "
                                          "--enable-log-requests asks", None,
                                          "requests are not logged by default (--enable-log-requests turns it on)"),
    "--rope-scaling": RemovedFlag("removed: RoPE scaling is a model config override now", "--hf-overrides",
                                  "write it as --hf-overrides '{\"rope_scaling\": {...}}' with the same JSON"),
    "--rope-theta": RemovedFlag("removed: RoPE theta is a model config override now", "--hf-overrides",
                                "write it as --hf-overrides '{\"rope_theta\": N}'"),
    "--speculative-model": RemovedFlag("removed: speculative decoding takes one JSON config", "--speculative-config",
                                       "write --speculative-config '{\"model\": \"...\", \"num_speculative_tokens\": N}' "
                                       "instead"),
    "--num-speculative-tokens": RemovedFlag("removed: speculative decoding takes one JSON config",
                                            "--speculative-config",
                                            "write --speculative-config '{\"num_speculative_tokens\": N, ...}' instead"),
}


def removed_flag(flag: str, value: str | None = None) -> RemovedFlag | None:
    """What became of `flag` (given `value`, where it carried one), or None if it is not a known removal."""
    if flag == "--task":
        successor = _TASK_SUCCESSORS.get(value or "")
        instead = (f"write {successor} instead" if successor else
                   "write --runner pooling (with --convert embed, classify or reward for the head) for an embedding, "
                   "classification or reward model, --runner generate (or nothing) for a generative one")
        return RemovedFlag("removed in vLLM 0.13: --runner and --convert replace it", "--runner", instead)
    return _REMOVED.get(flag)
