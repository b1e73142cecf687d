"""The options of ``make verilog``'s export (:mod:`.verilog`), written once for its own
command line and for ``aiedma verilog``; no Amaranth here, so the ``aiedma`` command
starts without it."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..model.arch.kinds import KINDS

__all__ = ["DEFAULT_OUT", "add_options"]

DEFAULT_OUT = Path("build") / "verilog"


def add_options(parser: argparse.ArgumentParser) -> None:
    """``--out``, and ``--axi KIND`` with the options that build that top alone."""
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"output folder (default: {DEFAULT_OUT})")
    parser.add_argument("--axi", choices=KINDS,
                        help="write only this kind's AXI top (aiedma_axi_dma_<kind>)")
    parser.add_argument("--allowed", nargs=2, type=lambda text: int(text, 0),
                        metavar=("START", "WORDS"),
                        help="the --axi top's window: the word addresses its memory ports "
                             "may reach (WORDS a power of two, START a multiple of it)")
    parser.add_argument("--column", type=int, help="the --axi top's tile column (default 0)")
    parser.add_argument("--row", type=int,
                        help="the --axi top's tile row (default: the kind's first row)")
    parser.add_argument("--memory", action="store_true", default=None,
                        help="the --axi top with its memory inside, the --allowed window's "
                             "words (core and memory tile: aiedma_axi_dma_<kind>_mem)")
    parser.add_argument("--banks", type=int,
                        help="with --memory: its block RAM banks (default: the tile's own, "
                             "8 or 16)")
