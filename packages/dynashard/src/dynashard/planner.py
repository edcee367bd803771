"""``python -m dynashard.planner``, kept for scripts written before 0.1.0 moved the planner
to `dynashard.keys.planner`: it says so on stderr, then runs it."""

import sys
import warnings

from dynashard.keys.planner import main

if __name__ == "__main__":
    warnings.warn(
        "python -m dynashard.planner is deprecated: run python -m dynashard.keys.planner",
        DeprecationWarning,
        stacklevel=1,
    )
    sys.exit(main())
