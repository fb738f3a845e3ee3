"""``python -m tools.conformance serve``: the conformance kit for client implementations
(``tools/conformance/README.md``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from pathlib import Path

from tools.conformance.cases import CASES
from tools.conformance.kit import STEP_TIMEOUT_MS, Kit


async def serve(args: argparse.Namespace) -> None:
    async with Kit(
        Path(args.report_dir),
        redis_url=args.redis_url,
        step_timeout_ms=args.step_timeout_ms,
        port=args.port,
    ) as kit:
        print(f"conformance kit: {kit.url} ({len(CASES)} cases; reports in {args.report_dir})")
        print("run your driver against it, e.g.:")
        print(f"  .venv/bin/python tools/conformance/drivers/python_client.py {kit.url}")
        await asyncio.Event().wait()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tools.conformance", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("serve", help="run the kit until interrupted")
    run.add_argument("--port", type=int, default=9100, help="the kit's port (default 9100)")
    run.add_argument(
        "--report-dir", default="conformance-reports", help="where reports are written"
    )
    run.add_argument(
        "--redis-url",
        default=None,
        help="a Redis for the kit's server (default: a throwaway redis-server or Valkey)",
    )
    run.add_argument(
        "--step-timeout-ms",
        type=int,
        default=STEP_TIMEOUT_MS,
        help="how long a driver waits for one step",
    )
    commands.add_parser("cases", help="print the case list")
    args = parser.parse_args()
    if args.command == "cases":
        for case in CASES.values():
            print(f"{case.id}: {case.title}")
        return
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args))


if __name__ == "__main__":
    main()
