"""stack.yaml's `web_search` section, and how it reaches the filter-proxy in both runtimes."""

import pytest
import yaml

from stackctl.config import parse_stack_config
from stackctl.layout import StackLayout
from tests.support.stack_builder import config_error, render_into


def test_web_search_defaults_to_ddgs():
    options = parse_stack_config({}).web_search
    assert (options.backend, options.searxng_url, options.timeout_s) == ("ddgs", None, 10.0)


def test_searxng_with_its_url():
    config = parse_stack_config(
        {"web_search": {"backend": "searxng", "searxng_url": "http://10.0.0.5:8888", "timeout_s": 4}}
    )
    assert config.web_search.searxng_url == "http://10.0.0.5:8888"
    assert config.web_search.timeout_s == 4


@pytest.mark.parametrize(
    ("section", "expected"),
    [
        ({"backend": "searxng"}, "web_search: backend 'searxng' needs searxng_url"),
        ({"backend": "google"}, "web_search.backend: allowed values are 'ddgs', 'searxng' or 'off'"),
        ({"backend": "searxng", "searxng_url": "10.0.0.5:8888"}, "must be an http(s) URL"),
        ({"timeout_s": 0}, "web_search.timeout_s"),
        ({"engine": "ddgs"}, "unknown key 'web_search.engine'; allowed keys here: backend, searxng_url, timeout_s"),
    ],
)
def test_bad_web_search_sections_name_the_problem(section, expected):
    assert expected in config_error({"web_search": section})


@pytest.mark.parametrize("runtime", ["compose", "native"])
def test_the_proxy_gets_the_web_search_settings(tmp_path, runtime):
    config = parse_stack_config(
        {"web_search": {"backend": "searxng", "searxng_url": "http://127.0.0.1:8888", "timeout_s": 3.5}}
    )
    project = render_into(StackLayout(tmp_path), config, runtime)
    environment = yaml.safe_load(project.compose_file.read_text())["services"]["filter-proxy"]["environment"]
    assert environment["STACKCTL_PROXY_SEARCH_BACKEND"] == "searxng"
    assert environment["STACKCTL_PROXY_SEARXNG_URL"] == "http://127.0.0.1:8888"
    assert environment["STACKCTL_PROXY_SEARCH_TIMEOUT_SECONDS"] == "3.5"
    proxy = next(service for service in project.services if service.name == "filter-proxy")
    assert proxy.native is not None  # natively, the same environment is applied (runtime/native.py)


def test_default_stack_leaves_the_searxng_url_empty(tmp_path):
    project = render_into(StackLayout(tmp_path), parse_stack_config({}))
    environment = yaml.safe_load(project.compose_file.read_text())["services"]["filter-proxy"]["environment"]
    assert environment["STACKCTL_PROXY_SEARCH_BACKEND"] == "ddgs"
    assert environment["STACKCTL_PROXY_SEARXNG_URL"] == ""
