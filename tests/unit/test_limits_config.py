"""stack.yaml's `limits` section, and the flags it becomes for the filter-proxy."""

import pytest

from stackctl.config import parse_stack_config
from stackctl.errors import ConfigError
from stackctl.template_values import proxy_args


def flag_values(args: list[str], flag: str) -> list[str]:
    return [args[i + 1] for i, arg in enumerate(args) if arg == flag]


def test_defaults_limit_concurrency_and_the_backend_queue():
    limits = parse_stack_config({}).limits
    assert (limits.max_concurrent, limits.requests_per_minute, limits.tokens_per_minute) == (32, 0, 0)
    assert (limits.keys, limits.max_backend_waiting) == ({}, 64)


def test_limits_become_proxy_flags():
    config = parse_stack_config({"limits": {
        "max_concurrent": 8, "requests_per_minute": 120, "tokens_per_minute": 200000, "max_backend_waiting": 0,
        "keys": {"ci": {"max_concurrent": 2, "requests_per_minute": 30}, "idle": {}},
    }})
    args = proxy_args(config)
    assert flag_values(args, "--max-concurrent") == ["8"]
    assert flag_values(args, "--requests-per-minute") == ["120"]
    assert flag_values(args, "--tokens-per-minute") == ["200000"]
    assert flag_values(args, "--max-backend-waiting") == ["0"]
    # An empty override changes nothing and is not passed on.
    assert flag_values(args, "--key-limit") == ["ci:max_concurrent=2,requests_per_minute=30"]


@pytest.mark.parametrize(("section", "expected"), [
    ({"max_concurrent": -1}, "limits.max_concurrent: Input should be greater than or equal to 0"),
    ({"burst": 3}, "unknown key 'limits.burst'; allowed keys here: max_concurrent, requests_per_minute"),
    ({"keys": {"ci": {"rpm": 3}}}, "unknown key 'limits.keys.ci.rpm'; allowed keys here: max_concurrent,"),
    ({"keys": {"two words": {}}}, "key name 'two words' must be 1-64 letters"),
])
def test_bad_limits_name_the_problem(section, expected):
    with pytest.raises(ConfigError) as caught:
        parse_stack_config({"limits": section})
    assert expected in str(caught.value)


@pytest.mark.parametrize(("section", "expected"), [({}, "auto"), ({"proxy": {"workers": 4}}, "4")])
def test_the_proxy_worker_count_becomes_its_flag(section, expected):
    assert flag_values(proxy_args(parse_stack_config(section)), "--workers") == [expected]


def test_a_bad_worker_count_names_the_fix():
    with pytest.raises(ConfigError) as caught:
        parse_stack_config({"proxy": {"workers": 0}})
    assert "give 1 to 64 worker processes, or auto" in str(caught.value)
