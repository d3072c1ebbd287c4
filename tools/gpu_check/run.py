"""The GPU check, on the GPU host (no network): install from the joined pieces, bring the native
stack up on the GPU, check it, measure it, write one report. Standard library only until stackctl
itself is installed (its venv then runs the rest).

    python3 tools/gpu_check/run.py start --pieces DIR [--work /tmp/gpu-check] [--only PHASES]  # in the background
    python3 tools/gpu_check/run.py wait [--work ...] [--until SECONDS] [--out DIR] # progress, report
    python3 tools/gpu_check/run.py all --pieces DIR [--work ...] [--out DIR]       # in the foreground

Phases, each timed, each recorded in WORK/report.json as it ends (a phase that fails is recorded
and the next ones still run where they can): join (pieces -> checksums -> one archive -> files),
install (Debian's nginx/Prometheus/node-exporter unpacked; a venv for stackctl and the clients;
`stackctl install-engine --from`), model (`stackctl demo-model --shape`), stack (`stackctl init
--hardware generic --model DIR --runtime native` with the engine as engine.python, then `up`),
checks (doctor against the real driver, status, the gpu-exporter against nvidia-smi, the SDKs
through nginx and the proxy), memory (what vLLM says of its pool), connections (the backend
connections each proxy closes over streamed /v1/messages replies one after another), bench
(benchmarks/engine_routes.py, with the cores each server used), bench_mixed (each route beside
direct at the same time), bench_before and bench_before_mixed (an older proxy, .gpu-check/before,
the same two ways), bench_workers (this proxy with 2 and 8 workers, at 64 and
256 streams), session (tools/gpu_check/session.py replay), session_deep (36 layers), report.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PHASES = ("join", "install", "model", "stack", "checks", "memory", "connections", "bench", "bench_mixed",
          "bench_before", "bench_before_mixed", "bench_workers", "session", "session_deep")
# An older filter-proxy to measure beside this one in the same run (`git archive REV stackctl`
# unpacked here, carried with the call): the gateway's before/after on the same engine.
BEFORE = REPO / ".gpu-check" / "before"
# The later phases need these; the ones after them stand alone.
ESSENTIAL = ("join", "install", "model", "stack")


class Check:
    def __init__(self, work: Path, pieces: Path | None = None, levels: str = "1,16,64,256", tokens: int = 256,
                 hardware: str = "h100", rounds: int = 3) -> None:
        self.work = work
        self.hardware = hardware
        self.pieces = pieces
        self.levels = levels
        self.tokens = tokens
        self.rounds = rounds  # engine_routes' rounds per level (each paired with direct)
        self.bundle = work / "bundle"
        self.home = work / "home"
        self.stack = work / "stack"
        self.venv = work / "stackctl-venv"
        self.root = work / "root"
        self.report_file = work / "report.json"
        work.mkdir(parents=True, exist_ok=True)
        self.point_at_checkout()
        self.report: dict = json.loads(self.report_file.read_text()) if self.report_file.exists() else {
            "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "phases": {}}

    # -- plumbing ----------------------------------------------------------------------------

    @property
    def env(self) -> dict[str, str]:
        path = f"{self.venv / 'bin'}:{self.root / 'usr/sbin'}:{self.root / 'usr/bin'}:{os.environ.get('PATH', '')}"
        return {**os.environ, "PATH": path, "STACKCTL_HOME": str(self.home), "COLUMNS": "160",
                "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}

    def sh(self, argv: list[str], *, timeout: float = 900, check: bool = True, **kwargs) -> subprocess.CompletedProcess:
        self.log(f"$ {' '.join(str(part) for part in argv)}")
        done = subprocess.run([str(part) for part in argv], capture_output=True, text=True, timeout=timeout,
                              env=kwargs.pop("env", self.env), check=False, **kwargs)
        if done.returncode != 0 and check:
            raise RuntimeError(f"{argv[0]} {argv[1] if len(argv) > 1 else ''} exited {done.returncode}:\n"
                               f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return done

    @property
    def stackctl_argv(self) -> list:
        return [self.venv / "bin" / "python", "-m", "stackctl"]

    def stackctl(self, *args: str, timeout: float = 900, check: bool = True) -> subprocess.CompletedProcess:
        return self.sh([*self.stackctl_argv, "-C", self.stack, *args], timeout=timeout, check=check)

    def point_at_checkout(self) -> None:
        """`import stackctl` in the venv finds this checkout (its path may differ between calls)."""
        sites = sorted(self.venv.glob("lib/python3*/site-packages"))
        if sites:
            (sites[0] / "stackctl-checkout.pth").write_text(f"{REPO}\n")

    def log(self, message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)

    def save(self) -> None:
        self.report_file.write_text(json.dumps(self.report, indent=2, default=str))

    def run(self, phases: tuple[str, ...] = PHASES) -> None:
        for phase in phases:
            if self.report["phases"].get(phase, {}).get("ok"):
                continue
            self.log(f"phase {phase}")
            began = time.monotonic()
            entry: dict = {}
            try:
                entry["result"] = getattr(self, f"phase_{phase}")()
                entry["ok"] = True
            except Exception as error:  # noqa: BLE001 - recorded; later phases still run where they can
                entry["ok"] = False
                entry["error"] = f"{type(error).__name__}: {error}"[-6000:]
                self.log(f"phase {phase} FAILED: {entry['error'][-1500:]}")
                traceback.print_exc()
            entry["seconds"] = round(time.monotonic() - began, 1)
            self.report["phases"][phase] = entry
            self.save()
            if not entry["ok"] and phase in ESSENTIAL:
                self.log(f"stopping: every later phase needs {phase}")
                break
        self.report["finished"] = time.strftime("%Y-%m-%d %H:%M:%S %Z")
        self.save()
        (self.work / "report.md").write_text(markdown(self.report))
        (self.work / "done").write_text("done\n")

    # -- phases ------------------------------------------------------------------------------

    def phase_join(self) -> dict:
        assert self.pieces is not None, "--pieces DIR is needed"
        manifest = json.loads((self.pieces / "manifest.json").read_text())
        archive = self.work / "gpu-check.tar.xz"
        digest = hashlib.sha256()
        with open(archive, "wb") as joined:
            for piece in manifest["pieces"]:
                path = self.pieces / piece["name"]
                if not path.exists():
                    raise RuntimeError(f"piece {piece['name']} is missing from {self.pieces}")
                data = path.read_bytes()
                if hashlib.sha256(data).hexdigest() != piece["sha256"]:
                    raise RuntimeError(f"piece {piece['name']} is corrupted (sha256 differs)")
                digest.update(data)
                joined.write(data)
        if digest.hexdigest() != manifest["sha256"]:
            raise RuntimeError("the joined archive's sha256 differs from the manifest's")
        shutil.rmtree(self.bundle, ignore_errors=True)
        self.bundle.mkdir(parents=True)
        self.sh(["tar", "-xJf", archive, "-C", self.bundle])
        archive.unlink()
        return {"pieces": len(manifest["pieces"]), "bytes": manifest["bytes"], "contents": manifest.get("contents")}

    def phase_install(self) -> dict:
        found: dict = {}
        for deb in sorted((self.bundle / "debs").glob("*.deb")):
            self.sh(["dpkg-deb", "-x", deb, self.root])
        for directory in ("/var/log/nginx", "/var/lib/nginx"):
            Path(directory).mkdir(parents=True, exist_ok=True)
        found["nginx"] = self.sh(["nginx", "-v"]).stderr.strip()
        version = self.sh(["prometheus", "--version"])
        found["prometheus"] = (version.stdout + version.stderr).strip().splitlines()[0]
        # stackctl and the SDK clients: a venv that also sees the host's packages.
        host_python = Path(sys.executable)
        base = self.sh([host_python, "-c", "import sys; print(sys._base_executable)"]).stdout.strip()
        self.sh([base, "-m", "venv", "--without-pip", self.venv])
        site = self.sh([self.venv / "bin/python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
        host_site = self.sh([host_python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
        Path(site.stdout.strip(), "host-packages.pth").write_text(
            f"import site; site.addsitedir({host_site.stdout.strip()!r})\n")
        wheels = self.bundle / "stackctl"
        self.sh([self.venv / "bin/python", "-m", "pip", "install", "--no-index", "--find-links", wheels, "-q",
                 "--disable-pip-version-check", *(str(path) for path in sorted(wheels.glob("stackctl-*.whl"))),
                 "anthropic", "openai"])
        # stackctl itself runs from this checkout (it travels with every call), its dependencies
        # from the wheels: a fix made between two calls needs no new pieces.
        self.sh([self.venv / "bin/python", "-m", "pip", "uninstall", "-y", "-q", "stackctl"])
        self.point_at_checkout()
        found["stackctl"] = self.sh([*self.stackctl_argv, "--help"], check=False).stdout[:200]
        began = time.monotonic()
        installed = self.sh([*self.stackctl_argv, "install-engine", "--from", self.bundle / "engine",
                             "--python", host_python], timeout=1200)
        found["install_engine_seconds"] = round(time.monotonic() - began, 1)
        found["install_engine"] = installed.stdout[-2000:]
        found["engine_python"] = str(self.engine_python())
        return found

    def engine_python(self) -> Path:
        engines = sorted(self.home.glob("engines/vllm-cuda-*/bin/python"))
        if not engines:
            raise RuntimeError(f"no engine under {self.home}/engines")
        return engines[-1]

    def phase_model(self) -> dict:
        began = time.monotonic()
        done = self.sh([*self.stackctl_argv, "demo-model", "--shape", "qwen3-8b-widths",
                        "--python", self.engine_python(), "--out", self.work / "model"], timeout=900)
        config = json.loads((self.work / "model" / "config.json").read_text())
        keys = ("architectures", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                "num_key_value_heads", "head_dim", "vocab_size", "max_position_embeddings", "torch_dtype", "dtype")
        return {"seconds": round(time.monotonic() - began, 1), "output": done.stdout[-500:],
                "config": {key: config[key] for key in keys if key in config},
                "bytes": sum(path.stat().st_size for path in (self.work / "model").glob("*.safetensors"))}

    def phase_stack(self) -> dict:
        return self.bring_up(self.stack, self.work / "model")

    def bring_up(self, stack: Path, model: Path) -> dict:
        """`stackctl init --hardware H --model DIR --runtime native` with the installed engine as
        engine.python, then `up`."""
        import yaml  # the host's

        shutil.rmtree(stack, ignore_errors=True)
        init = self.sh([*self.stackctl_argv, "-C", stack, "init", "--hardware", self.hardware, "--model", model,
                        "--runtime", "native"])
        stack_file = stack / "stack.yaml"
        config = yaml.safe_load(stack_file.read_text())
        config["engine"] = {"python": str(self.engine_python())}
        config.setdefault("services", {})["grafana"] = False  # not a Debian package
        # The flags GPU profiles render (as for qwen3.6): an fp8 KV cache, 256 sequences (the
        # bench's highest level), vLLM's 8192-token batch budget (the h100 profile has it);
        # CUDA graphs stay on (no --enforce-eager).
        config["models"][config["model"]]["kv_cache_dtype"] = "fp8"
        vllm = config.setdefault("vllm", {})
        vllm["max_num_seqs"] = 256
        if self.hardware == "generic":
            vllm["extra_args"] = ["--max-num-batched-tokens", "8192"]
        vllm["environment"] = {"VLLM_SERVER_DEV_MODE": "1"}  # /reset_prefix_cache, for the session replay
        # One client key drives up to 256 streams: the default per-key limit (32 at once) would turn
        # most of them away with 429 (the first H100 run's proxied levels at 64 and 256).
        config["limits"] = {"max_concurrent": 0}
        stack_file.write_text(yaml.safe_dump(config))
        rendered = self.sh([*self.stackctl_argv, "-C", stack, "render"])
        began = time.monotonic()
        up = self.sh([*self.stackctl_argv, "-C", stack, "up"], timeout=900, check=False)
        seconds = round(time.monotonic() - began, 1)
        spec_file = stack / ".stackctl/launch/vllm.json"
        spec = json.loads(spec_file.read_text()) if spec_file.exists() else {}
        result = {"init": init.stdout[-3000:], "stack_yaml": stack_file.read_text(), "render": rendered.stdout[-500:],
                  "up_seconds": seconds, "up": up.stdout[-4000:] + up.stderr[-2000:], "vllm_argv": spec.get("argv")}
        if up.returncode != 0:
            raise RuntimeError(f"stackctl up failed (exit {up.returncode}):\n{result['up']}")
        return result

    def phase_checks(self) -> dict:
        result: dict = {}
        doctor = self.stackctl("doctor", "--json", check=False, timeout=600)
        try:
            rows = json.loads(doctor.stdout)
        except ValueError:
            rows = doctor.stdout[-3000:] + doctor.stderr[-2000:]
        result["doctor_exit"] = doctor.returncode
        result["doctor"] = rows
        result["status"] = self.stackctl("status", check=False).stdout
        result["gpu_exporter"] = self.compare_exporter()
        result["sdk"] = self.sdk_requests()
        result["prometheus_targets"] = self.prometheus_targets()
        return result

    def compare_exporter(self) -> dict:
        """stackctl's gpu-exporter beside nvidia-smi, read back to back."""
        import urllib.request

        config = self.stack_config()
        text = urllib.request.urlopen(f"http://127.0.0.1:{config['ports'].get('gpu_exporter', 9835)}/metrics",
                                      timeout=10).read().decode()
        fields = "memory.used,memory.total,utilization.gpu,temperature.gpu,power.draw"
        smi = self.sh(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits"]).stdout.strip()
        exported = {line.split("{")[0].split(" ")[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
                    if line and not line.startswith("#")}
        smi_values = dict(zip(fields.split(","), (float(value) for value in smi.splitlines()[0].split(","))))
        pairs = {"memory.used": exported.get("nvidia_smi_memory_used_bytes", float("nan")) / 2**20,
                 "memory.total": exported.get("nvidia_smi_memory_total_bytes", float("nan")) / 2**20,
                 "utilization.gpu": exported.get("nvidia_smi_utilization_gpu_ratio", float("nan")) * 100,
                 "temperature.gpu": exported.get("nvidia_smi_temperature_gpu", float("nan")),
                 "power.draw": exported.get("nvidia_smi_power_draw_watts", float("nan"))}
        # Memory must agree to the MiB; utilization, temperature and power move between two reads.
        tolerance = {"memory.used": 1.0, "memory.total": 1.0, "utilization.gpu": 10.0, "temperature.gpu": 2.0,
                     "power.draw": 30.0}
        rows = {name: {"exporter": round(pairs[name], 2), "nvidia_smi": smi_values[name],
                       "match": abs(pairs[name] - smi_values[name]) <= tolerance[name]} for name in pairs}
        return {"rows": rows, "all_match": all(row["match"] for row in rows.values()),
                "exported": {key: value for key, value in exported.items() if key.startswith(("nvidia_smi", "stackctl"))}}

    def sdk_requests(self) -> dict:
        config = self.stack_config()
        key = self.stackctl("connect", "key", "--show-key").stdout.strip()
        script = REPO / "tools" / "gpu_check" / "sdk_requests.py"
        results = {}
        for name, base in (("nginx", f"http://127.0.0.1:{config['ports'].get('http', 80)}"),
                           ("filter-proxy", f"http://127.0.0.1:{config['ports'].get('proxy', 4000)}")):
            done = self.sh([self.venv / "bin/python", script, base, config_model(self.stack)],
                           env={**self.env, "STACKCTL_CLIENT_KEY": key}, check=False, timeout=300)
            results[name] = json.loads(done.stdout) if done.returncode == 0 else {"error": done.stderr[-2000:]}
        return results

    def prometheus_targets(self) -> dict:
        import urllib.request

        config = self.stack_config()
        port = config["ports"].get("prometheus", 9090)
        deadline = time.monotonic() + 60
        while True:
            data = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/targets", timeout=10).read())
            targets = {target["labels"]["job"]: target["health"] for target in data["data"]["activeTargets"]}
            if all(health == "up" for health in targets.values()) or time.monotonic() > deadline:
                return targets
            time.sleep(3)

    def phase_memory(self) -> dict:
        log = (self.stack / ".stackctl" / "logs" / "vllm.log").read_text(errors="replace")
        wanted = ("Model loading took", "Available KV cache memory", "GPU KV cache size", "Maximum concurrency",
                  "Graph capturing finished", "init engine", "torch.compile", "Memory profiling", "CUDA graph",
                  "non-torch", "activation", "Using FlashAttention", "Using .* backend", "kv_cache_dtype", "fp8",
                  "max_num_batched_tokens", "Chunked prefill")
        lines = [line.strip() for line in log.splitlines() if any(re.search(word, line) for word in wanted)]
        smi = self.sh(["nvidia-smi", "--query-gpu=memory.used,memory.total", "--format=csv,noheader,nounits"]).stdout
        kv_tokens = [int(found.group(1).replace(",", "")) for found in
                     re.finditer(r"GPU KV cache size: ([\d,]+) tokens", log)]
        doctor = self.report["phases"].get("checks", {}).get("result", {}).get("doctor")
        rows = doctor.get("checks", []) if isinstance(doctor, dict) else []
        fit = next((row for row in rows if row.get("name") == "model-fit"), None)
        return {"vllm_log": lines[:80], "nvidia_smi_memory_mib": smi.strip(),
                "vllm_kv_cache_tokens": kv_tokens[-1] if kv_tokens else None, "doctor_model_fit": fit}

    def phase_bench(self) -> dict:
        out = self.work / "bench.json"
        done = self.sh([self.venv / "bin/python", REPO / "benchmarks/engine_routes.py", "--stack", self.stack,
                        "--levels", self.levels, "--tokens", str(self.tokens), "--rounds", str(self.rounds),
                        "--client-check", "--json", out],
                       timeout=1500)
        return {**json.loads(out.read_text()), "output": done.stdout[-6000:]}

    def phase_bench_mixed(self) -> dict:
        """Each route beside direct at the same time (engine_routes --mixed): the engine's swings
        between sequential passes then touch both sides."""
        out = self.work / "bench-mixed.json"
        done = self.sh([self.venv / "bin/python", REPO / "benchmarks/engine_routes.py", "--stack", self.stack,
                        "--levels", self.levels, "--tokens", str(self.tokens), "--rounds", str(self.rounds),
                        "--mixed", "--json", out], timeout=1500)
        return {**json.loads(out.read_text()), "output": done.stdout[-6000:]}

    def phase_bench_before_mixed(self) -> dict:
        """The older proxy (BEFORE), each route beside direct at the same time."""
        return self.before_bench("bench-before-mixed", mixed=True)

    def phase_bench_before(self) -> dict:
        """The same routes through an older filter-proxy (BEFORE) in front of the same vLLM."""
        return self.before_bench("bench-before", mixed=False)

    def before_bench(self, name: str, *, mixed: bool) -> dict:
        if not (BEFORE / "stackctl").is_dir():
            return {"skipped": f"no older proxy in {BEFORE}"}
        result = self.side_proxy_bench(BEFORE, 4100, [], name, self.levels, mixed=mixed)
        return {**result, "revision": (BEFORE / "REVISION").read_text().strip() if (BEFORE / "REVISION").exists() else None}

    def phase_bench_workers(self) -> dict:
        """This proxy with 2 and with 8 workers beside the stack's (auto: 4 on 16 cores), in front of
        the same vLLM at the high levels: where the CPU goes (vLLM's server, the proxy, the client)
        and whether fewer or more workers leave vLLM's API server more of the machine."""
        levels = ",".join(level for level in self.levels.split(",") if int(level) >= 64) or self.levels
        return {f"workers_{count}": self.side_proxy_bench(REPO, 4100 + count, ["--workers", str(count)],
                                                          f"bench-workers-{count}", levels)
                for count in (2, 8)}

    def phase_connections(self) -> dict:
        """Streamed /v1/messages replies one after another through the stack's proxy and the older
        one (BEFORE), in front of the same vLLM: how many connections to vLLM each opened for
        them. vLLM writes [DONE] and its body's end apart; a proxy that stops reading at [DONE]
        cannot keep the connection, and opens a new one for the next request. The stack's proxy
        also counts what it opened (stackctl_proxy_backend_connections_total)."""
        config = self.stack_config()
        vllm_port = config["ports"].get("vllm", 8000)
        proxy_port = config["ports"].get("proxy", 4000)
        result = {"this": self.connections_over_requests(proxy_port, vllm_port)}
        metrics = http.client.HTTPConnection("127.0.0.1", proxy_port, timeout=30)
        metrics.request("GET", "/metrics")
        text = metrics.getresponse().read().decode()
        result["this"]["opened_total"] = sum(float(line.split()[-1]) for line in text.splitlines()
                                             if line.startswith("stackctl_proxy_backend_connections_total"))
        if (BEFORE / "stackctl").is_dir():
            with self.side_proxy(BEFORE, 4100, [], "connections-before"):
                result["before"] = self.connections_over_requests(4100, vllm_port)
        return result

    def connections_over_requests(self, proxy_port: int, vllm_port: int, count: int = 40) -> dict:
        """`count` streamed replies on one client connection; the connections to vLLM seen
        established meanwhile that were not there before (looked at every 5 ms)."""
        client_key = self.dotenv()["STACKCTL_PROXY_KEYS"].split(",")[0].split("=", 1)[1]
        body = json.dumps({"model": config_model(self.stack), "stream": True, "max_tokens": 16,
                           "messages": [{"role": "user", "content": "Say something."}]})
        headers = {"x-api-key": client_key, "anthropic-version": "2023-06-01", "content-type": "application/json"}
        connection = http.client.HTTPConnection("127.0.0.1", proxy_port, timeout=120)

        def send(times: int) -> int:
            stops = 0
            for _ in range(times):
                connection.request("POST", "/v1/messages", body=body, headers=headers)
                stops += b"message_stop" in connection.getresponse().read()
            return stops

        send(8)  # warm: the pool has its connection
        known = established_towards(vllm_port)
        seen: set[int] = set()
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                seen.update(established_towards(vllm_port))
                time.sleep(0.005)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            stops = send(count)
        finally:
            done.set()
            watcher.join()
            connection.close()
        return {"requests": count, "whole_replies": stops, "new_connections": len(seen - known)}

    @contextlib.contextmanager
    def side_proxy(self, source: Path, port: int, extra: list[str], name: str) -> Iterator[None]:
        """A filter-proxy started from `source` on `port`, with the stack's keys, until the block ends."""
        dotenv = self.dotenv()
        env = {**self.env, "PYTHONPATH": str(source), "STACKCTL_PROXY_KEYS": dotenv["STACKCTL_PROXY_KEYS"],
               "VLLM_API_KEY": dotenv["VLLM_API_KEY"], "STACKCTL_PROXY_LOG_LEVEL": "warning"}
        config = self.stack_config()
        log_path = self.work / f"proxy-{name}.log"
        with open(log_path, "wb") as log:
            proxy = subprocess.Popen([self.venv / "bin/python", "-m", "stackctl", "filter-proxy", "serve",
                                      "--backend", f"http://127.0.0.1:{config['ports'].get('vllm', 8000)}",
                                      "--port", str(port), "--default-model", config_model(self.stack),
                                      "--max-concurrent", "0", *extra], env=env, stdout=log, stderr=subprocess.STDOUT,
                                     cwd=source)
        try:
            import urllib.request

            deadline = time.monotonic() + 60
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                    break
                except OSError:
                    if time.monotonic() > deadline or proxy.poll() is not None:
                        raise RuntimeError(f"the {name} proxy did not start: {log_path.read_text()[-2000:]}")
                    time.sleep(0.5)
            yield
        finally:
            proxy.terminate()
            proxy.wait(20)

    def side_proxy_bench(self, source: Path, port: int, extra: list[str], name: str, levels: str,
                         mixed: bool = False) -> dict:
        """engine_routes through a filter-proxy started from `source` on `port`, with the stack's keys."""
        with self.side_proxy(source, port, extra, name):
            out = self.work / f"{name}.json"
            done = self.sh([self.venv / "bin/python", REPO / "benchmarks/engine_routes.py", "--stack", self.stack,
                            "--levels", levels, "--tokens", str(self.tokens), "--rounds", str(self.rounds),
                            "--proxy-port", str(port),
                            "--routes", "direct,openai route,anthropic route", *(["--mixed"] if mixed else []),
                            "--json", out], timeout=1500)
        return {**json.loads(out.read_text()), "output": done.stdout[-6000:]}

    def phase_session(self) -> dict:
        recording = self.bundle / "session.json"
        env = {**self.env, "VLLM_API_KEY": self.dotenv()["VLLM_API_KEY"]}
        out = self.work / "session-report.json"
        config = self.stack_config()
        done = self.sh([self.venv / "bin/python", REPO / "tools/gpu_check/session.py", "replay", recording,
                        "--vllm-url", f"http://127.0.0.1:{config['ports'].get('vllm', 8000)}",
                        "--model", config_model(self.stack), "--json", out], env=env, timeout=1200)
        return {**json.loads(out.read_text()), "output": done.stdout[-4000:]}

    def phase_session_deep(self) -> dict:
        """The session again on a model of real depth (Qwen3-8B's 36 layers): what the prefix
        cache saves shows in TTFT there. The check's stack goes down first (one GPU)."""
        deep_model = self.work / "model-deep"
        # Down before the model is generated: its weights are made on the GPU, which vLLM's pool
        # (0.92 of it) leaves no room for (the second H100 run ran out of memory there).
        self.stackctl("down")
        began = time.monotonic()
        self.sh([*self.stackctl_argv, "demo-model", "--shape", "qwen3-8b-widths", "--layers", "36",
                 "--python", self.engine_python(), "--out", deep_model], timeout=900)
        generated = round(time.monotonic() - began, 1)
        deep = self.work / "stack-deep"
        try:
            up = self.bring_up(deep, deep_model)
            dotenv = dict(line.split("=", 1) for line in (deep / ".env").read_text().splitlines()
                          if "=" in line and not line.startswith("#"))
            out = self.work / "session-deep-report.json"
            done = self.sh([self.venv / "bin/python", REPO / "tools/gpu_check/session.py", "replay",
                            self.bundle / "session.json", "--vllm-url", "http://127.0.0.1:8000",
                            "--model", config_model(deep), "--json", out],
                           env={**self.env, "VLLM_API_KEY": dotenv["VLLM_API_KEY"].strip().strip('"')}, timeout=1200)
        finally:
            self.sh([*self.stackctl_argv, "-C", deep, "down"], check=False)
        return {**json.loads(out.read_text()), "model_seconds": generated, "up_seconds": up["up_seconds"],
                "output": done.stdout[-4000:]}

    # -- helpers -----------------------------------------------------------------------------

    def stack_config(self) -> dict:
        import yaml

        config = yaml.safe_load((self.stack / "stack.yaml").read_text())
        config.setdefault("ports", {})
        return config

    def dotenv(self) -> dict[str, str]:
        pairs = (line.split("=", 1) for line in (self.stack / ".env").read_text().splitlines() if "=" in line
                 and not line.startswith("#"))
        return {key.strip(): value.strip().strip('"').strip("'") for key, value in pairs}


def established_towards(port: int) -> set[int]:
    """The local ports of this host's established TCP connections to `port` (on loopback)."""
    found: set[int] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "01" and int(fields[2].rsplit(":", 1)[1], 16) == port:
                    found.add(int(fields[1].rsplit(":", 1)[1], 16))
    return found


def config_model(stack: Path) -> str:
    import yaml

    config = yaml.safe_load((stack / "stack.yaml").read_text())
    return config.get("served_model_name") or config.get("model")


def markdown(report: dict) -> str:
    lines = [f"# GPU check, {report.get('started')}", ""]
    for phase, entry in report["phases"].items():
        lines.append(f"- {phase}: {'ok' if entry.get('ok') else 'FAILED'} in {entry.get('seconds')} s"
                     + ("" if entry.get("ok") else f": {str(entry.get('error'))[:300]}"))
    bench = report["phases"].get("bench", {}).get("result")
    if bench:
        lines += ["", "## Routes", "", bench["table"]]
    before = report["phases"].get("bench_before", {}).get("result")
    if before and "table" in before:
        lines += ["", f"## Routes through the older proxy ({before.get('revision')}), same engine", "", before["table"]]
    mixed = report["phases"].get("bench_mixed", {}).get("result")
    if mixed:
        lines += ["", "## Each route beside direct, at the same time (half the streams each)", "", mixed["table"]]
    before_mixed = report["phases"].get("bench_before_mixed", {}).get("result")
    if before_mixed and "table" in before_mixed:
        lines += ["", f"## The older proxy ({before_mixed.get('revision')}), each route beside direct", "",
                  before_mixed["table"]]
    for name, result in (report["phases"].get("bench_workers", {}).get("result") or {}).items():
        lines += ["", f"## This proxy with {name.replace('_', ' ')}, same engine", "", result["table"]]
    session = report["phases"].get("session", {}).get("result")
    if session:
        lines += ["", "## Claude Code session replayed (prefix cache)", "",
                  "| turn | front: cached, TTFT | in-place: cached, TTFT |", "|---|---|---|"]
        front, in_place = session["placements"]["front"], session["placements"]["in-place"]
        for one, other in zip(front, in_place):
            lines.append(f"| {one['label']} | {one['cached_share']:.1%}, {one['ttft_ms']:.0f} ms "
                         f"| {other['cached_share']:.1%}, {other['ttft_ms']:.0f} ms |")
    deep = report["phases"].get("session_deep", {}).get("result")
    if deep:
        lines += ["", "## The same session on 36 layers (Qwen3-8B's depth)", "",
                  "| turn | front: cached, TTFT | in-place: cached, TTFT |", "|---|---|---|"]
        for one, other in zip(deep["placements"]["front"], deep["placements"]["in-place"]):
            lines.append(f"| {one['label']} | {one['cached_share']:.1%}, {one['ttft_ms']:.0f} ms "
                         f"| {other['cached_share']:.1%}, {other['ttft_ms']:.0f} ms |")
    return "\n".join(lines) + "\n"


def wait(work: Path, until: float, out: Path | None) -> int:
    """Show the background run's progress until it is done or `until` seconds have passed."""
    log = work / "run.log"
    deadline = time.monotonic() + until
    offset = 0
    while True:
        if log.exists():
            text = log.read_text(errors="replace")
            print(text[offset:], end="", flush=True)
            offset = len(text)
        if (work / "done").exists() or time.monotonic() > deadline:
            break
        time.sleep(5)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        for name in ("report.json", "report.md", "run.log", "bench.json", "bench-mixed.json", "bench-before.json",
                     "bench-before-mixed.json", "bench-workers-2.json", "bench-workers-8.json", "session-report.json",
                     "session-deep-report.json"):
            if (work / name).exists():
                shutil.copy(work / name, out / name)
        stack_logs = work / "stack" / ".stackctl" / "logs"
        if stack_logs.is_dir():
            subprocess.run(["tar", "-czf", str(out / "stack-logs.tar.gz"), "-C", str(stack_logs), "."], check=False)
    done = (work / "done").exists()
    print(f"\n{'DONE' if done else 'STILL RUNNING'}", flush=True)
    return 0 if done else 3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("start", "wait", "all", "phases"))
    parser.add_argument("--pieces", type=Path)
    parser.add_argument("--work", type=Path, default=Path("/tmp/gpu-check"))
    parser.add_argument("--until", type=float, default=540)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--only", default=",".join(PHASES), help="phases to run (with `phases`)")
    parser.add_argument("--levels", default="1,16,64,256")
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3, help="benchmark rounds per level (engine_routes --rounds)")
    parser.add_argument("--hardware", default="h100", help="the stack's hardware profile (generic reads the GPU)")
    options = parser.parse_args()
    options.work.mkdir(parents=True, exist_ok=True)
    if options.action == "start":
        argv = [sys.executable, __file__, "phases", "--only", options.only, "--work", str(options.work),
                "--levels", options.levels,
                "--tokens", str(options.tokens), "--rounds", str(options.rounds), "--hardware", options.hardware] + \
            (["--pieces", str(options.pieces)] if options.pieces else [])
        with open(options.work / "run.log", "ab") as log:
            subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, cwd=REPO)
        sys.exit(wait(options.work, options.until, options.out))
    if options.action == "wait":
        sys.exit(wait(options.work, options.until, options.out))
    check = Check(options.work, options.pieces, options.levels, options.tokens, options.hardware, options.rounds)
    (options.work / "done").unlink(missing_ok=True)
    check.run(PHASES if options.action == "all" else tuple(options.only.split(",")))


if __name__ == "__main__":
    main()
