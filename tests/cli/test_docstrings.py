"""The examples in the model's docstrings run and hold."""

import doctest
import importlib

import pytest

MODULES = [
    "aiedma.model.adf.header",
    "aiedma.model.adf.tilings",
    "aiedma.model.adf.writer",
    "aiedma.model.bd.descriptor",
    "aiedma.model.system.graph",
    "aiedma.model.system.locks",
    "aiedma.model.system.memory",
    "aiedma.model.bd.packet",
    "aiedma.model.tiling.port",
    "aiedma.model.tiling.runs",
    "aiedma.model.system.stream",
    "aiedma.model.tiling.parameters",
    "aiedma.tb.block.harness",
    "aiedma.tb.system.loop",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name),
                             optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples to run"
    assert result.failed == 0
