"""What a log itself names as the remedy: a flag, a setting, a variable, a package, a file, a path to
make writable, a driver to update, a command to run or a config directive, with the value it states
where it states one.

Only the error message and the hint lines near it are read, and only in the phrases that offer a
remedy ("try", "set", "increase", "install", ...), so a flag echoed in a command line or a
variable printed for debugging is not taken for a fix.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum


class RemedyKind(str, Enum):
    flag = "flag"
    # A snake_case setting ("Try increasing max_loras"): a flag for the engine, a configuration
    # setting for any other service (never turned into a flag the service does not have).
    setting = "setting"
    env = "env"
    package = "package"
    file = "file"
    # A path the log asks write access to ("Make sure you have write access to /var/lib/x").
    writable = "writable"
    # The GPU driver the log asks to update ("please update your driver").
    driver = "driver"
    # A flag the log refuses or asks not to use ("unknown long flag '--x'", "instead of via the
    # `--model` option"): to take off the command line.
    drop_flag = "drop_flag"
    # A command the log quotes to run ("run `supervisorctl reload`").
    command = "command"
    directive = "directive"
    # A port another process holds ("address already in use"): name = the port the log states, or "".
    port = "port"
    # A path the service may not use ("open /prometheus/lock: permission denied"): its owner or mode.
    permission = "permission"
    # A program without its execute bit ("command at '/run.sh' is not executable").
    executable = "executable"
    # A directory where a file is expected ("read /etc/prometheus/x.yml: is a directory").
    directory_for_file = "directory_for_file"
    # A component the log says is too old ("please upgrade your client", "your version of
    # Transformers is out of date"): name = the component, value = the version it asks for.
    upgrade = "upgrade"
    # An action the log asks for in words ("Please stop the apache2 program temporarily and then try
    # again"): name = the action as the log says it.
    stated = "stated"
    # What the operating system or a server says ran out, whatever the service (name: what ran out;
    # value: the path, or when to retry, where the log states it): the disk ("no space left on device"),
    # a server's rate limit ("too many requests"), a lock another process holds ("lock DB directory:
    # resource temporarily unavailable"), and a data file found empty or cut short ("unexpected end of
    # JSON input", "invalid magic number 0").
    disk_full = "disk_full"
    rate_limited = "rate_limited"
    lock_held = "lock_held"
    data_truncated = "data_truncated"


# Resources run out: their value says where (a path) or when (a retry time), never a value to set.
EXHAUSTED = frozenset({RemedyKind.disk_full, RemedyKind.rate_limited, RemedyKind.lock_held, RemedyKind.data_truncated})


@dataclass(frozen=True)
class Remedy:
    kind: RemedyKind
    name: str  # "--max-num-batched-tokens", "max_loras", "TIKTOKEN_ENCODINGS_BASE", "flash-attn", "/etc/x.pem"
    value: str | None = None  # "8192", where the log states it


# Phrases that offer a remedy; a line without one names none (an echoed command, a stack frame).
_OFFER = re.compile(
    r"\b(?:please|try|consider|you (?:can|may|might|should|need|must|have to)|to (?:fix|resolve|avoid|enable|use)"
    r"|hint|set(?:ting)?|increas\w*|decreas\w*|reduc\w*|lower\w*|rais\w*|install\w*|upgrad\w*|specify|pass\w*"
    r"|enabl\w*|disabl\w*|add\w*|remov\w*|unset|export|make sure|ensure|requires?|needs?|must be|instead"
    r"|is not set|not found|no such|missing|cannot (?:open|load|find)|could not (?:open|load|find|read))\b"
    r"|\buse\s+[`'\"]?--?[a-z]",
    re.IGNORECASE,
)
_ECHOED_COMMAND = re.compile(r"^\s*usage: |exec command: \[|Command '\[|--load-kmods|^\s*\$ |^\s*\+ ")
# A command a line says failed, echoed whole ("iptables failed: iptables --wait -I FORWARD ..."):
# its flags are what was run, not a remedy.
_FAILED_COMMAND = re.compile(r"\b(?P<program>[\w.-]+) failed: (?P=program) [^:]*")
# A flag's value: any word after `=` ("--dtype=half"), only a number or a quoted string after a space
# (the next word of a sentence is no value: "use --enforce-eager in the CLI").
# A flag's name ends where its word does ("--compat32" is no "--compat").
_FLAG = re.compile(r"(?<![\w-])(?P<name>--[a-z][a-z0-9]*(?:[-.][a-z0-9]+)+|--[a-z][a-z0-9]{2,})(?![\w])"
                   r"(?:=(?P<word>[\w.:/+-]*\w)|\s+(?P<value>\d[\w.]*|'[^']+'|\"[^\"]+\"))?")
# A tool's own argument list, echoed where the terminal wrapped the command or quoted without a marker
# ("--compute --compat32 --graphics --utility --require=cuda>=8.0 --pid=32239"): three options or more in
# a row, each with at most its value, are a command that ran, never a sentence offering one of them.
_OPTION = r"(?<![\w-])--?[A-Za-z][\w.-]*(?:=\S*|\s+(?:\d\S*|/\S*|'[^']*'|\"[^\"]*\"))?"
_ARGUMENT_LIST = re.compile(rf"{_OPTION}(?:\s+{_OPTION}){{2,}}")
# Flags a line names as what is wrong, not what to add: a flag refused ("unknown long flag
# '--collector.x'", "unrecognized arguments: --x"), one to stop using ("instead of via the `--model`
# option"), the flags of an install command it quotes, and help.
_NOT_TO_ADD = re.compile(
    r"\b(?:unknown|unrecognized|unrecognised|invalid|unsupported|unexpected|deprecated) (?:long |short )?"
    r"(?:flag|option|argument|parameter)s?:?\s+(?:[`'\"]?--[\w.-]+[`'\"]?[\s,]*)+"
    r"|\binstead of (?:via |using )?(?:the )?[`'\"]?--[\w.-]+"
    r"|\bpip3? install [^`'\"]*|(?<![\w-])--(?:help|version)\b",
    re.IGNORECASE)
# An engine setting named in code form right after the verb that offers it: "Try increasing
# `max_num_batched_tokens`" (not any quoted name on such a line: "When using `tool_choice`, `tools`
# must be set" names no remedy, and an error type such as 'value_error' is no setting).
_SETTING = re.compile(r"(?:\b(?:increas|decreas|reduc|lower|rais|set|specify|pass|enabl|disabl|adjust|tun)\w*"
                      r"|\b(?:make sure|ensure)(?: that)?)\s*"
                      r"(?:the\s+|your\s+)?(?:option\s+|argument\s+|parameter\s+)?"
                      r"[`'\"](?P<name>(?-i:[a-z][a-z0-9]*(?:_[a-z0-9]+)+))[`'\"](?:\s*(?:to|=|>=|<=)\s*(?P<value>\d[\d.]*))?",
                      re.IGNORECASE)
# A setting assigned inside quotes: "set the option `trust_remote_code=True`", "set `wire_api =
# "responses"`", "set 'enforce_eager=True'".
_QUOTED_ASSIGNMENT = re.compile(r"\b(?:set|pass|use|add|specify)\w*\s+(?:the\s+)?(?:option\s+|argument\s+|parameter\s+)?"
                                r"(?:`(?P<tname>[a-z][a-z0-9_]*)\s*=\s*(?P<tvalue>[^`]+)`"
                                r"|'(?P<sname>[a-z][a-z0-9_]*)\s*=\s*(?P<svalue>[^']+)')",
                                re.IGNORECASE)
# The same, unquoted: "Please increase max_num_batched_tokens." (snake_case names a setting).
_BARE_SETTING = re.compile(r"\b(?:increas|decreas|reduc|lower|rais|set|specify|pass|enabl|disabl|adjust)\w*\s+"
                           r"(?:the\s+)?(?P<name>(?-i:[a-z][a-z0-9]*(?:_[a-z0-9]+)+))\b(?:\s*(?:to|=)\s*(?P<value>\d[\d.]*))?",
                           re.IGNORECASE)
# An engine setting said in words after the verb that offers it: "Decrease GPU memory utilization or
# reduce GPU memory used by other processes" (vLLM), "try increasing the context size" (an
# OpenAI-compatible server's refusal).
_SPOKEN_SETTINGS = {
    "gpu memory utilization": "gpu_memory_utilization", "gpu_memory_utilization": "gpu_memory_utilization",
    "max model len": "max_model_len", "maximum model length": "max_model_len", "max model length": "max_model_len",
    "context size": "max_model_len", "context length": "max_model_len",
    "max num seqs": "max_num_seqs", "maximum number of sequences": "max_num_seqs",
    "tensor parallel size": "tensor_parallel_size",
}
_SPOKEN_SETTING = re.compile(r"\b(?:increas|decreas|reduc|lower|rais|adjust)\w*\s+(?:the\s+|your\s+)?(?:model'?s?\s+)?"
                             r"(?P<words>" + "|".join(name.replace(" ", r"\s+") for name in _SPOKEN_SETTINGS) + r")\b",
                             re.IGNORECASE)
_SETTING_VERB = re.compile(r"\b(?:increas|decreas|reduc|lower|rais|set|specify|pass|enabl|disabl|adjust|tun)\w*"
                           r"|\b(?:make sure|ensure)\b",
                           re.IGNORECASE)
_ENV_NAMED = re.compile(
    r"(?:\bset(?:ting)?|\bexport|\bunset|environment variables?|env(?:ironment)? var(?:iable)?s?|\bvariables?)"
    r"\s+(?:(?:the|a|an|your)\s+)?[`'\"]?(?P<name>[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)[`'\"]?"
    # A value after `=`, or after "to" when it looks like one (a number, a path, a quoted string).
    r"(?:\s*=\s*[`'\"]?(?P<value>[^\s`'\",;]+)|\s+to\s+[`'\"]?(?P<to>\d[\w.]*|/[^\s`'\",;]+|(?<=[`'\"])[^`'\"]+))?"
)
# "set GOMAXPROCS=4": a one-word variable only where it is assigned right after the verb.
_ENV_SET = re.compile(r"\b(?:set|export)\s+[`'\"]?(?P<name>[A-Z][A-Z0-9_]{2,})=(?P<value>[^\s`'\",;]+)")
# "Manually set the network interface to bind to with GLOO_SOCKET_IFNAME" (PyTorch's wording).
_ENV_WITH = re.compile(r"\bset\b[^.;]{0,60}?\b(?:with|via|using)\s+(?:the\s+)?[`'\"]?"
                       r"(?P<name>[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b")
_ENV_ASSIGNED = re.compile(r"(?<![\w-])(?P<name>[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)=(?P<value>[^\s`'\",;)]+)")
# Variables a log names for debugging, not as a fix.
_DEBUG_ONLY = frozenset({
    "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "CUDA_LAUNCH_BLOCKING", "TORCH_USE_CUDA_DSA", "VLLM_LOGGING_LEVEL",
    "TORCH_SHOW_CPP_STACKTRACES", "HYDRA_FULL_ERROR", "RUST_BACKTRACE", "TORCH_DISTRIBUTED_DEBUG",
    "VLLM_TRACE_FUNCTION", "TORCH_LOGS", "TORCHDYNAMO_VERBOSE", "GODEBUG", "PYTHONFAULTHANDLER",
})
_PACKAGE = (
    re.compile(r"\bpip3? install (?:-U |--upgrade |--no-build-isolation |-q )*[`'\"]?(?P<name>[A-Za-z][\w.\-\[\]]*"
               r"(?:[=<>!~]=?[\w.*]+)?)"),
    re.compile(r"\bapt(?:-get)? install (?:-y )?(?P<name>[a-z0-9][\w.+-]+)"),
    re.compile(r"No module named [`'\"](?P<module>[\w.]+)[`'\"]"),
    re.compile(r"\b(?:please )?install (?:the )?[`'\"](?P<name>[\w.-]+)[`'\"]", re.IGNORECASE),
    re.compile(r"\brequires? (?:the )?[`'\"]?(?P<name>[\w-]+)[`'\"]? (?:package|library)", re.IGNORECASE),
    # "You need to have sentencepiece installed to convert a slow tokenizer" (transformers' wording).
    re.compile(r"\b(?:need|needs|require|requires) (?:to have )?[`'\"]?(?P<name>[a-z][\w.-]*)[`'\"]? installed"),
)
# PyTorch's allocator options ("try setting max_split_size_mb to avoid fragmentation"): no engine
# setting, a part of PYTORCH_CUDA_ALLOC_CONF.
_ALLOCATOR_OPTIONS = frozenset({"max_split_size_mb", "expandable_segments", "garbage_collection_threshold"})
# "pip install git+https://github.com/huggingface/transformers.git": the package is the repository's.
_GIT_SOURCE = re.compile(r"\bgit\+https?://[^\s`'\"]+/(?P<name>[\w.-]+?)(?:\.git)?(?:@[\w.-]+)?(?=[\s`'\"]|$)")
# Python modules whose package has another name.
_MODULE_PACKAGES = {
    "flash_attn": "flash-attn", "cv2": "opencv-python-headless", "yaml": "pyyaml", "PIL": "pillow",
    "sklearn": "scikit-learn", "google.protobuf": "protobuf", "sentencepiece": "sentencepiece",
    "vllm_flash_attn": "vllm-flash-attn", "flashinfer": "flashinfer-python", "mistral_common": "mistral-common",
}
_FILE = (
    re.compile(r"No such file or directory: [`'\"](?P<path>[^`'\"]+)[`'\"]"),
    re.compile(r"(?P<path>[\w.+-]+\.so(?:\.\d+)*): cannot open shared object file"),
    # nginx's open() of a file that is not there (one it may not open is a permission, below).
    re.compile(r"open\(\) \"(?P<path>[^\"]+)\" failed(?! \(13: Permission denied\))"),
    re.compile(r"cannot load certificate(?: key)? \"(?P<path>[^\"]+)\""),
    re.compile(r"\b(?:open|stat|read|mkdir|lstat) (?P<path>/[\w./@:+-]+): (?:no such file|not a directory)",
               re.IGNORECASE),
    re.compile(r"(?:could not|couldn't|cannot|can't|unable to|failed to) (?:open|read|find|load|stat|access) "
               r"(?:file |directory |config(?:uration)? file )?[`'\"]?(?P<path>/[\w./@:+-]+[\w/])", re.IGNORECASE),
    re.compile(r"(?P<path>/[\w./@:+-]+[\w]): No such file or directory"),
    # A call the line quotes with its path, and the system's "No such file" in its reason (OpenSSL through
    # nginx: 'BIO_new_file("/etc/letsencrypt/live/x/fullchain.pem") failed (SSL: ...No such file or directory').
    re.compile(r"\w\([`'\"](?P<path>/[\w./@:+-]*\w)[`'\"]\) failed \([^)]*No such file or directory"),
)
_WRITABLE = (
    re.compile(r"\b(?:make sure|ensure)\b[^.;]{0,40}?\bwrite (?:access|permissions?) (?:to|on|for) (?:the )?"
               r"(?:\w+ )?[`'\"]?(?P<path>/[\w./@:+-]*[\w/])", re.IGNORECASE),
    re.compile(r"[`'\"]?(?P<path>/[\w./@:+-]*[\w/])[`'\"]? (?:is not|isn't) writable", re.IGNORECASE),
)
_PATH = r"[`'\"]?(?P<path>/[\w./@:+-]*[\w/])[`'\"]?"
# A path the service may not read or write, in the words of Go, Python, coreutils and grafana-cli.
_PERMISSION = (
    re.compile(r"\b(?:open|stat|read|write|mkdir|lstat|create|chmod|chown|unlink|remove|rename|access|exec)\w* "
               + _PATH + r": (?:permission denied|operation not permitted|read-only file system)", re.IGNORECASE),
    re.compile(r"\b(?:could not|couldn't|can't|cannot|unable to|failed to) (?:create|open|write|read|access|make)\w*"
               r"(?: (?:directory|file|dir|folder))? " + _PATH + r"[.:,]?\s+(?:\(\w+\)\s*)?permission denied",
               re.IGNORECASE),
    re.compile(r"\bpermission denied:? " + _PATH, re.IGNORECASE),
    # The same refusal in the words of Go without its operation ("/prometheus/queries.active: permission
    # denied"), Go with a relative path ("mkdir data: permission denied"), Rust ('creating file "/x":
    # Permission denied (os error 13)'), supervisord ("couldn't chdir to /x: EACCES") and nginx.
    re.compile(r"(?:^|[\s\"'=])(?P<path>/[\w./@+-]*[\w/])[`'\"]?: (?:permission denied|operation not permitted)",
               re.IGNORECASE),
    re.compile(r"\b(?:open|mkdir|stat|lstat|create|chmod|chown|unlink|remove|rename) (?P<path>[\w.-]+(?:/[\w.-]+)*): "
               r"permission denied", re.IGNORECASE),
    re.compile(r"\b(?:creating|opening|writing|reading|removing) (?:file|directory|dir) [`'\"]?(?P<path>/[\w./@:+-]*[\w/])"
               r"[`'\"]?: permission denied", re.IGNORECASE),
    re.compile(r"\bcouldn't (?:chdir to|open|create|write to) (?P<path>\S+?):? EACCES\b"),
    # nginx's system calls: 'open() "/var/lib/nginx/body/0000000001" failed (13: Permission denied)'.
    re.compile(r"\b\w+\(\) \"(?P<path>/[^\"]+)\" failed \(13: Permission denied\)"),
)
_LIMITS_STEP = re.compile(r"Failed at step LIMITS spawning")
_EXECUTABLE = re.compile(_PATH + r" is not executable", re.IGNORECASE)
# exec's EACCES: the program lacks its execute bit (supervisord: "couldn't exec mytool: EACCES").
_EXEC_DENIED = re.compile(r"\bcouldn't exec (?P<path>\S+?):? EACCES\b")
_DIRECTORY_FOR_FILE = (
    re.compile(r"\b(?:open|read|stat|load)\w* " + _PATH + r": is a directory", re.IGNORECASE),
    re.compile(r"\[Errno 21\] Is a directory: " + _PATH),
)
# A port taken, and the number where the line states it (after the words that introduce it, so a
# timestamp's minutes are no port).
_PORT_TAKEN = re.compile(r"address already in use|\(98: Address in use\)|\bEADDRINUSE\b|already in use by another "
                         r"process|port is already (?:in use|allocated)|could not bind\b|already listening on (?:TCP |UDP )?port", re.IGNORECASE)
_PORT_NUMBER = re.compile(r"\b(?:bind|listen|address|port)\b.{0,40}?(?:\bport\s+|:|, |\s)(?P<port>\d{2,5})\b(?!\d|\.\d)",
                          re.IGNORECASE)
# Resources exhausted, whatever the service says it in.
_DISK_FULL = re.compile(r"no space left on device|\[Errno 28\]|\bENOSPC\b", re.IGNORECASE)
_DISK_PATH = re.compile(r"\b(?:write|mkdir|open|create|copy|rename)\w* [`'\"]?(?P<path>/[\w./@:+-]*[\w/])[`'\"]?:? "
                        r"no space left on device", re.IGNORECASE)
_RATE_LIMITED = re.compile(r"\btoo many (?:requests|certificates|failed authorizations|new orders)\b|\brateLimited\b"
                           r"|\btoomanyrequests\b|\b429 Too Many Requests\b|\bpull rate limit\b", re.IGNORECASE)
_RETRY_AFTER = re.compile(r"\bretry after (?P<when>\d{4}-\d\d-\d\d[ T][\d:]+(?: UTC)?)", re.IGNORECASE)
# flock's EAGAIN: another process holds the lock (a second instance, or a filesystem without POSIX locks).
_LOCK_HELD = re.compile(r"\block\w*\b[^;]{0,60}?: resource temporarily unavailable", re.IGNORECASE)
_LOCK_PATH = re.compile(r"\block\w* (?:DB )?(?:directory|file)?:? ?[`'\"]?(?P<path>/[\w./@:+-]*[\w/])", re.IGNORECASE)
# A data file read back empty or cut short: a JSON file that ends early, a file of zeros where a magic
# number belongs, a file that ended at once ('validate meta "/prometheus/wal/000025": EOF').
_TRUNCATED = re.compile(r"unexpected end of JSON input|invalid magic number 0\b|[`'\"]/[\w./@:+-]+[`'\"]: EOF\b",
                        re.IGNORECASE)
_TRUNCATED_PATH = re.compile(r"[`'\"]?(?P<path>/[\w./@:+-]*\w)[`'\"]?: (?:invalid magic number 0|EOF|unexpected end)")
# Prometheus's block whose meta.json ends early: the block directory where the line states it
# ('block dir: "/prometheus/01ABC": unexpected end of JSON input'; older releases leave it empty).
_JSON_CUT = re.compile(r"unexpected end of JSON input", re.IGNORECASE)
_BLOCK_DIR = re.compile(r"\bblock dir: \\?[`'\"]?(?P<path>/[^\s`'\"\\]*[^\s`'\"\\/])")
# What ran out: its kind and name, the words that say so, and where (or when) the line states it.
_RAN_OUT = ((RemedyKind.disk_full, "disk", _DISK_FULL, _DISK_PATH),
            (RemedyKind.rate_limited, "rate limit", _RATE_LIMITED, _RETRY_AFTER),
            (RemedyKind.lock_held, "lock", _LOCK_HELD, _LOCK_PATH),
            (RemedyKind.data_truncated, "data file", _TRUNCATED, _TRUNCATED_PATH))
# A component too old, in the words that ask for a newer one.
_UPGRADE = (
    re.compile(r"\bplease (?:upgrade|update) (?:your |the )?(?P<name>[\w.-]+?)(?: to (?:a )?newer version"
               r"| to (?:version )?v?(?P<version>\d[\w.]*\w))?[\s.,;]", re.IGNORECASE),
    re.compile(r"\byour version of (?P<name>[\w.-]+) is (?:out of date|too old|outdated)", re.IGNORECASE),
    re.compile(r"\brequires? (?:a )?(?:newer|more recent|later) (?:version of )?(?P<name>[\w.-]+)", re.IGNORECASE),
    re.compile(r"\b(?P<name>[A-Za-z][\w.-]*) ?(?:>=|version) ?v?(?P<version>\d[\w.]*\w) (?:or (?:later|newer|higher) )?"
               r"is required", re.IGNORECASE),
)
# Components no upgrade is asked of (the driver has its own remedy; "it", "this" are no names).
_NOT_COMPONENTS = frozenset({"driver", "gpu", "nvidia", "it", "this", "them", "to", "the", "your"})
# Two settings compared: "max_num_seqs (1024) exceeds available Mamba cache blocks (614)", "LoRA
# rank 64 is greater than max_lora_rank 16", "max_num_batched_tokens (2048) is smaller than
# max_model_len (8192)": the setting on either side, set to the other side's number.
_NAME = r"(?-i:[a-z][a-z0-9]*(?:_[a-z0-9]+)+)"
_SPOKEN_NAME = r"max(?:imum)? (?:seq(?:uence)? len(?:gth)?|model len(?:gth)?)"
_COMPARED = re.compile(
    r"(?:(?P<left>" + _NAME + r")|(?P<lspoken>" + _SPOKEN_NAME + r")|\b[A-Za-z]+)\s*\(?(?:of )?(?P<lvalue>\d+)?\)?\s+"
    r"(?:is |must be |cannot be )?(?:greater|larger|bigger|longer|higher|more|exceeds?|smaller|less|lower|shorter)\w*"
    r"(?: than)?\s+(?P<rest>[^.;]{0,120})", re.IGNORECASE)
_COMPARED_RIGHT = re.compile(r"^(?:the |available |derived |allowed )*(?:(?P<right>" + _NAME + r")|(?P<rspoken>(?:"
                             + _SPOKEN_NAME + r")|model len(?:gth)?\b))?[^\d(]{0,80}?\(?(?:of )?(?P<rvalue>\d+)", re.IGNORECASE)
_DRIVER = re.compile(r"\b(?:update|upgrade|install a newer) (?:your |the )?(?:(?:GPU|NVIDIA|CUDA|graphics|display) )?"
                     r"driver\b", re.IGNORECASE)
# Only a command the log quotes: "run `x`", "please run 'x'", "try running \"x\"".
_COMMAND = re.compile(r"\b(?:please |try )?run(?:ning)?\s+(?:the command\s+)?(?:`(?P<tick>[^`]{3,160})`"
                      r"|'(?P<single>[^']{3,160})'|\"(?P<double>[^\"]{3,160})\")", re.IGNORECASE)
# A command quoted after "require" or "try": a program and its words ("may require 'docker login'",
# "try `nvidia-ctk cdi list`"), not one quoted name, which is a package or a setting.
_REQUIRED_COMMAND = re.compile(r"\b(?:requires?|try)\s+(?:`(?P<tick>[a-z][\w.-]* [^`]{1,160})`"
                               r"|'(?P<single>[a-z][\w.-]* [^']{1,160})'|\"(?P<double>[a-z][\w.-]* [^\"]{1,160})\")")
# Commands the package patterns read already.
_INSTALL_COMMAND = re.compile(r"^\s*(?:sudo )?(?:pip3?|apt(?:-get)?|python3? -m pip) install\b")
_DIRECTIVE = (
    re.compile(r"you should increase (?:either )?(?P<name>\w+)"),
    re.compile(r"\"(?P<name>\w+)\" directive (?:is )?(?:not allowed|duplicate|is duplicate|invalid|unknown)"),
    # A directive the configuration lacks, in nginx's words ('no "ssl_certificate" is defined for the
    # "listen ... ssl" directive') and certbot's ("Set the `server_name` directive", "add a corresponding
    # server_name directive").
    re.compile(r"\bno \"(?P<name>\w+)\" is defined\b"),
    re.compile(r"\b[Ss]et the [`'\"](?P<name>\w+)[`'\"] directive"),
    re.compile(r"\badd a corresponding [`'\"]?(?P<name>\w+)[`'\"]? directive"),
)


# An imperative the log addresses to its reader ("Please stop the apache2 program temporarily"); not
# one that points elsewhere ("Please see the logfiles") or only asks to try again.
_PLEASE = re.compile(r"\bplease,?\s+(?P<action>(?:stop|start|restart|remove|delete|disable|enable|kill|free|close|update"
                     r"|upgrade|downgrade|reduce|increase|lower|raise|use|make sure|ensure|create|rename|move|change|set"
                     r"|add|specify|provide|log ?in|authenticate|wait|install|reinstall|shut|select|choose)\b"
                     r"[^.;!?]{2,160})", re.IGNORECASE)


def named_remedies(lines: Iterable[str]) -> list[Remedy]:
    """The remedies these lines name, first named first, each once."""
    found: list[Remedy] = []

    def add(remedy: Remedy) -> None:
        if all((known.kind, known.name) != (remedy.kind, remedy.name) for known in found):
            found.append(remedy)

    for line in lines:
        if _ECHOED_COMMAND.search(line):
            continue
        for remedy in _in_line(line):
            add(remedy)
    # A flag the log also says not to use ("instead of via the `--model` option. The `--model` option
    # will be removed") is no flag to add.
    dropped = {remedy.name for remedy in found if remedy.kind is RemedyKind.drop_flag}
    return [remedy for remedy in found if remedy.kind is not RemedyKind.flag or remedy.name not in dropped]


def _in_line(line: str) -> list[Remedy]:
    remedies: list[Remedy] = []
    for pattern in _FILE:
        for match in pattern.finditer(line):
            remedies.append(Remedy(RemedyKind.file, match["path"].rstrip(".")))
    for pattern in _DIRECTIVE:
        for match in pattern.finditer(line):
            remedies.append(Remedy(RemedyKind.directive, match["name"]))
    for pattern in _WRITABLE:
        for match in pattern.finditer(line):
            remedies.append(Remedy(RemedyKind.writable, match["path"].rstrip(".")))
    remedies.extend(_os_remedies(line))
    if _DRIVER.search(line):
        remedies.append(Remedy(RemedyKind.driver, "the NVIDIA driver"))
    for match in (*_COMMAND.finditer(line), *_REQUIRED_COMMAND.finditer(line)):
        command = (match["tick"] or match["single"] or match["double"]).strip()
        # "Run 'docker run --help' for more information" points at help, not at a fix.
        if not _INSTALL_COMMAND.search(command) and not re.search(r"(?<![\w-])(?:--help|-h)\b", command):
            remedies.append(Remedy(RemedyKind.command, command))
    for pattern in _PACKAGE:
        for match in pattern.finditer(line):
            groups = match.groupdict()
            if groups.get("module"):
                module = groups["module"]
                top = module.split(".")[0]
                name = _MODULE_PACKAGES.get(module) or _MODULE_PACKAGES.get(top) or top.replace("_", "-")
            else:
                name = groups["name"].rstrip(".,")
                if name == "git" and (source := _GIT_SOURCE.search(line, match.start())):
                    name = source["name"]
            remedies.append(Remedy(RemedyKind.package, name))
    # A flag the line refuses is one to take off, whatever words it is refused in.
    for refused in _NOT_TO_ADD.finditer(line):
        for match in _FLAG.finditer(refused[0]):
            if match["name"] not in ("--help", "--version") and not refused[0].lower().startswith("pip"):
                remedies.append(Remedy(RemedyKind.drop_flag, match["name"]))
    # Flags read only from the line's words: not from an argument list it echoes, and an offering word
    # inside a flag's own name ("--require=cuda>=8.0", "--enable-x") offers nothing.
    line = _ARGUMENT_LIST.sub(" ", line)
    if not _OFFER.search(_FLAG.sub("--x", line)):
        return remedies + _compared_settings(line)
    for match in _FLAG.finditer(_NOT_TO_ADD.sub(" ", _FAILED_COMMAND.sub(" ", line))):
        word = match["word"].rstrip(".") if match["word"] else None
        remedies.append(Remedy(RemedyKind.flag, match["name"], word or _unquoted(match["value"])))
    if _SETTING_VERB.search(line):
        directives = {remedy.name for remedy in remedies if remedy.kind is RemedyKind.directive}
        for match in _QUOTED_ASSIGNMENT.finditer(line):
            name, value = match["tname"] or match["sname"], (match["tvalue"] or match["svalue"]).strip().strip("'\"")
            if not value.startswith("<"):  # "passing `token=<your_token>`" states no value
                remedies.append(_setting(name, value))
        for pattern in (_SETTING, _BARE_SETTING):
            for match in pattern.finditer(line):
                if match["name"] not in directives:
                    remedies.append(_setting(match["name"], match["value"]))
        for match in _SPOKEN_SETTING.finditer(line):
            remedies.append(Remedy(RemedyKind.setting, _SPOKEN_SETTINGS[" ".join(match["words"].lower().split())]))
    for pattern in (_ENV_NAMED, _ENV_SET, _ENV_WITH, _ENV_ASSIGNED):
        for match in pattern.finditer(line):
            name = match["name"]
            if name not in _DEBUG_ONLY and not name.endswith(("_ERROR", "_FAILED", "_FAILURE")):
                value = match.groupdict().get("value") or match.groupdict().get("to")
                remedies.append(Remedy(RemedyKind.env, name, value.rstrip(".") if value else None))
    # What the line itself offers comes first; a comparison only says which setting is at its limit;
    # an action asked for in words comes after what it names precisely.
    # (once: not where it only asks for what a remedy already names, "please increase max_num_seqs").
    named = remedies + _compared_settings(line)
    stated = [Remedy(RemedyKind.stated, " ".join(match["action"].split()).rstrip(" ,"))
              for match in _PLEASE.finditer(line)]
    # A remedy without a name (a port the line does not number) names nothing the action could repeat.
    return named + [action for action in stated if not any(known.name and _spelled(known.name) in _spelled(action.name)
                                                           for known in named)]


def _spelled(name: str) -> str:
    """A name as flags, settings and sentences share it: --max-num-seqs, max_num_seqs -> max_num_seqs."""
    return name.strip("-").replace("-", "_").lower()


def _os_remedies(line: str) -> list[Remedy]:
    """What the operating system's refusal names: a port taken, a path denied, a program not executable, a
    directory in a file's place, the disk full, a lock another process holds, a data file cut short; a
    server's rate limit; and a component the line asks to upgrade."""
    found: list[Remedy] = []
    if _PORT_TAKEN.search(line):
        number = _PORT_NUMBER.search(line)
        found.append(Remedy(RemedyKind.port, number["port"] if number else ""))
    # systemd's resource-limit step names the program it was spawning, not a path it may not open.
    for pattern in () if _LIMITS_STEP.search(line) else _PERMISSION:
        found.extend(Remedy(RemedyKind.permission, match["path"].rstrip(".")) for match in pattern.finditer(line))
    for kind, name, said, detail in _RAN_OUT:
        if said.search(line):
            where = detail.search(line)
            found.append(Remedy(kind, name, where[1] if where else None))
    if _JSON_CUT.search(line):
        # A JSON file cut short: where it is a block's (its directory stated), that block's meta.json.
        block = _BLOCK_DIR.search(line)
        found = [Remedy(remedy.kind, "JSON file", f"{block['path']}/meta.json" if block else remedy.value)
                 if remedy.kind is RemedyKind.data_truncated else remedy for remedy in found]
    for pattern in (_EXECUTABLE, _EXEC_DENIED):
        found.extend(Remedy(RemedyKind.executable, match["path"]) for match in pattern.finditer(line))
    for pattern in _DIRECTORY_FOR_FILE:
        found.extend(Remedy(RemedyKind.directory_for_file, match["path"]) for match in pattern.finditer(line))
    for pattern in _UPGRADE:
        for match in pattern.finditer(line):
            name = match["name"].rstrip(".,").lower()
            if name not in _NOT_COMPONENTS:
                found.append(Remedy(RemedyKind.upgrade, name, match.groupdict().get("version")))
    return found


def _compared_settings(line: str) -> list[Remedy]:
    """A setting the line compares with a limit, to be set to that limit (or, where the limit is the
    setting, raised to what it refused)."""
    found: list[Remedy] = []
    for match in _COMPARED.finditer(line):
        other = _COMPARED_RIGHT.search(match["rest"])
        left = match["left"] or ("max_model_len" if match["lspoken"] else None)
        right = other and (other["right"] or ("max_model_len" if other["rspoken"] else None))
        if left:
            found.append(Remedy(RemedyKind.setting, left, other["rvalue"] if other else None))
        if right and right != left:
            found.append(Remedy(RemedyKind.setting, right, match["lvalue"]))
    return found


def _setting(name: str, value: str | None) -> Remedy:
    """A setting the log names; PyTorch's allocator option is set through its variable."""
    if name in _ALLOCATOR_OPTIONS:
        return Remedy(RemedyKind.env, "PYTORCH_CUDA_ALLOC_CONF", f"{name}:{value}" if value else None)
    return Remedy(RemedyKind.setting, name, value)


def _unquoted(value: str | None) -> str | None:
    return value.strip("'\"") if value else None
