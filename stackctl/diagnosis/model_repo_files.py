"""A Hugging Face repository that exists but holds no config.json at its top: "OSError: ORG/NAME does not appear to
have a file named config.json. Checkout 'https://huggingface.co/ORG/NAME/tree/main' for available files." Read by
the model-repo-without-config signature and by the fallback alike.

transformers says this only of a repository it reached (one that is not there is "Repository Not Found" or "not a
valid model identifier"), so the name is no typo: the repository holds a LoRA/PEFT adapter (adapter_config.json,
adapter_model.safetensors) or fine-tuning output without the base model's files (lm-sys/FastChat#1689:
project-baize/baize-lora-7B, merged into its base model; Stephen-SMJ/LLamaCare#1: a Llama-2 fine-tune), GGUF files
only, or the model in a subfolder. A local directory without config.json is model-not-found's own reading.
"""

from __future__ import annotations

import re

NO_CONFIG = re.compile(r"(?<![\w./~-])(?P<repo>[\w.~-]*[\w.-]/[\w.-]+) does not appear to have a file named config\.json")


def repo_without_config(text: str) -> str | None:
    """The Hub repository (ORG/NAME) that has no config.json, or None (a local path is no repository)."""
    match = NO_CONFIG.search(text)
    if match is None or match["repo"].startswith(("/", ".", "~")) or match["repo"].count("/") != 1:
        return None
    return match["repo"]


def repo_without_config_fix(repo: str) -> str:
    return (f"the Hugging Face repository {repo} exists but has no config.json at its top, so it is not a whole model "
            "vLLM can load: most often it holds a LoRA/PEFT adapter (adapter_config.json, adapter_model.safetensors) or "
            "fine-tuned files uploaded without the base model's (https://huggingface.co/"
            f"{repo}/tree/main lists them). Serve the base model it was fine-tuned from (adapter_config.json names it "
            "as base_model_name_or_path, a Llama-2 model, say) as `model:` / vllm.model_path in stack.yaml and load "
            f"the adapter on top with `--enable-lora --lora-modules NAME={repo}` in vllm.extra_args (requests then "
            "ask for model NAME); or merge the adapter into the base model (PEFT's merge_and_unload, then "
            "save_pretrained) and serve the merged directory. A repository of GGUF files only, or with the model in a "
            "subfolder, needs that file or folder named instead; then `stackctl up`")
