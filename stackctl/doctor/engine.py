"""The engine against the model: is the vLLM in the image (or the native venv) new enough for
the model's architecture, before anything downloads? Facts from stackctl/profiles/compat.yaml,
and from the image itself when it is present locally (its labels and environment in the fast
check; `import vllm` inside it in the full one)."""

from __future__ import annotations

import json
import re

from stackctl.doctor.context import DoctorContext
from stackctl.doctor.result import CheckResult, fail, ok, warn
from stackctl.engine.probe import probe_engine
from stackctl.profiles.compat import best_image, engine_serves, image_facts, min_driver
from stackctl.runtime.native_engine import NativeEngine, native_engine

IMAGE_RUN_TIMEOUT_S = 180
# Environment variables and labels that name the vLLM inside an image (NGC, vllm-openai, ours).
_VERSION_KEY = re.compile(r"^(?:NVIDIA_)?VLLM_VERSION$|vllm[._-]?version$", re.IGNORECASE)
_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[.+-][\w.]+)?")


def check_engine(ctx: DoctorContext) -> CheckResult:
    name = "engine"
    config = ctx.config
    if not config.hardware_profile.has_gpu:
        return ok(name, "vLLM's CPU build at stackctl's pin serves the demo model")
    architecture = config.model_profile.architecture
    if not ctx.runtime.needs_docker:  # vLLM runs from stackctl's venv, not from an image
        return _native_engine(ctx, name, architecture)
    image = str(ctx.services["vllm"].compose.get("image", ""))
    inspected = image_vllm_version(ctx, image)
    facts = image_facts(image)
    if inspected:
        verdict, source = engine_serves(inspected, architecture), f"vLLM {inspected} (from the local image)"
    elif facts and facts.exact_vllm:
        verdict, source = engine_serves(facts.exact_vllm, architecture), f"vLLM {facts.exact_vllm} (NGC {facts.tag})"
    elif facts:
        verdict = engine_serves(None, architecture, at_least=facts.vllm_at_least, at_most=facts.vllm_at_most)
        source = f"NGC {facts.tag}"
    else:
        return warn(name, f"{image}: not an NGC tag in stackctl's table and not pulled yet, so its vLLM is unknown "
                    f"({architecture} needs {_floor_text(architecture)})",
                    f"`docker pull {image}` and run `stackctl doctor` again (it asks the image), or use "
                    f"images.vllm: {_suggest(ctx, architecture)}")
    found = f"{image}: {source}; {verdict.reason}"
    if verdict.ok is False:
        return fail(name, found, _image_fix(ctx, architecture))
    if verdict.ok is None:
        return warn(name, found, "`docker pull` the image and run `stackctl doctor` (without --fast) to ask it, or use "
                    f"images.vllm: {_suggest(ctx, architecture)}")
    return ok(name, found)


def check_engine_version(ctx: DoctorContext) -> CheckResult:
    """The vLLM a local image really carries (`import vllm` in a throwaway container); natively,
    `import vllm` in the engine's interpreter and the GPUs its torch sees."""
    name = "engine-version"
    if not ctx.config.hardware_profile.has_gpu:
        return ok(name, "vLLM's CPU build (see the engine check)")
    if not ctx.runtime.needs_docker:
        engine = native_engine(ctx.config)
        if not engine.python.exists():
            return ok(name, f"{engine.python} is not installed yet (see the engine check)")
        return _native_engine_imports(ctx, name, engine)
    image = str(ctx.services["vllm"].compose.get("image", ""))
    if _inspect(ctx, image) is None:
        return ok(name, f"{image} is not pulled yet: the engine check used stackctl's table")
    output = ctx.facts.run(["docker", "run", "--rm", "--network", "none", "--entrypoint", "python3", image, "-c",
                            "import vllm; print(vllm.__version__)"])
    lines = (output.stdout.strip().splitlines() if output else []) or [""]
    if output is None or output.returncode != 0 or not _VERSION.fullmatch(lines[-1].strip()):
        detail = (output.stderr.strip().splitlines() or ["no output"])[-1] if output else "docker is not installed"
        return warn(name, f"could not ask {image} for its vLLM version: {detail}",
                    "check that the image runs (`docker run --rm IMAGE python3 -c 'import vllm'`)")
    version = lines[-1].strip()
    verdict = engine_serves(version, ctx.config.model_profile.architecture)
    found = f"{image} carries vLLM {version}; {verdict.reason}"
    if verdict.ok is False:
        return fail(name, found, _image_fix(ctx, ctx.config.model_profile.architecture))
    return ok(name, found)


def image_vllm_version(ctx: DoctorContext, image: str) -> str | None:
    """The vLLM version a locally present image states in its environment or labels."""
    details = _inspect(ctx, image)
    if not details:
        return None
    config = details.get("Config") or {}
    pairs = [entry.split("=", 1) for entry in config.get("Env") or [] if "=" in entry]
    pairs += list((config.get("Labels") or {}).items())
    for key, value in pairs:
        match = _VERSION.search(str(value)) if _VERSION_KEY.search(key) else None
        if match:
            return match.group(0)
    return None


def _inspect(ctx: DoctorContext, image: str) -> dict | None:
    output = ctx.facts.run(["docker", "image", "inspect", image])
    if output is None or output.returncode != 0:
        return None
    try:
        parsed = json.loads(output.stdout)
    except ValueError:
        return None
    return parsed[0] if isinstance(parsed, list) and parsed and isinstance(parsed[0], dict) else None


def _native_engine(ctx: DoctorContext, name: str, architecture: str | None) -> CheckResult:
    from stackctl.engine.gpu_install import installed_gpu_engines
    from stackctl.engine.install import EngineInstallError
    from stackctl.runtime.native_engine import plan_cuda_engine, serving_gpu_engine

    brought = native_engine(ctx.config)
    if brought.brought:
        return _brought_engine(ctx, name, brought, architecture)
    driver = ctx.driver_major
    engine = serving_gpu_engine(ctx.config)
    if engine is not None:
        needs = min_driver(engine.plan.cuda)
        found = (f"vLLM {engine.vllm_version} (CUDA {engine.torch_cuda or engine.plan.cuda}) in {engine.engine_dir}; "
                 f"{engine_serves(engine.vllm_version, architecture).reason}")
        if driver is not None and driver < needs:
            return fail(name, found + f"; its CUDA needs driver >= {needs}, found {driver}",
                        f"install nvidia-driver-{needs}-open (`sudo apt install nvidia-driver-{needs}-open`) and reboot")
        return ok(name, found)
    try:
        plan = plan_cuda_engine(ctx.config, driver)
    except EngineInstallError as error:
        return fail(name, f"no native vLLM engine can serve {architecture} here", str(error))
    older = ", ".join(info.vllm_version for info in installed_gpu_engines())
    found = (f"installed CUDA engines ({older}) predate {architecture}; " if older else "no CUDA engine installed yet; ")
    return warn(name, found + f"`up` installs vLLM {plan.vllm} (torch {plan.torch}, CUDA {plan.cuda}): {plan.reason}",
                "run `stackctl install-engine` now to download it (about 2.5 GB) before `up`")


def _brought_engine(ctx: DoctorContext, name: str, engine: NativeEngine, architecture: str | None) -> CheckResult:
    """stack.yaml's engine.python, from its installed metadata (no import: `doctor` imports it)."""
    probe = probe_engine(engine.python)
    where = f"engine.python {engine.python}"
    if probe.error or not probe.vllm:
        found = f"{where}: {probe.error or 'vLLM is not installed there'}"
        return fail(name, found, "point engine.python in stack.yaml at the python of an environment that has vLLM "
                    "(e.g. ~/vllm-env/bin/python), or remove engine.python to let stackctl install one")
    verdict = engine_serves(probe.vllm, architecture)
    found = f"{where}: {probe.summary}; {verdict.reason}"
    if verdict.ok is False:
        return fail(name, found, f"install a newer vLLM there (`{engine.python} -m pip install 'vllm>={_floor(architecture)}'`), "
                    "or remove engine.python to let stackctl install one that serves the model")
    return ok(name, found)


def _native_engine_imports(ctx: DoctorContext, name: str, engine: NativeEngine) -> CheckResult:
    """`import vllm` in the native engine's interpreter, and the GPUs its torch sees."""
    probe = probe_engine(engine.python, deep=True)
    where = f"{engine.python} ({engine.origin})"
    if probe.error:
        return fail(name, f"{where}: {probe.error}", "the engine cannot start: repair that environment (the error "
                    "names the missing or broken package), or point engine.python at one that imports vLLM")
    found = f"{where}: {probe.summary}"
    if not probe.cuda:
        return fail(name, f"{found}: its torch is a CPU build", "install the CUDA torch that vLLM pins there "
                    f"(`{engine.python} -m pip install torch=={(probe.torch or '').split('+')[0]}` from PyPI), or "
                    "point engine.python at an environment with a CUDA torch")
    if not probe.gpus:
        driver = ctx.driver_major
        needs = min_driver(probe.cuda)
        if driver is not None and driver < needs:
            return fail(name, f"{found}: sees no GPU; its CUDA {probe.cuda} needs driver >= {needs}, found {driver}",
                        f"install nvidia-driver-{needs}-open (`sudo apt install nvidia-driver-{needs}-open`) and reboot")
        return fail(name, f"{found}: torch sees no GPU", "check `nvidia-smi` and that CUDA_VISIBLE_DEVICES (if set) "
                    "names a GPU of this host")
    return ok(name, f"{found}; imports and sees {len(probe.gpus)} GPU(s): {', '.join(sorted(set(probe.gpus)))}")


def _floor(architecture: str | None) -> str:
    from stackctl.profiles.compat import architecture_floor

    floor = architecture_floor(architecture)
    return floor.vllm if floor else "0"


def _sm(ctx: DoctorContext) -> str | None:
    sms = sorted({gpu.sm for gpu in ctx.gpu_query.gpus if gpu.sm})
    return sms[0] if sms else ctx.config.hardware_profile.sm


def _suggest(ctx: DoctorContext, architecture: str | None) -> str:
    chosen = best_image(architecture, _sm(ctx), ctx.driver_major)
    return chosen.reference if chosen else "a tag from `stackctl profiles`"


def _image_fix(ctx: DoctorContext, architecture: str | None) -> str:
    sm, driver = _sm(ctx), ctx.driver_major
    chosen = best_image(architecture, sm, driver)
    if chosen is not None:
        return (f"set images.vllm: {chosen.reference} in stack.yaml (vLLM {chosen.vllm}, CUDA {chosen.cuda}: the newest "
                f"tag in stackctl's table that serves {architecture}" + (f" on {sm}" if sm else "")
                + (f" with driver {driver}" if driver else "") + "), or remove images.vllm to get the default")
    anywhere = best_image(architecture, sm)
    if anywhere is not None:
        needs = min_driver(anywhere.cuda)
        return (f"no tag in stackctl's table serves {architecture} with driver {driver}: install "
                f"nvidia-driver-{needs}-open and reboot, then use images.vllm: {anywhere.reference}")
    return f"no NGC tag in stackctl's table serves {architecture}; pick an image with vLLM {_floor_text(architecture)}"


def _floor_text(architecture: str | None) -> str:
    from stackctl.profiles.compat import architecture_floor

    floor = architecture_floor(architecture)
    return f"vLLM >= {floor.vllm}" if floor else "a vLLM that knows it"
