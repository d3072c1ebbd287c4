"""A backend request's prompt reduced to checksums, and where two of them first differ.

vLLM's prefix cache serves a request only as far as it repeats the previous one token for token,
so the tracker compares each request of a session with the one before, part by part, in the order
the chat template renders them (parts.py). It keeps no text between requests: per part its
length, a CRC32 of the whole and a chained CRC32 per 32-byte block, as vLLM chains a hash per
block of tokens. Two parts are equal when length and CRC agree; inside the first part that
differs, the first differing block says where, to 32 bytes (what stands there may say more:
volatile.py).

Cost: a part's blocks are computed once, when it first appears; a part the previous request
already had takes its blocks from there. Per request that is one CRC over the whole prompt (C,
~7 us for Claude Code's 49 KB) plus blocks for what is new (a turn's few messages).
"""

from __future__ import annotations

import zlib
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

BLOCK = 32  # bytes per chained checksum: the resolution of "where" without a capture


@dataclass(frozen=True, slots=True)
class Part:
    """One field of the prompt as the model reads it: a text's UTF-8 bytes, or compact JSON."""

    label: str  # where it sits: "messages[0] (system).content", "tools[3]", "model"
    message: int  # the message it belongs to; -1 for request-level parts (model, tools)
    data: bytes


@dataclass(frozen=True, slots=True)
class Divergence:
    """The first place the new request leaves the previous one."""

    part: int  # index among the new request's parts (== their count: the new request ended)
    label: str
    offset: int  # first byte of the part that may differ
    span: int  # the difference lies in [offset, offset + span); 1: this very byte; 0: no byte
    # (a structural change: a part missing, added or of another kind)
    reason: str | None = None  # "tools reordered", "role changed (...)", ...


@dataclass(frozen=True, slots=True)
class PrefixMatch:
    kept_messages: int  # whole messages equal, from the first
    kept_bytes: int  # prompt bytes equal, from the first (to block precision at a divergence)
    previous_bytes: int
    divergence: Divergence | None  # None: the request extends the previous one whole


class Fingerprint:
    """What is kept of one request: per part its label, message, length, CRC and blocks."""

    __slots__ = ("blocks", "digests", "labels", "lengths", "messages", "starts")

    def __init__(self, labels: tuple[str, ...], messages: array[int], lengths: array[int],
                 digests: array[int], starts: array[int], blocks: array[int]) -> None:
        self.labels = labels
        self.messages = messages
        self.lengths = lengths
        self.digests = digests
        self.starts = starts  # part i's blocks are blocks[starts[i]:starts[i + 1]]
        self.blocks = blocks

    @property
    def total_bytes(self) -> int:
        return sum(self.lengths)

    @property
    def message_count(self) -> int:
        return max(self.messages, default=-1) + 1

    def part_blocks(self, index: int) -> array[int]:
        return self.blocks[self.starts[index]:self.starts[index + 1]]

    @property
    def stored_bytes(self) -> int:
        """Memory the checksums take (what the tracker keeps instead of the text)."""
        arrays = (self.messages, self.lengths, self.digests, self.starts, self.blocks)
        return sum(len(a) * a.itemsize for a in arrays)


def chained_blocks(data: bytes) -> array[int]:
    """CRC32 of each BLOCK-byte block, each chained on the one before (a prefix checksum)."""
    crc32, view, crc = zlib.crc32, memoryview(data), 0
    return array("I", [crc := crc32(view[start:start + BLOCK], crc) for start in range(0, len(data), BLOCK)])


def fingerprint(parts: Sequence[Part], previous: Fingerprint | None = None, reuse: int = 0,
                digests: list[int] | None = None) -> Fingerprint:
    """The checksums of `parts`; the first `reuse` parts equal `previous`'s and take its blocks."""
    blocks = array("I")
    starts = array("I", [0])
    if previous is not None and reuse:
        blocks.extend(previous.blocks[:previous.starts[reuse]])
        starts.extend(previous.starts[1:reuse + 1])
    for part in parts[reuse:]:
        blocks.extend(chained_blocks(part.data))
        starts.append(len(blocks))
    return Fingerprint(
        labels=tuple(part.label for part in parts),
        messages=array("i", [part.message for part in parts]),
        lengths=array("I", [len(part.data) for part in parts]),
        digests=array("I", digests if digests is not None else [zlib.crc32(part.data) for part in parts]),
        starts=starts,
        blocks=blocks,
    )


def compare(previous: Fingerprint, parts: Sequence[Part]) -> tuple[PrefixMatch, Fingerprint]:
    """How far `parts` repeat `previous`, and the new request's fingerprint."""
    digests = [zlib.crc32(part.data) for part in parts]
    old_count, new_count = len(previous.labels), len(parts)
    equal = 0
    while (
        equal < old_count
        and equal < new_count
        and previous.digests[equal] == digests[equal]
        and previous.lengths[equal] == len(parts[equal].data)
        and previous.labels[equal] == parts[equal].label
    ):
        equal += 1
    kept_bytes = sum(previous.lengths[:equal])
    divergence = None
    if equal < old_count:
        divergence = _divergence(previous, parts, digests, equal)
        kept_bytes += divergence.offset if divergence.part < new_count else 0
    kept_messages = _messages_before(previous, equal, new_count)
    match = PrefixMatch(kept_messages, kept_bytes, previous.total_bytes, divergence)
    return match, fingerprint(parts, previous, reuse=equal, digests=digests)


def _messages_before(previous: Fingerprint, equal: int, new_count: int) -> int:
    """Messages whose every part is among the first `equal` parts."""
    if equal == len(previous.labels):
        return previous.message_count
    broken = previous.messages[equal]
    if broken < 0:  # a request-level part (model, tools): messages after it are all lost
        return sum(1 for message in set(previous.messages[:equal]) if message >= 0)
    return broken


def _divergence(previous: Fingerprint, parts: Sequence[Part], digests: list[int], index: int) -> Divergence:
    if index >= len(parts):
        return Divergence(index, previous.labels[index], 0, 0, "the request ends where the previous one went on")
    part = parts[index]
    old_label = previous.labels[index]
    reason = _tools_change(previous, parts, digests) if _is_tool(old_label) or _is_tool(part.label) else None
    if old_label != part.label:
        return Divergence(index, part.label, 0, 0, reason or _structural_change(old_label, part.label))
    offset, span = _first_different_block(previous.part_blocks(index), previous.lengths[index], part.data)
    return Divergence(index, part.label, offset, span, reason)


def _is_tool(label: str) -> bool:
    return label.startswith("tools[")


def _tools_change(previous: Fingerprint, parts: Sequence[Part], digests: list[int]) -> str | None:
    old = sorted(d for label, d in zip(previous.labels, previous.digests, strict=True) if _is_tool(label))
    new = sorted(d for part, d in zip(parts, digests, strict=True) if _is_tool(part.label))
    if old == new:
        return "tools reordered"
    if len(new) > len(old) and set(old) <= set(new):
        return "a tool added"
    if len(new) < len(old) and set(new) <= set(old):
        return "a tool removed"
    return None


def _first_different_block(old_blocks: array[int], old_length: int, data: bytes) -> tuple[int, int]:
    """(offset, span): where `data` first leaves the part the blocks were taken of."""
    crc32, view, crc = zlib.crc32, memoryview(data), 0
    for index, old in enumerate(old_blocks):
        start = index * BLOCK
        end = min(start + BLOCK, old_length)  # the old part's last block may be short
        if end > len(data):  # the new part ends inside this block
            return start, end - start
        crc = crc32(view[start:end], crc)
        if crc != old:
            return start, end - start
    # Every old block is repeated: the old part is a prefix of the new one, which goes on.
    return old_length, 1


def _structural_change(old_label: str, new_label: str) -> str:
    old_head, _, old_field = old_label.partition(".")
    new_head, _, new_field = new_label.partition(".")
    if old_head.split(" ")[0] == new_head.split(" ")[0] and old_head != new_head:
        return f"role changed ({old_head} -> {new_head})"
    if old_head == new_head:
        return f"{old_field or 'nothing'} became {new_field or 'nothing'}"
    return f"{old_label} became {new_label}"
