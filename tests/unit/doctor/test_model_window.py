"""The model's own window against vllm.max_model_len: real configs from the test HF cache (and
the demo model's builder), through the real check, with vLLM 0.32's derivation rule."""

import json

from stackctl.doctor.model_window import check_model_window, model_window
from stackctl.doctor.result import Status
from stackctl.engine.demo_model import DEMO_MAX_POSITIONS
from tests.support.fakehost import MODEL_CACHE, context, make_host
from tests.support.stack_builder import make_stack


def window_check(tmp_path, **settings):
    settings.setdefault("hf_cache", str(MODEL_CACHE))
    return check_model_window(context(make_stack(tmp_path, **settings), make_host(tmp_path)))


def test_a_window_past_the_models_positions_is_refused_with_the_fix(tmp_path):
    # Qwen3-32B's config.json: max_position_embeddings 40960; its card reaches 131072 only with YaRN.
    result = window_check(tmp_path, hardware="rtx-pro-6000", model="qwen3-32b", vllm={"max_model_len": 131072})
    assert result.status is Status.fail
    assert "max_model_len 131072; the model takes 40960 tokens (max_position_embeddings 40960)" in result.found
    assert result.fix.startswith("set vllm.max_model_len: 40960 (or less) in stack.yaml")


def test_every_gpu_profile_fits_its_models_window(tmp_path):
    for model in ("qwen3.6-27b", "qwen3.6-35b-a3b-fp8", "qwen3-coder-next-fp8", "qwen3-32b", "gpt-oss-120b"):
        result = window_check(tmp_path / model, hardware="rtx-pro-6000", model=model)
        assert result.status is Status.ok, result


def test_prescaled_yarn_is_not_scaled_again():
    # gpt-oss-120b: max_position_embeddings 131072 with yarn factor 32 (already the scaled length).
    config = json.loads(next(MODEL_CACHE.glob("hub/models--openai--gpt-oss-120b/snapshots/*/config.json")).read_text())
    assert model_window(config).tokens == 131072


def test_linear_rope_scaling_and_the_tokenizer_limit_count():
    scaled = model_window({"max_position_embeddings": 32768, "rope_scaling": {"type": "linear", "factor": 2.0}})
    assert scaled.tokens == 65536 and "rope_scaling factor 2 (linear)" in scaled.source
    per_layer = {"max_position_embeddings": 8192,
                 "rope_parameters": {"full_attention": {"rope_type": "dynamic", "factor": 4.0}}}
    assert model_window(per_layer).tokens == 32768
    assert model_window({"max_position_embeddings": 32768}, {"model_max_length": 4096}).tokens == 4096
    assert model_window({"hidden_size": 8}) is None


def test_the_demo_stack_fits_the_demo_model_before_it_is_generated(tmp_path, monkeypatch):
    monkeypatch.setenv("STACKCTL_HOME", str(tmp_path / "home"))  # no demo model there yet
    result = window_check(tmp_path, hardware="cpu", model="tiny", runtime="native")
    assert result.status is Status.ok, result
    assert f"max_model_len {DEMO_MAX_POSITIONS}; the model takes {DEMO_MAX_POSITIONS} tokens" in result.found
    too_long = window_check(tmp_path / "long", hardware="cpu", model="tiny", runtime="native",
                            vllm={"max_model_len": 2 * DEMO_MAX_POSITIONS})
    assert too_long.status is Status.fail and f"set vllm.max_model_len: {DEMO_MAX_POSITIONS}" in too_long.fix


def test_a_local_model_directory_is_read(tmp_path):
    model = tmp_path / "my-model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"max_position_embeddings": 16384}))
    result = window_check(tmp_path, hardware="rtx-pro-6000", model="qwen3-32b",
                          vllm={"model_path": str(model), "max_model_len": 32768})
    assert result.status is Status.fail and "16384 tokens" in result.found


def test_a_model_not_downloaded_yet_is_a_warning_with_the_way_to_check(tmp_path):
    result = window_check(tmp_path, hardware="rtx-pro-6000", model="qwen3-32b", hf_cache=str(tmp_path / "empty"))
    assert result.status is Status.warn and "hf download" in result.fix
