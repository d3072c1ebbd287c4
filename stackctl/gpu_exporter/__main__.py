"""`python -m stackctl.gpu_exporter [--once] [--host H] [--port P]`: the exporter without the CLI's
dependencies (what `stackctl gpu-exporter` runs, usable from a bare checkout on a GPU box)."""

import argparse
import sys

from stackctl.errors import StackError
from stackctl.gpu_exporter.collector import render_report
from stackctl.gpu_exporter.sampler import GpuSampler
from stackctl.gpu_exporter.server import DEFAULT_PORT, serve_forever


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m stackctl.gpu_exporter", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--once", action="store_true", help="print one scrape's metrics and exit")
    args = parser.parse_args(argv)
    if args.once:
        sampler = GpuSampler()
        try:
            sys.stdout.write(render_report(sampler.sample()))
        finally:
            sampler.close()
        return 0
    try:
        serve_forever(args.host, args.port)
    except StackError as error:
        print(f"error: {error}", file=sys.stderr)
        return error.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
