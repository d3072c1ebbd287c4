"""Model fit through the real check: recorded host (nvidia-smi memory), config.json from the
test HF cache, the stack's max_model_len x max_num_seqs."""

from stackctl.doctor.result import Status
from stackctl.doctor.served_model import check_model_fit
from tests.support.fakehost import MODEL_CACHE, context, make_host, write_index
from tests.support.stack_builder import make_stack

RTX = "rtx-pro-6000-open-570"


def fit(tmp_path, host=RTX, **settings):
    settings.setdefault("hf_cache", str(MODEL_CACHE))
    return check_model_fit(context(make_stack(tmp_path, **settings), make_host(tmp_path, host)))


def test_moe_hybrid_fits_and_reports_context_x_concurrency(tmp_path):
    result = fit(tmp_path, hardware="rtx-pro-6000", model="qwen3.6-35b-a3b-fp8")
    assert result.status is Status.ok, result
    # 97887 MiB x 0.90 = 92.4 GB budget; 37.5 GB weights; 10 KiB/token with fp8 KV (10 of 40 layers)
    assert "budget 92.4 GB" in result.found and "weights 37.5 GB (profile)" in result.found
    assert "10 KiB/token (fp8 KV; 10/40 layers keep KV, 30 recurrent" in result.found
    assert " x 131072 or 16 x " in result.found


def test_hybrid_model_max_num_seqs_is_capped(tmp_path):
    result = fit(tmp_path, hardware="rtx-pro-6000", model="qwen3.6-27b", vllm={"max_num_seqs": 16})
    assert result.status is Status.fail
    assert "hybrid model: 16 sequences x 131072 tokens do not fit" in result.found
    assert "set vllm.max_num_seqs: 7" in result.fix


def test_hybrid_model_within_its_cap_passes(tmp_path):
    result = fit(tmp_path, hardware="rtx-pro-6000", model="qwen3.6-27b", vllm={"max_num_seqs": 4})
    assert result.status is Status.ok, result
    assert "32 KiB/token (fp8 KV; 16/64 layers keep KV, 48 recurrent (147 MiB state/seq))" in result.found


def test_one_sequence_longer_than_the_pool_is_refused(tmp_path):
    result = fit(tmp_path, hardware="rtx-pro-6000", model="qwen3-32b", vllm={"max_model_len": 131072})
    assert result.status is Status.fail
    assert "one 131072-token sequence does not fit (vLLM refuses to start)" in result.found
    assert "256 KiB/token (bf16 KV; 64/64 layers keep KV)" in result.found
    assert "set vllm.max_model_len: 90112" in result.fix


def test_dense_model_over_committed_concurrency_warns(tmp_path):
    result = fit(tmp_path, hardware="rtx-pro-6000", model="qwen3-32b")
    assert result.status is Status.warn
    assert "only 2 of 16 sequences fit at full length" in result.found


def test_weights_larger_than_the_gpu_fail(tmp_path):
    result = fit(tmp_path, host="rtx-6000-ada-proprietary-550", hardware="generic", model="qwen3-coder-next-fp8")
    assert result.status is Status.fail and "weights alone exceed the budget" in result.found


def test_unified_memory_budget_comes_from_meminfo(tmp_path):
    result = fit(tmp_path, host="dgx-spark-gb10-580", hardware="dgx-spark", model="qwen3-coder-next-fp8",
                 vllm={"max_num_seqs": 4})
    assert "MemTotal (unified memory) x 0.70" in result.found
    assert result.status is Status.ok, result


def test_checkpoint_index_size_wins_over_the_profile(tmp_path):
    cache = tmp_path / "hf"
    write_index(cache, "Qwen/Qwen3.6-35B-A3B-FP8", total_size=36_912_345_678)
    result = fit(tmp_path, hardware="rtx-pro-6000", model="qwen3.6-35b-a3b-fp8", hf_cache=str(cache))
    assert "weights 36.9 GB (checkpoint index)" in result.found


def test_missing_config_asks_for_the_small_download(tmp_path):
    result = fit(tmp_path, hardware="rtx-pro-6000", model="gpt-oss-120b", hf_cache=str(tmp_path / "empty"))
    assert result.status is Status.warn
    assert "hf download openai/gpt-oss-120b config.json" in result.fix


def test_gpt_oss_sliding_layers_reported(tmp_path):
    result = fit(tmp_path, hardware="rtx-pro-6000", model="gpt-oss-120b", vllm={"max_num_seqs": 2})
    assert result.status is Status.ok, result
    assert "36 KiB/token (bf16 KV; 18/36 layers keep KV, 18 sliding-window (128 tokens))" in result.found


def test_every_default_hybrid_profile_fits_its_hardware(tmp_path):
    """The shipped defaults must pass the check users run: no profile starts out failing."""
    from stackctl.profiles.model_profiles import MODEL_PROFILES

    hosts = {"rtx-pro-6000": RTX, "dgx-spark": "dgx-spark-gb10-580"}
    for hardware, host in hosts.items():
        for name, profile in MODEL_PROFILES.items():
            if not profile.hybrid:
                continue
            result = fit(tmp_path / f"{hardware}-{name}", host=host, hardware=hardware, model=name)
            assert result.status is Status.ok, (hardware, name, result)
