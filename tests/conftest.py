"""Test-wide settings.

Under CI (the `CI` environment variable is set, as `.ci/run` runs) Hypothesis is
derandomized, so a landing never depends on which random examples a run happens to draw;
local runs keep exploring new examples (and keep failures in the .hypothesis database).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
if os.environ.get("CI"):
    settings.load_profile("ci")
