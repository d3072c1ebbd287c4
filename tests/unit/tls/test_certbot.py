"""certbot's command line for `stackctl tls issue` (the real run is tests/integration/test_tls.py)."""

import shlex

import pytest

from stackctl.config import parse_stack_config
from stackctl.errors import ConfigError
from stackctl.layout import StackLayout
from stackctl.runtime import runtime_for
from stackctl.stack import Stack
from stackctl.tls import IssueRequest, certbot_command, issue_certificate

STACK = {"hostname": "llm.example.org", "services": {"tls": True}, "letsencrypt_dir": "/srv/le"}


def stack(tmp_path, runtime="native", **overrides) -> Stack:
    layout, config = StackLayout(tmp_path), parse_stack_config({**STACK, **overrides, "runtime": runtime})
    return Stack(layout, config, runtime_for(runtime, layout, config))


def option(argv: list[str], name: str) -> str:
    return argv[argv.index(name) + 1]


def test_webroot_through_nginx_into_the_stacks_letsencrypt_dir(tmp_path):
    argv = certbot_command(stack(tmp_path), IssueRequest("llm.example.org", "ops@example.org"))
    assert argv[1:3] == ["certonly", "--webroot"]
    assert option(argv, "-w") == str(tmp_path / "data/acme")  # what the nginx site serves
    assert option(argv, "--cert-name") == "llm.example.org"  # live/<hostname>/, where render looks
    assert option(argv, "--config-dir") == "/srv/le"
    assert "--server" not in argv  # Let's Encrypt production by default
    hook = shlex.split(option(argv, "--deploy-hook"))
    assert hook[-2:] == ["-s", "reload"] and option(hook, "-c") == str(tmp_path / "rendered/nginx/nginx.conf")


def test_staging_and_other_acme_servers(tmp_path):
    staging = certbot_command(stack(tmp_path), IssueRequest("llm.example.org", "a@b.org", staging=True))
    assert option(staging, "--server") == "https://acme-staging-v02.api.letsencrypt.org/directory"
    other = certbot_command(stack(tmp_path), IssueRequest("llm.example.org", "a@b.org", "https://ca.lan/dir", True))
    assert option(other, "--server") == "https://ca.lan/dir"


def test_compose_renewals_do_not_store_a_hook_the_certbot_container_cannot_run(tmp_path):
    argv = certbot_command(stack(tmp_path, "compose"), IssueRequest("llm.example.org", "a@b.org"))
    assert "--deploy-hook" not in argv


@pytest.mark.parametrize("overrides", [{"hostname": "other.example.org"}, {"services": {"tls": False}}])
def test_the_stack_must_name_the_domain_first(tmp_path, overrides):
    with pytest.raises(ConfigError, match="hostname: llm.example.org"):
        issue_certificate(stack(tmp_path, **overrides), IssueRequest("llm.example.org", "a@b.org"))
