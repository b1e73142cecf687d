"""Shared test set-up: hypothesis profiles, quick Verilator builds.

CI (``CI`` set in the environment) runs hypothesis derandomised, so a red CI
reproduces locally with ``CI=1 make test``; elsewhere examples are random and
a failure prints the blob to replay it.

Verilated models are compiled with ``-O0`` (``AIEDMA_QUICK_BUILDS``, tb/common/tools.py)
unless the environment says otherwise: the suite's runs are short, and on a fresh
checkout compiling them is most of its time.

The block harness elaborates each block once per process (``ReusedSimulation``); a test
that monkeypatches may patch the RTL, so it neither gets a block elaborated before it
nor leaves one elaborated under its patches.
"""

import os

import pytest
from hypothesis import settings

from aiedma.tb.block.harness import ReusedSimulation
from aiedma.tb.common.tools import QUICK_BUILDS

os.environ.setdefault(QUICK_BUILDS, "1")

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(autouse=True)
def _fresh_blocks_under_monkeypatch(request):
    if "monkeypatch" not in request.fixturenames:
        yield
        return
    ReusedSimulation.cache.clear()
    yield
    ReusedSimulation.cache.clear()
