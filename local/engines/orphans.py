"""No orphans: a process the local runtime starts dies with the process that started it.

Linux's ``PR_SET_PDEATHSIG`` has the kernel signal a child when its parent exits, however
the parent ends (a ``kill -9``, the kernel's out-of-memory killer): without it, gunicorn's
workers outlived a killed server, holding its port and gigabytes of memory. Elsewhere it
does nothing (the local runtime targets Linux; macOS developers stop it with Ctrl-C).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
_prctl = (
    ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True).prctl
    if sys.platform.startswith("linux")
    else None
)
"""Bound at import: a child calls it between fork and exec, where loading libraries is unsafe."""


def exit_with_parent(signum: int = signal.SIGKILL) -> None:
    """Have the kernel send `signum` to this process when its parent exits; if the parent
    is already gone (it died between the fork and this call), exit now. Safe as a
    ``preexec_fn``."""
    if _prctl is None:
        return
    parent = os.getppid()
    if _prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) != 0:
        os._exit(1)
    if os.getppid() != parent:
        os._exit(1)
