"""`python -m stackctl.proxy serve ...`: the image's entry point, without the orchestration CLI."""

from stackctl.proxy.cli import proxy_app

proxy_app(prog_name="stackctl proxy")
