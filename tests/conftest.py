"""Shared test set-up: hypothesis profiles.

CI (``CI`` set in the environment) runs hypothesis derandomised, so a red CI
reproduces locally with ``CI=1 make test``; elsewhere examples are random and
a failure prints the blob to replay it.
"""

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))
