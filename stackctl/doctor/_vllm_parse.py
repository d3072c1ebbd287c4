"""Run by the *engine's* interpreter (not stackctl's): parse a vLLM command line with vLLM's own
argument parser and report, as one JSON line on stdout, what vLLM would refuse.

stdin: {"args": [...], "env": [names], "platform": "cuda" | null, "architecture": name | null}.
Imports nothing from stackctl.
"""

import contextlib
import io
import json
import sys


def _parser():
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    try:  # vLLM >= 0.30 moved the server's CLI here
        from vllm.entrypoints.launchers.cli_args import make_arg_parser
    except ImportError:
        from vllm.entrypoints.openai.cli_args import make_arg_parser
    return make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))


def _registered(manager_path, class_name):
    try:
        module = __import__(manager_path, fromlist=[class_name])
        manager = getattr(module, class_name)
        if hasattr(manager, "list_registered"):
            return sorted(manager.list_registered())
        names = set(getattr(manager, "tool_parsers", {})) | set(getattr(manager, "reasoning_parsers", {}))
        return sorted(names | set(getattr(manager, "lazy_parsers", {})))
    except Exception:  # noqa: BLE001 - older layouts: the check degrades to "not listed"
        return None


def _pin_platform(name):
    """Parse as the CUDA build would on its GPU host. vLLM picks its platform by probing NVML;
    on a host without a visible GPU (a CI machine, a driver not loaded yet) it finds none, and
    its config defaults refuse to build. The flags mean the same either way."""
    if name != "cuda":
        return
    from vllm import platforms

    if platforms.resolve_current_platform_cls_qualname().endswith("UnspecifiedPlatform"):
        from vllm.platforms.cuda import CudaPlatform

        platforms._current_platform = CudaPlatform()


def _knows(architecture):
    if not architecture:
        return None
    from vllm.model_executor.models.registry import ModelRegistry

    return architecture in set(ModelRegistry.get_supported_archs())


def main():
    request = json.load(sys.stdin)
    import vllm

    _pin_platform(request.get("platform"))

    result = {"vllm_version": getattr(vllm, "__version__", "?"), "error": None}
    parser = _parser()
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            parser.parse_args(request["args"])
    except SystemExit:
        lines = [line for line in stderr.getvalue().splitlines() if line.strip()]
        result["error"] = lines[-1] if lines else "vLLM's parser refused the arguments"
    result["tool_parsers"] = _registered("vllm.tool_parsers", "ToolParserManager")
    result["reasoning_parsers"] = _registered("vllm.reasoning", "ReasoningParserManager")
    try:
        from vllm import envs

        known = set(envs.environment_variables)
        result["unknown_env"] = sorted(name for name in request.get("env", []) if name.startswith("VLLM_") and name not in known)
    except Exception:  # noqa: BLE001
        result["unknown_env"] = []
    result["architecture_known"] = _knows(request.get("architecture"))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
