"""The project's own copies of the public vectors (``tests/data``)."""

import json
from pathlib import Path

DATA = Path(__file__).parent / "data"


def load(name: str) -> dict:
    """A JSON vector file of ``tests/data``, decoded."""
    return json.loads((DATA / name).read_text())
