"""``beat_counters`` (one position, plain integers) equals ``dimension_counters`` (arrays)."""

import numpy as np
import pytest

from aiedma.model.bd.fields import KINDS
from aiedma.model.cycle.timing import beat_counters
from aiedma.tb.common.stimulus import random_bds


@pytest.mark.parametrize("kind", KINDS)
def test_beat_counters_equal_dimension_counters(kind):
    for bd in random_bds(kind, 60, 11, allow_empty=True):
        positions = np.arange(bd.buffer_length + 3)
        counters = bd.dimension_counters(positions)
        for p in positions.tolist():
            want = {f"d{k}": int(c[p]) for k, c in enumerate(counters)}
            assert beat_counters(bd, p) == want, (bd, p)
