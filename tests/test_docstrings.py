"""The examples in the model's docstrings run and hold."""

import doctest
import importlib

import pytest

MODULES = [
    "aiedma.model.adf_cpp",
    "aiedma.model.bd",
    "aiedma.model.graph",
    "aiedma.model.locks",
    "aiedma.model.memory",
    "aiedma.model.packet",
    "aiedma.model.port",
    "aiedma.model.runs",
    "aiedma.model.stream",
    "aiedma.model.tiling",
    "aiedma.tb.run",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    result = doctest.testmod(importlib.import_module(name),
                             optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{name} has no examples to run"
    assert result.failed == 0
