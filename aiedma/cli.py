"""The ``aiedma`` command line.

Every subcommand reads JSON with adf field names. Bad input ends in one line on
standard error and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .model import AiedmaError, PortProgram, format_runs
from .model.tiling import DIRECTIONS, KINDS

__all__ = ["main"]

EXIT_MISMATCH = 1
EXIT_USAGE = 2

WALK_EXAMPLE = """\
example:
  echo '{"buffer_dimension": [256], "tiling_dimension": [128], "offset": [-16],
         "tile_traversal": [{"dimension": 0, "stride": 144, "wrap": 2}],
         "boundary_dimension": [96]}' > port.json
  aiedma walk port.json
      port.json: 256 elements, 160 zero
        Z x16, 0..95, Z x144

FILE holds one tiling dict, a list of them (a port program), or
{"examples": [{"name": ..., "tiling": ..., "indices": [...]}, ...]};
with --check, each example's stream is compared with its "indices".
"""


class _Usage(Exception):
    """A command-line input problem: reported in one line, exit status 2."""


def _load_programs(path: str) -> list[tuple[str, PortProgram, list[int] | None]]:
    try:
        data = json.loads(Path(path).read_text())
    except OSError as error:
        raise _Usage(f"{path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise _Usage(f"{path}: not JSON ({error})") from None
    if isinstance(data, dict) and "examples" in data:
        out = []
        for i, example in enumerate(data["examples"]):
            if not isinstance(example, dict) or "tiling" not in example:
                raise _Usage(f"{path}: examples[{i}] needs a 'tiling' entry")
            name = str(example.get("name", f"example {i}"))
            out.append((name, PortProgram.from_json(example["tiling"]), example.get("indices")))
        return out
    return [(Path(path).name, PortProgram.from_json(data), None)]


def _walk(args: argparse.Namespace) -> int:
    programs = _load_programs(args.file)
    mismatches = 0
    report: list[dict[str, Any]] = []
    for name, program, expected in programs:
        if args.buffer_dimension:
            program = program.resolve(args.buffer_dimension)
        if args.kind or args.direction or args.dtype:
            program.validate(args.kind or "memtile", args.direction or "read",
                             args.dtype or "int32")
        stream = program.indices()
        verdict = None
        if args.check and expected is not None:
            verdict = bool(np.array_equal(stream, np.asarray(expected, dtype=np.int64)))
            mismatches += not verdict
        if args.format == "json":
            report.append({"name": name, "indices": stream.tolist(),
                           **({} if verdict is None else {"matches": verdict})})
            continue
        zeros = int(np.count_nonzero(stream < 0))
        print(f"{name}: {stream.size} elements, {zeros} zero")
        print(f"  {format_runs(stream)}")
        if verdict is not None:
            print("  matches the expected stream" if verdict
                  else "  DIFFERS from the expected stream")
    if args.format == "json":
        json.dump(report if len(report) > 1 else report[0], sys.stdout)
        print()
    elif args.check:
        checked = sum(expected is not None for _, _, expected in programs)
        print(f"{checked - mismatches} passed, {mismatches} failed")
    return EXIT_MISMATCH if mismatches else 0


def _int_list(text: str) -> list[int]:
    """``"10,6"`` -> ``[10, 6]`` (argparse reports a ValueError as a usage error)."""
    return [int(part) for part in text.split(",")]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="aiedma",
        description="Golden model and co-simulation of the AMD AIE-ML DMA.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    walk = sub.add_parser(
        "walk", help="print the stream a tiling (or port program) produces",
        description="Print the element stream of tiling_parameters, as run-length text "
                    "(Z = zero padding) or JSON.",
        epilog=WALK_EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    walk.add_argument("file", help="JSON file (see below)")
    walk.add_argument("--format", choices=("runs", "json"), default="runs")
    walk.add_argument("--check", action="store_true",
                      help="compare examples with their expected indices; exit 1 on a difference")
    walk.add_argument("--buffer-dimension", type=_int_list, metavar="N,N,...",
                      help="buffer shape for entries that leave buffer_dimension empty")
    walk.add_argument("--kind", choices=KINDS, help="validate for this DMA kind")
    walk.add_argument("--direction", choices=DIRECTIONS, help="validate for this direction")
    walk.add_argument("--dtype", help="validate for this adf element type (e.g. int16)")
    walk.set_defaults(run=_walk)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``aiedma`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except (AiedmaError, _Usage) as error:
        print(f"aiedma {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
