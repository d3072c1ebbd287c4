"""Run pip as if it were the target host's interpreter: `python -m stackctl.engine._pip_for_target
ENV_JSON pip-args...`.

pip's `--python-version`/`--platform` choose wheels for another host, but pip evaluates the
requirements' environment markers (`python_version < "3.12"`, `platform_machine == "x86_64"`)
against the interpreter running it (pypa/pip#11010, #10050: kept that way on purpose). A bundle
for a Python 3.12 aarch64 host resolved from Python 3.11 on x86_64 would then miss or add
dependencies. pip reads the marker environment from one function of its vendored `packaging`;
replacing it before pip loads is the whole fix (pex does the same).
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    environment = json.loads(argv[0])
    from pip._vendor.packaging import markers

    markers.default_environment = lambda: dict(environment)
    from pip._internal.cli.main import main as pip_main

    return pip_main(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
