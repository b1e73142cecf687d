"""``python -m aiedma.tb``: list every regression; ``python -m aiedma.tb <name> [...]`` runs one.

The table is :data:`aiedma.tb.regress.REGRESSIONS`. A ``--sim`` the regression does not
run on is refused here, with the same error whichever regression it is.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .common.simulators import UnsupportedSimulator, check_simulator
from .regress import REGRESSIONS

__all__ = ["listing", "main"]

USAGE = "usage: python -m aiedma.tb [<regression> [--sim SIM ...] [options] | --help]"


def listing() -> str:
    """Every regression: its name, its simulators and one line on what it checks."""
    width = max(len(name) for name in REGRESSIONS)
    lines = [USAGE, "", "regressions (<regression> --help lists its options):"]
    for r in REGRESSIONS.values():
        lines.append(f"  {r.name:{width}}  {r.summary}")
        lines.append(f"  {'':{width}}  simulators: {', '.join(r.runs_on)}")
    return "\n".join(lines)


def _simulators(argv: Sequence[str]) -> list[str]:
    """The values of every ``--sim`` option in ``argv`` (``--sim a b`` or ``--sim=a``)."""
    found, taking = [], False
    for arg in argv:
        if arg.startswith("--sim="):
            found.append(arg.split("=", 1)[1])
            taking = False
        elif arg == "--sim":
            taking = True
        elif taking and not arg.startswith("-"):
            found.append(arg)
        else:
            taking = False
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Print the listing (no name, ``--help``), or run the named regression; its status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(listing())
        return 0
    name, rest = args[0], args[1:]
    if name not in REGRESSIONS:
        print(f"error: regression={name!r}: must be one of {', '.join(REGRESSIONS)}",
              file=sys.stderr)
        return 2
    regression = REGRESSIONS[name]
    try:
        for simulator in _simulators(rest):
            check_simulator(simulator, regression.runs_on, f"regression {name}")
    except UnsupportedSimulator as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return regression.main(rest)


if __name__ == "__main__":
    sys.exit(main())
