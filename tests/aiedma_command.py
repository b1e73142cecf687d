"""The ``aiedma`` command run inside the test's process, as ``python -m aiedma`` would run it.

A subprocess costs about a second of interpreter start and imports, most of a test that
checks one line of output; ``cli.main`` is what ``python -m aiedma`` calls, so running it
here with stdout and stderr captured gives the same output and exit status. The tests that
check the installed console script and ``python -m aiedma`` themselves
(tests/cli/test_cli.py, tests/cli/test_packaging.py) still start a process.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
from pathlib import Path

from aiedma import cli


def run(*args: object, cwd: str | Path | None = None) -> subprocess.CompletedProcess:
    """``aiedma ARGS`` in folder ``cwd``: its exit status, stdout and stderr.

    argparse's refusals and ``--help`` (``SystemExit``) give the status a process would.
    """
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    before = Path.cwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = cli.main(argv)
            except SystemExit as stop:
                status = (0 if stop.code is None
                          else stop.code if isinstance(stop.code, int) else 1)
    finally:
        os.chdir(before)
    return subprocess.CompletedProcess(["aiedma", *argv], status, out.getvalue(),
                                       err.getvalue())
