"""The GPU check's model recipe (`demo-model --shape`), built small here with the real builder in
the vLLM CPU engine's venv: a Qwen3-style checkpoint of the asked widths whose sampled tokens stay
inside the demo tokenizer and never end the turn, so every reply runs to max_tokens."""

from __future__ import annotations

import dataclasses
import json
import subprocess

import pytest

from stackctl.engine.demo_model import DEMO_MODEL_SHAPES, DemoModelShape, generate_demo_model

pytestmark = [pytest.mark.integration, pytest.mark.vllm]

SMALL = DemoModelShape("test-widths", "a small Qwen3 for the test", hidden_size=256, intermediate_size=512, heads=4,
                   kv_heads=2, head_dim=64, vocab_size=4096, layers=2, max_positions=4096, dtype="float32")

SAMPLE = """
import json, sys, torch
from transformers import AutoModelForCausalLM, AutoTokenizer
path = sys.argv[1]
tokenizer = AutoTokenizer.from_pretrained(path)
model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
ids = tokenizer.apply_chat_template([{"role": "user", "content": "Write a story."}], add_generation_prompt=True,
                                    return_tensors="pt", return_dict=True)["input_ids"]
generator = torch.Generator().manual_seed(0)
sampled, beyond = [], 0.0
with torch.no_grad():
    for _ in range(64):
        probs = torch.softmax(model(ids).logits[0, -1], -1)
        beyond = max(beyond, float(probs[len(tokenizer):].sum()))
        token = torch.multinomial(probs, 1, generator=generator)
        sampled.append(int(token))
        ids = torch.cat([ids, token[None]], 1)
print(json.dumps({"sampled": sampled, "tokenizer": len(tokenizer), "beyond": beyond,
                  "eos": tokenizer.convert_tokens_to_ids("<|im_end|>"), "text": tokenizer.decode(sampled)}))
"""


def test_the_shaped_model_has_its_widths_and_never_leaves_the_tokenizer_or_ends(vllm_engine, tmp_path):
    out = generate_demo_model(vllm_engine.python, tmp_path / "model", SMALL)
    config = json.loads((out / "config.json").read_text())
    assert config["architectures"] == ["Qwen3ForCausalLM"]
    assert (config["hidden_size"], config["num_key_value_heads"], config["vocab_size"]) == (256, 2, 4096)
    done = subprocess.run([str(vllm_engine.python), "-c", SAMPLE, str(out)], capture_output=True, text=True,
                          check=False, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert max(found["sampled"]) < found["tokenizer"] and found["beyond"] < 1e-9
    assert found["eos"] not in found["sampled"] and found["text"]
    # The same call again is a no-op: the recipe (builder, template, shape) is unchanged.
    before = (out / "model.safetensors").stat().st_mtime_ns
    generate_demo_model(vllm_engine.python, out, SMALL)
    assert (out / "model.safetensors").stat().st_mtime_ns == before


def test_the_gpu_shape_is_qwen3_8b_wide():
    shape = DEMO_MODEL_SHAPES["qwen3-8b-widths"]
    assert dataclasses.astuple(shape)[2:9] == (4096, 12288, 32, 8, 128, 151936, 4)
    assert 1.3e9 < shape.parameters < 1.5e9  # the 151936 x 4096 embedding and four layers
