"""Model fit: does `max_model_len` x `max_num_seqs` fit in the memory budget of the profile?

budget = GPU memory x gpu_memory_utilization; the KV pool is what is left after the weights and
an activation reserve. Each sequence needs `len x kv_bytes_per_token` (full-attention layers
only) plus a fixed part (recurrent state of Gated DeltaNet / Mamba layers, sliding windows).
"""

from __future__ import annotations

from dataclasses import dataclass

from stackctl.models.shape import GIB, ModelShape

# Peak activations of a forward pass at vLLM's default batch budget (8192 tokens), plus the
# sampler's logits. vLLM measures this at start; 3 GiB is above what it measures for the
# profiles' models. CUDA graphs and torch.compile allocate *outside* the utilization budget.
ACTIVATION_RESERVE_BYTES = 3 * GIB


@dataclass(frozen=True)
class FitReport:
    budget_bytes: int
    weight_bytes: int
    reserve_bytes: int
    kv_bytes_per_token: int
    fixed_bytes_per_sequence: int
    max_model_len: int
    max_num_seqs: int
    hybrid: bool

    @property
    def pool_bytes(self) -> int:
        return self.budget_bytes - self.weight_bytes - self.reserve_bytes

    def sequence_bytes(self, length: int) -> int:
        return length * self.kv_bytes_per_token + self.fixed_bytes_per_sequence

    @property
    def pool_tokens(self) -> int:
        """Tokens of KV cache the pool holds (ignoring per-sequence fixed state)."""
        return max(0, self.pool_bytes) // max(1, self.kv_bytes_per_token)

    def max_seqs_at(self, length: int) -> int:
        """Sequences of `length` tokens that fit side by side."""
        return max(0, self.pool_bytes) // self.sequence_bytes(length)

    def max_len_at(self, seqs: int) -> int:
        """The longest context each of `seqs` sequences can have at the same time."""
        per_sequence = max(0, self.pool_bytes) // max(1, seqs) - self.fixed_bytes_per_sequence
        return max(0, per_sequence) // max(1, self.kv_bytes_per_token)

    @property
    def one_sequence_fits(self) -> bool:
        return self.max_seqs_at(self.max_model_len) >= 1

    @property
    def requested_fits(self) -> bool:
        return self.max_seqs_at(self.max_model_len) >= self.max_num_seqs

    @property
    def seq_cap(self) -> int:
        """Hybrid models: one recurrent state slot per running sequence, none to preempt into;
        never schedule more sequences than fit at full length."""
        return max(1, self.max_seqs_at(self.max_model_len))


def fit_model(
    shape: ModelShape,
    *,
    weight_bytes: int,
    memory_bytes: int,
    gpu_memory_utilization: float,
    max_model_len: int,
    max_num_seqs: int,
    kv_cache_dtype: str | None,
    reserve_bytes: int = ACTIVATION_RESERVE_BYTES,
) -> FitReport:
    return FitReport(
        budget_bytes=int(memory_bytes * gpu_memory_utilization),
        weight_bytes=weight_bytes,
        reserve_bytes=reserve_bytes,
        kv_bytes_per_token=shape.kv_bytes_per_token(kv_cache_dtype),
        fixed_bytes_per_sequence=shape.fixed_bytes_per_sequence(kv_cache_dtype),
        max_model_len=max_model_len,
        max_num_seqs=max_num_seqs,
        hybrid=shape.hybrid,
    )


def round_down_len(tokens: int) -> int:
    """A context length users recognise: a multiple of 1024 (at least 256)."""
    return max(256, tokens // 1024 * 1024) if tokens >= 1024 else max(0, tokens)
