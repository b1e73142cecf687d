"""Where the checkout is, for tests that read its files (docs, README, build/)."""

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
"""The repository's top folder."""
