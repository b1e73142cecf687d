"""model/bd/fields.py: the BD field table checks itself against model/arch/kinds.py."""

from __future__ import annotations

import dataclasses

import pytest

from aiedma.model.arch import kinds
from aiedma.model.arch.kinds import DMA_KINDS
from aiedma.model.bd import fields


def test_a_field_table_that_drifts_from_the_kinds_fails_at_import(monkeypatch) -> None:
    for change in ({"address_bits": 15}, {"address_dimensions": 4}, {"bd_count": 32},
                   {"padded_dimensions": 2}, {"locks": 8}):
        # fields.py holds the same dict, so replacing the entry is what it then reads.
        monkeypatch.setitem(kinds.DMA_KINDS, "tile", dataclasses.replace(DMA_KINDS["tile"],
                                                                         **change))
        with pytest.raises(AssertionError, match=r"^tile field table: .* but model/arch/kinds"):
            fields._check_resources("tile")
