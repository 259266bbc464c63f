"""Hypothesis profiles and per-test example counts for the property suite.

Profiles: `ci` (the default; seeded, a few hundred examples per builder) and
`long` (NVWGMMA_HYPOTHESIS_PROFILE=long; NVWGMMA_HYPOTHESIS_EXAMPLES per
property, 25,000 unless set). The counts of
examples each property ran are written to $NVWGMMA_PROPERTY_COUNTS (JSON)
so the caller can report them.
"""

import atexit
import collections
import json
import os

from hypothesis import HealthCheck, settings

_common = dict(deadline=None, suppress_health_check=list(HealthCheck), print_blob=True)
settings.register_profile("ci", max_examples=300, derandomize=True, **_common)
settings.register_profile(
    "long", max_examples=int(os.environ.get("NVWGMMA_HYPOTHESIS_EXAMPLES", 25_000)), **_common
)
settings.load_profile(os.environ.get("NVWGMMA_HYPOTHESIS_PROFILE", "ci"))

COUNTS = collections.Counter()


def count(name: str) -> None:
    COUNTS[name] += 1


@atexit.register
def _write_counts():
    path = os.environ.get("NVWGMMA_PROPERTY_COUNTS")
    if path:
        with open(path, "w") as f:
            json.dump(dict(COUNTS), f, indent=1, sort_keys=True)
