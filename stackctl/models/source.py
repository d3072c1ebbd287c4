"""Where a model's config.json comes from: the Hub (`hf:ORG/NAME`, through huggingface_hub into
the stack's HF cache, a few KB) or a local directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

from stackctl.errors import ConfigError, StackError
from stackctl.models.derive import ModelSource

HF_PREFIX = "hf:"


def is_model_reference(value: str) -> bool:
    """`hf:ORG/NAME`, or a path to a directory (not a built-in profile name)."""
    return value.startswith((HF_PREFIX, ".", "~")) or "/" in value


def load_source(reference: str, *, hf_cache: Path, token: str | None = None) -> ModelSource:
    if reference.startswith(HF_PREFIX):
        return _from_hub(reference.removeprefix(HF_PREFIX).strip("/"), Path(hf_cache).expanduser(), token)
    directory = Path(reference).expanduser()
    if not (directory / "config.json").is_file():
        raise ConfigError(f"{reference}: no config.json there; pass a model directory or hf:ORG/NAME")
    config = _read_json(directory / "config.json", reference)
    return ModelSource(str(directory.resolve()), None, config, _template(directory))


def _from_hub(repo_id: str, hf_cache: Path, token: str | None) -> ModelSource:
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise ConfigError(f"hf:{repo_id}: expected hf:ORG/NAME, e.g. hf:Qwen/Qwen3-8B")
    config_path = _hub_file(repo_id, "config.json", hf_cache, token, required=True)
    assert config_path is not None
    config = _read_json(config_path, repo_id)
    template_path = _hub_file(repo_id, "chat_template.jinja", hf_cache, token, required=False)
    tokenizer_path = None if template_path else _hub_file(repo_id, "tokenizer_config.json", hf_cache, token,
                                                          required=False)
    template = template_path.read_text() if template_path else None
    if template is None and tokenizer_path is not None:
        template = _template_of(_read_json(tokenizer_path, repo_id))
    return ModelSource(repo_id, repo_id, config, template)


def _hub_file(repo_id: str, filename: str, hf_cache: Path, token: str | None, *, required: bool) -> Path | None:
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import (
        EntryNotFoundError,
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
    )

    try:
        endpoint = os.environ.get("HF_ENDPOINT", "").strip() or None  # read now, not at import
        return Path(hf_hub_download(repo_id, filename, cache_dir=hf_cache / "hub", token=token or None,
                                    endpoint=endpoint))
    except GatedRepoError:
        raise StackError(f"{repo_id} is gated: accept its terms at https://huggingface.co/{repo_id}, then put "
                         "HF_TOKEN=<your token> in .env and run this again") from None
    except RepositoryNotFoundError:
        raise StackError(f"no model {repo_id} on the Hub (or it is private: put HF_TOKEN=<your token> in .env)") from None
    except EntryNotFoundError:
        if required:
            raise StackError(f"{repo_id} has no {filename}: not a transformers model stackctl can derive") from None
        return None
    except LocalEntryNotFoundError:
        raise StackError(f"cannot reach the Hugging Face Hub for {repo_id} and {filename} is not cached; check the "
                         "network (or HF_ENDPOINT), or pass a local model directory") from None
    except HfHubHTTPError as error:
        raise StackError(f"the Hub refused {repo_id}/{filename}: {str(error).splitlines()[0]}") from None


def _template(directory: Path) -> str | None:
    if (directory / "chat_template.jinja").is_file():
        return (directory / "chat_template.jinja").read_text()
    if (directory / "tokenizer_config.json").is_file():
        return _template_of(_read_json(directory / "tokenizer_config.json", str(directory)))
    return None


def _template_of(tokenizer_config: dict) -> str | None:
    template = tokenizer_config.get("chat_template")
    if isinstance(template, list):  # [{"name": "default", "template": "..."}, ...]
        template = next((entry.get("template") for entry in template if isinstance(entry, dict)), None)
    return template if isinstance(template, str) else None


def _read_json(path: Path, what: str) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise ConfigError(f"{what}: {Path(path).name} is not readable JSON ({error})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{what}: {Path(path).name} is not a JSON object")
    return data
