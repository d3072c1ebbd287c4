"""Where the weights come from: a gated or missing repository, a Hub id looked up on a host that
cannot reach huggingface.co, a full disk, remote code, an architecture this vLLM does not know (or knows
only as text)."""

from __future__ import annotations

import re

from stackctl.diagnosis.evidence import Evidence
from stackctl.diagnosis.inspection import inspection_failed
from stackctl.diagnosis.signature import CONSEQUENCE, Signature, found, signature
from stackctl.diagnosis.verdict import Cause, Diagnosis, Fix

_HF_REPO = re.compile(
    r"huggingface\.co/(?:api/models/)?(?P<repo>[\w.-]+/[\w.-]+?)(?:/resolve/|/revision/|/tree/|/auth-check|:|\.? |\.?$|/?$)")
_RESTRICTED = re.compile(r"(?:Access to model|Repo model) (?P<repo>[\w.-]+/[\w.-]+) is (?:restricted|gated)")


def _gated_model(evidence: Evidence) -> Diagnosis:
    repo = (evidence.read(_RESTRICTED) or evidence.read(_HF_REPO)).get("repo")
    for line in evidence.lines:  # the repository is often named a line or two away from the trigger
        if repo:
            break
        match = _RESTRICTED.search(line) or _HF_REPO.search(line)
        repo = match.group("repo") if match else None
    status = "403" if "403" in evidence.text or "not in the authorized list" in evidence.text else "401"
    why = ("the token has no access to it yet" if status == "403" else "no valid token was sent")
    page = f"https://huggingface.co/{repo}" if repo else "the model's Hugging Face page"
    return found(evidence, Cause.gated_model,
                 f"Hugging Face refused the gated model {repo or '(name not in the log)'} ({status}: {why})",
                 Fix(f"accept the model's terms at {page} with your account, then put a token with read access "
                     "in .env as HF_TOKEN and run `stackctl up` again", env="HF_TOKEN", value=repo),
                 **({"model": repo} if repo else {}))


_MISSING = (
    re.compile(r"Invalid repository ID or local directory specified: '(?P<ref>[^']+)'"),
    re.compile(r"(?P<ref>\S+) is not a local folder and is not a valid model identifier"),
    re.compile(r"HFValidationError: Repo id must[^:]*(?::[^:]*)*?: '(?P<ref>[^']+)'"),
    re.compile(r"No such file or directory: '?(?P<ref>[^']*?)/?config\.json"),
    re.compile(r"(?P<ref>\S+) does not appear to have a file named config\.json"),
    re.compile(r"it looks like (?P<ref>\S+) is not the path to a directory containing a file named"),
    re.compile(r"Incorrect path_or_model_id: '(?P<ref>[^']+)'"),
    # ModelScope's hub (VLLM_USE_MODELSCOPE=True): its 404, its 403 without a login, and the raw 404 of its API.
    re.compile(r"The request model: (?P<ref>\S+) does not exist"),
    re.compile(r"failed to access model (?P<ref>\S+) which may not exist or may be"),
    re.compile(r"Not Found for url: https?://(?:www\.)?modelscope\.cn/api/v1/models/(?P<ref>[^?\s]+?)/revisions"),
    # The Hub's 404 for a name that is no repository (requests' wording, before huggingface_hub's own).
    re.compile(r"404 Client Error: Not Found for url: https://huggingface\.co/(?P<ref>[^\s]+?)/resolve/"),
)
# Where the lookup went: ModelScope's hub when vLLM is told to use it (its name, or its hub's own
# wordings, which name no hub), else Hugging Face.
_MODELSCOPE = re.compile(r"modelscope|The request model: \S+ does not exist|failed to access model \S+ which may not",
                         re.IGNORECASE)


def _model_not_found(evidence: Evidence) -> Diagnosis:
    ref = next((values["ref"] for pattern in _MISSING if (values := evidence.read(pattern))), None)
    ref = ref.strip("`'\"") if ref else None
    if any(_MODELSCOPE.search(line) for line in evidence.lines):
        return _model_not_on_modelscope(evidence, ref)
    if ref and ref.startswith(("/", ".", "~")):
        return found(evidence, Cause.model_not_found,
                     f"the model directory {ref} is missing or holds no config.json",
                     Fix(f"point vllm.model_path (--model) in stack.yaml at a directory with the model's config.json "
                         f"and weights instead of {ref} (the demo model: `stackctl demo-model`)",
                         key="vllm.model_path", flag="--model", value=ref), model=ref)
    if ref and "/" not in ref:
        # A bare name: a Hub id is ORG/NAME, so this was meant as a local directory or a served name.
        return found(evidence, Cause.model_not_found,
                     f"'{ref}' is neither a local path nor a Hugging Face model id (ORG/NAME), so vLLM cannot load it",
                     Fix(f"vLLM's --model takes a Hugging Face model id (ORG/NAME, as on huggingface.co) or a local path "
                         f"to a directory with the model's config.json and weights; '{ref}' is neither (a name the "
                         "model is served or known by is not where its weights are): set `model:` in stack.yaml to a "
                         "profile or a Hub id, or download the model first (`huggingface-cli download ORG/NAME "
                         "--local-dir DIR`) and point vllm.model_path at that local path, then `stackctl up`",
                         key="vllm.model_path", flag="--model", value=ref), model=ref)
    return found(evidence, Cause.model_not_found,
                 f"'{ref or '?'}' is neither a local model directory nor a Hugging Face repository this host can see",
                 Fix("check the model (`model:` / vllm.model_path, --model, in stack.yaml) for a typo; a private or "
                     "gated repository also needs HF_TOKEN in .env", key="vllm.model_path", flag="--model",
                     env="HF_TOKEN"), **({"model": ref} if ref else {}))


def _model_not_on_modelscope(evidence: Evidence, ref: str | None) -> Diagnosis:
    """VLLM_USE_MODELSCOPE=True sends every model name that is not an existing local directory to
    ModelScope's hub, where a Hugging Face id, a bare name or a path that is not there is no model."""
    named = f"'{ref}'" if ref else "the model"
    return found(evidence, Cause.model_not_found,
                 f"ModelScope's hub has no model {named}: vLLM looks the model up on modelscope.cn (VLLM_USE_MODELSCOPE "
                 "is set), and a name that is not a local path nor a ModelScope id is not found there",
                 Fix("vLLM's --model takes a local path to a directory with the model's config.json and weights, or a "
                     "hub id: with VLLM_USE_MODELSCOPE set, a ModelScope id (ORG/NAME as modelscope.cn lists it, which "
                     "may differ from the Hugging Face id); a local path that does not exist is looked up as an id "
                     "too, and a private one needs a ModelScope login. Download the model first (`modelscope download --model ORG/NAME --local_dir DIR`, or "
                     "`huggingface-cli download`) and point vllm.model_path in stack.yaml at that local path, or "
                     "remove VLLM_USE_MODELSCOPE from vllm.environment to resolve Hugging Face ids",
                     key="vllm.model_path", flag="--model", env="VLLM_USE_MODELSCOPE"),
                 **({"model": ref} if ref else {}))


_NOT_ENOUGH_SPACE = re.compile(
    r"expected file size is: (?P<needed>[\d.]+) MB\. The target location (?P<path>\S+) only has (?P<free>[\d.]+) MB")


def _disk_full(evidence: Evidence) -> Diagnosis:
    values = evidence.read(_NOT_ENOUGH_SPACE)
    if values:
        summary = (f"the download needs {values['needed']} MB more but {values['path']} has "
                   f"{values['free']} MB free")
        where = f" ({values['path']})"
    else:
        summary, where = "the disk filled up (No space left on device) while writing the model", ""
    return found(evidence, Cause.disk_full, summary,
                 Fix(f"free space where hf_cache points{where} or set hf_cache in stack.yaml to a larger disk "
                     "(`stackctl doctor` compares the free space with the weights)", key="hf_cache"),
                 **({"needed_mb": float(values["needed"]), "free_mb": float(values["free"])} if values else {}))


_REMOTE_CODE_MODEL = re.compile(r"(?:Loading (?P<a>\S+) requires|The repository (?:for )?(?P<b>\S+) contains custom code)",
                                re.IGNORECASE)


def _trust_remote_code(evidence: Evidence) -> Diagnosis:
    names = evidence.read(_REMOTE_CODE_MODEL)
    model = names.get("a") or names.get("b")
    return found(evidence, Cause.trust_remote_code,
                 f"the model{' ' + model if model else ''} ships its own Python code, which vLLM will not run "
                 "unless told to",
                 Fix("read the repository's code, then add --trust-remote-code to vllm.extra_args",
                     key="vllm.extra_args", flag="--trust-remote-code"), **({"model": model} if model else {}))


_ARCHITECTURES = re.compile(
    r"Model architectures \[(?P<archs>[^\]]*)\] are not supported for now\.(?: Supported architectures: (?P<known>.*))?")
_MODEL_TYPE = re.compile(r"has model type `?(?P<type>[\w-]+)`? but Transformers does not recognize")


def _unknown_architecture(evidence: Evidence) -> Diagnosis:
    inspected = inspection_failed(evidence.text, evidence.lines)
    if inspected:
        # vLLM knows the architecture; its inspection subprocess failed: read by the cause its traceback states.
        named = inspected.name.removeprefix("architecture inspection: ")
        return found(evidence, Cause.unknown_architecture,
                     f"vLLM knows {named} but its inspection subprocess could not import the model's code",
                     Fix(inspected.text, key=inspected.key), architecture=named)
    listed = evidence.read(_ARCHITECTURES)
    archs = listed.get("archs", "").replace("'", "").strip()
    broken = archs and archs.split(",")[0].strip() in listed.get("known", "")
    name = archs or evidence.read(_MODEL_TYPE).get("type", "?")
    if broken:
        return found(evidence, Cause.unknown_architecture,
                     f"vLLM knows {name} but could not import its code: the engine install is broken or mismatched "
                     "(the traceback above names the missing piece)",
                     Fix("reinstall the engine (`stackctl install-engine`; Compose: pull images.vllm again)",
                         key="images.vllm"), architecture=name)
    return found(evidence, Cause.unknown_architecture,
                 f"this vLLM (or its transformers) does not know the model's architecture {name}",
                 Fix("use a newer vLLM that supports it (images.vllm, or the native engine), or a model profile this engine serves "
                     "(`stackctl profiles`)", key="images.vllm"), architecture=name)


def _multimodal_not_recognised(evidence: Evidence) -> Diagnosis:
    """vLLM refuses --limit-mm-per-prompt for a model it loads as text-only: the engine predates the
    model's multimodal architecture, or the checkpoint is a conversion it does not load as multimodal."""
    return found(evidence, Cause.multimodal_not_recognised,
                 "vLLM loaded the model as text-only, so it refuses --limit-mm-per-prompt (an option of multimodal "
                 "models): this vLLM does not know the model's vision architecture, or the checkpoint is in a format "
                 "it does not load as multimodal",
                 Fix("use a newer vLLM (images.vllm; natively `stackctl install-engine` with a newer release, or vLLM "
                     "from source for a model newer than any release) that lists the model among its supported "
                     "multimodal models; where the checkpoint is a conversion (e.g. an -hf export of InternVL), serve "
                     "the original checkpoint instead (vllm.model_path, e.g. OpenGVLab/InternVL3-8B); for a text-only "
                     "model remove --limit-mm-per-prompt from vllm.extra_args", key="images.vllm"))


def _hub_offline(evidence: Evidence) -> Diagnosis:
    repo = evidence.read(_HF_REPO).get("repo")
    named = f" {repo}" if repo else ""
    return found(evidence, Cause.hub_offline,
                 f"HF_HUB_OFFLINE is set, so the Hugging Face id{named} cannot be looked up: the model is named by its "
                 "Hub id, not by a directory",
                 Fix(f"download the model while online (`huggingface-cli download{named or ' REPO'}`; stackctl's "
                     "hf_cache is mounted) and point vllm.model_path (--model) in stack.yaml at the downloaded directory, or "
                     "unset HF_HUB_OFFLINE under vllm.environment so the id is resolved online",
                     key="vllm.model_path", flag="--model"), **({"model": repo} if repo else {}))


# urllib3's / requests' words when huggingface.co cannot be reached at all (no DNS, no route, a timeout).
_HUB_UNREACHABLE = (r"host='huggingface\.co'.*(?:Max retries exceeded|timed out)|huggingface\.co.*(?:NameResolutionError"
                    r"|Temporary failure in name resolution|getaddrinfo failed|Network is unreachable)"
                    # The Hub itself down or overloaded: its gateway's 5xx for a model's metadata.
                    r"|Server Error: [\w -]+ for url: https://huggingface\.co/")
_HUB_DOWN = re.compile(r"\b(?P<status>5\d\d) Server Error: [\w -]+ for url: https://huggingface\.co/(?:api/models/)?"
                       r"(?P<repo>[\w.-]+/[\w.-]+)")


# urllib3 names the host apart from the path: "host='huggingface.co' ... with url: /api/models/ORG/NAME/revision/main".
_URL_REPO = re.compile(r"with url: /(?:api/models/)?(?P<repo>[\w.-]+/[\w.-]+?)/(?:resolve|revision|tree)/")


def _model_not_cached_offline(evidence: Evidence) -> Diagnosis:
    down = evidence.read(_HUB_DOWN)
    repo = down.get("repo") or evidence.read(_HF_REPO).get("repo") or evidence.read(_URL_REPO).get("repo")
    named = f" {repo}" if repo else " REPO"
    why = (f"the Hub answered {down['status']} (it is down or overloaded), and vLLM asks it about a model named by "
           "its Hub id even when the files are cached" if down else
           "this host is offline (no DNS or route to the Hub), and the model is named by its Hub id")
    return found(evidence, Cause.model_not_cached_offline,
                 f"vLLM could not reach huggingface.co to look up{named if repo else ' the model'}: {why}",
                 Fix(f"download the model first where the Hub is reachable (`huggingface-cli download{named}`) into "
                     "stackctl's hf_cache (or copy the directory over), then either point vllm.model_path in stack.yaml "
                     "at that local path, or set HF_HUB_OFFLINE=1 under vllm.environment so vLLM uses the cached "
                     "copy without asking the Hub", key="vllm.model_path", env="HF_HUB_OFFLINE"),
                 **({"model": repo} if repo else {}))


_VOCAB_CACHE = re.compile(r"creating file \"(?P<directory>/\S+)/[0-9a-f]+\": Permission denied")


def _harmony_vocab_offline(evidence: Evidence) -> Diagnosis:
    cache = evidence.read(_VOCAB_CACHE).get("directory")
    if cache:
        # tiktoken-rs caches the downloaded vocab under /tmp/tiktoken-rs-cache by default: a directory
        # another user created first (a shared /tmp) is not writable by this one.
        return found(evidence, Cause.harmony_vocab_offline,
                     f"the harmony encoding's vocab could not be written to its cache directory {cache}: "
                     "vLLM's user may not write there (another user created it on a shared /tmp)",
                     Fix("give vLLM a writable cache directory of its own: set TIKTOKEN_RS_CACHE_DIR under "
                         "vllm.environment in stack.yaml (`vllm: {environment: {TIKTOKEN_RS_CACHE_DIR: /DIR}}`, a "
                         f"directory its user owns, e.g. under hf_cache), or remove the stale {cache} if nobody "
                         "else uses it; on a host without internet also put o200k_base.tiktoken there",
                         key="vllm.environment", env="TIKTOKEN_RS_CACHE_DIR"), directory=cache)
    return found(evidence, Cause.harmony_vocab_offline,
                 "the tokenizer's tiktoken vocabulary (gpt-oss's harmony encoding: o200k_base) could not be downloaded "
                 "from openaipublic.blob.core.windows.net: this host has no route to it",
                 Fix("put o200k_base.tiktoken and cl100k_base.tiktoken in a directory vLLM can read (under Compose, one "
                     "it mounts, e.g. the model directory) and point TIKTOKEN_ENCODINGS_BASE at it under "
                     "vllm.environment in stack.yaml (`vllm: {environment: {TIKTOKEN_ENCODINGS_BASE: /DIR}}`)",
                     key="vllm.environment", env="TIKTOKEN_ENCODINGS_BASE"))


SIGNATURES: tuple[Signature, ...] = (
    signature(Cause.gated_model,
              r"Cannot access gated repo|You are trying to access a gated repo|GatedRepoError|is restricted\. You must"
              r"|(?:401|403) Client Error\b.*huggingface\.co", _gated_model),
    signature(Cause.model_not_found,
              r"Invalid repository ID or local directory specified|is not a local folder and is not a valid"
              r"|HFValidationError: Repo id must|No such file or directory: .*config\.json"
              r"|does not appear to have a file named config\.json|Repository Not Found for url"
              r"|is not the path to a directory containing a file named|Incorrect path_or_model_id"
              r"|The request model: \S+ does not exist|failed to access model \S+ which may not exist"
              r"|Not Found for url: https?://(?:www\.)?modelscope\.cn/api/v1/models/"
              r"|404 Client Error: Not Found for url: https://huggingface\.co/\S+/resolve/", _model_not_found),
    signature(Cause.hub_offline, r"OfflineModeIsEnabled|offline mode is enabled", _hub_offline),
    signature(Cause.model_not_cached_offline, _HUB_UNREACHABLE, _model_not_cached_offline),
    signature(Cause.disk_full, r"No space left on device|\[Errno 28\]|StorageFull", _disk_full),
    signature(Cause.disk_full, r"Not enough free disk space to download the file", _disk_full, CONSEQUENCE),
    signature(Cause.trust_remote_code,
              r"set the option [`'\"]?trust_remote_code=True|passing the argument `trust_remote_code=True`"
              r"|contains custom code which must be executed",
              _trust_remote_code),
    signature(Cause.harmony_vocab_offline,
              r"error downloading or loading vocab file|openaipublic\.blob\.core\.windows\.net", _harmony_vocab_offline),
    signature(Cause.multimodal_not_recognised, r"[`']?limit_mm_per_prompt[`']? is only supported for multimodal models",
              _multimodal_not_recognised),
    signature(Cause.unknown_architecture,
              r"Model architectures \[.*\] are not supported for now|Error in inspecting model architecture"
              r"|Model architectures \[.*\] failed to be inspected"
              r"|but Transformers does not recognize this architecture", _unknown_architecture),
)
