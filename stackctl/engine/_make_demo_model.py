"""Write the tiny random-weight demo model. Runs INSIDE the engine venv (torch, transformers and
tokenizers live there, not in stackctl's env), as a plain script: it must not import stackctl.

Usage: python _make_demo_model.py OUT_DIR CHAT_TEMPLATE_FILE [SHAPE_JSON]

SHAPE_JSON (optional) sizes a Qwen3-style model like a real one for a GPU (see `sized_model`);
without it, the tiny Qwen2-style demo model.
"""

import json
import sys
from pathlib import Path

SEED = 0
VOCAB_SIZE = 1024  # including the special tokens; small keeps the embedding tiny
# vLLM's CPU attention rejects small head sizes (16 fails at startup); 64 is what real models
# use and works, so 2 heads of 64 make the hidden size 128.
HIDDEN_SIZE = 128
NUM_HEADS = 2
NUM_KV_HEADS = 1  # grouped-query attention, as in real Qwen2 checkpoints
NUM_LAYERS = 2
INTERMEDIATE_SIZE = 256
# Coding agents send long prompts: Claude Code's first request is ~35k tokens of this tokenizer
# (its byte-level BPE learned from a few lines of text: ~1.4 bytes a token), and Claude Code
# compacts at its window less ~33k (CLAUDE_CODE_AUTO_COMPACT_WINDOW): 128k positions hold a
# real session. Rotary embeddings have no per-position weights, so the files stay as small, and
# prefill time follows the prompt, not the window.
MAX_POSITIONS = 131072
# Replies end by themselves after ~90 tokens on average, so a client's turn is quick on a CPU,
# and never before their first token. Every embedding (tied: also the output layer) shares one
# direction, which dominates the residual stream, so the final hidden state points along it; the
# end-of-turn token has a little more of it, lifting its logit to ~1% a step (random weights
# alone: ~0.2%, thousands of tokens of gibberish). A second direction, carried a little by the
# newline that ends "<|im_start|>assistant\n" and taken away from end-of-turn, makes ending right
# after a newline unlikely (~0.01%): a reply is not empty.
SHARED_DIRECTION = 2.0
END_OF_TURN_LIFT = 0.1
AFTER_NEWLINE = 0.5
END_OF_TURN_AFTER_NEWLINE = -2.0

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# As in Qwen2.5, the tool-call tags are added tokens but not "special": they survive decoding
# with skip_special_tokens=True, so vLLM's hermes parser finds them in the text.
TOOL_TOKENS = ["<tool_call>", "</tool_call>"]

# The BPE merges are learned from this text; byte-level BPE keeps all 256 bytes in the vocab, so
# any string (any language, any emoji) still round-trips, just in more tokens.
TRAINING_TEXT = """\
You are a helpful assistant. The user asks a question and the assistant answers it.
Hello! How can I help you today? Please write a short poem about the sea.
def add(a: int, b: int) -> int:
    return a + b
import json, os, sys
print("hello, world")
{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
The quick brown fox jumps over the lazy dog. 0123456789 + - * / = ( ) [ ] { } < > ; : , .
Tools, functions, results, errors, files, tests, servers, models, tokens, streams, messages.
"""


def build_tokenizer():
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE - len(TOOL_TOKENS),
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    # Repeating the text gives the trainer pair counts to learn from; the order is fixed, so the
    # merges (and the token ids) are the same on every run.
    tokenizer.train_from_iterator([TRAINING_TEXT] * 20, trainer=trainer)
    tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in TOOL_TOKENS])
    return tokenizer


def main(out_dir: Path, template_file: Path) -> None:
    import torch
    from transformers import (
        GenerationConfig,
        PreTrainedTokenizerFast,
        Qwen2Config,
        Qwen2ForCausalLM,
    )

    out_dir.mkdir(parents=True, exist_ok=True)
    raw = build_tokenizer()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        model_max_length=MAX_POSITIONS,
        clean_up_tokenization_spaces=False,
    )
    tokenizer.chat_template = template_file.read_text()
    tokenizer.save_pretrained(out_dir)

    ids = {t: raw.token_to_id(t) for t in SPECIAL_TOKENS + TOOL_TOKENS}
    torch.manual_seed(SEED)
    config = Qwen2Config(
        vocab_size=raw.get_vocab_size(),
        hidden_size=HIDDEN_SIZE,
        intermediate_size=INTERMEDIATE_SIZE,
        num_hidden_layers=NUM_LAYERS,
        num_attention_heads=NUM_HEADS,
        num_key_value_heads=NUM_KV_HEADS,
        max_position_embeddings=MAX_POSITIONS,
        tie_word_embeddings=True,
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|im_end|>"],
        pad_token_id=ids["<|endoftext|>"],
        torch_dtype="float32",
    )
    model = Qwen2ForCausalLM(config).to(torch.float32)
    with torch.no_grad():
        embeddings = model.model.embed_tokens.weight
        shared, after_newline = torch.randn(2, embeddings.shape[1], generator=torch.Generator().manual_seed(SEED))
        shared /= shared.norm()
        after_newline -= (after_newline @ shared) * shared
        after_newline /= after_newline.norm()
        embeddings += SHARED_DIRECTION * shared
        end_of_turn, newline = ids["<|im_end|>"], raw.token_to_id("\u010a")  # byte-level BPE's "\n"
        embeddings[end_of_turn] += END_OF_TURN_LIFT * shared + END_OF_TURN_AFTER_NEWLINE * after_newline
        embeddings[newline] += AFTER_NEWLINE * after_newline
    model.save_pretrained(out_dir, safe_serialization=True)
    # vLLM reads default sampling params (notably the stop ids) from generation_config.json.
    GenerationConfig(
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=[ids["<|im_end|>"], ids["<|endoftext|>"]],
        pad_token_id=ids["<|endoftext|>"],
    ).save_pretrained(out_dir)
    print(json.dumps({"vocab_size": raw.get_vocab_size(), "token_ids": ids}))


def sized_model(out_dir: Path, template_file: Path, shape: dict) -> None:
    """A Qwen3-style model with a real model's widths (e.g. Qwen3-8B's: hidden 4096, 32 query and 8
    KV heads of 128, MLP 12288, a 151936-row vocabulary) and fewer layers: what a GPU spends per
    token on attention, MLP, the LM head and sampling is a real model's, per layer.

    The tokenizer is the demo's (1024 tokens), so the vocabulary rows past it and the special
    tokens are pushed far below every real token: sampling never leaves the tokenizer and never
    ends the turn, so every reply runs to max_tokens (benchmarks compare routes at equal length).
    The layers' output projections are scaled down, so each token's embedding decides the next
    logits and those margins hold whatever the width (random layers at full scale would swamp them).
    """
    import torch
    from transformers import (
        GenerationConfig,
        PreTrainedTokenizerFast,
        Qwen3Config,
        Qwen3ForCausalLM,
    )

    out_dir.mkdir(parents=True, exist_ok=True)
    raw = build_tokenizer()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<|endoftext|>",
        model_max_length=shape["max_positions"], clean_up_tokenization_spaces=False,
    )
    tokenizer.chat_template = template_file.read_text()
    tokenizer.save_pretrained(out_dir)
    ids = {t: raw.token_to_id(t) for t in SPECIAL_TOKENS + TOOL_TOKENS}
    hidden = shape["hidden_size"]
    config = Qwen3Config(
        vocab_size=shape["vocab_size"], hidden_size=hidden, intermediate_size=shape["intermediate_size"],
        num_hidden_layers=shape["layers"], num_attention_heads=shape["heads"],
        num_key_value_heads=shape["kv_heads"], head_dim=shape["head_dim"],
        max_position_embeddings=shape["max_positions"], rope_theta=1_000_000.0, tie_word_embeddings=True,
        bos_token_id=ids["<|endoftext|>"], eos_token_id=ids["<|im_end|>"], pad_token_id=ids["<|endoftext|>"],
        torch_dtype=shape["dtype"],
    )
    dtype = getattr(torch, shape["dtype"])
    torch.manual_seed(SEED)
    # Billions of weights initialise in seconds on a GPU, minutes on a CPU.
    device = "cuda" if torch.cuda.is_available() else "cpu"
    with torch.device(device):
        model = Qwen3ForCausalLM(config).to(dtype)
    with torch.no_grad():
        for layer in model.model.layers:
            layer.self_attn.o_proj.weight.mul_(shape["layer_scale"])
            layer.mlp.down_proj.weight.mul_(shape["layer_scale"])
        embeddings = model.model.embed_tokens.weight
        shared = torch.randn(hidden, generator=torch.Generator().manual_seed(SEED)).to(device, dtype)
        shared /= shared.norm()
        # Noise kept at the tiny model's size (relative to the shared direction), whatever the width.
        embeddings.mul_((128 / hidden) ** 0.5)
        embeddings += SHARED_DIRECTION * shared
        real = raw.get_vocab_size()
        embeddings[real:] = -SHARED_DIRECTION * shared
        for token_id in ids.values():
            embeddings[token_id] = -SHARED_DIRECTION * shared
    model.save_pretrained(out_dir, safe_serialization=True)
    GenerationConfig(
        bos_token_id=ids["<|endoftext|>"], eos_token_id=[ids["<|im_end|>"], ids["<|endoftext|>"]],
        pad_token_id=ids["<|endoftext|>"],
    ).save_pretrained(out_dir)
    print(json.dumps({"vocab_size": shape["vocab_size"], "tokenizer_size": real, "token_ids": ids,
                      "parameters": sum(p.numel() for p in model.parameters())}))


if __name__ == "__main__":
    if len(sys.argv) > 3:
        sized_model(Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3]))
    else:
        main(Path(sys.argv[1]), Path(sys.argv[2]))
