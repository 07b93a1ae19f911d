"""``ge.pyatc``: ATC's command line run inside a Python process, as CANN's ``ge.pyatc`` does.

``ge.pyatc.main(cmdline_argv0=None, args=None)`` takes ``args`` (default ``sys.argv[1:]``) spelled as ``atc``'s own
flags (``--model=...``, ``--framework=5``, ...), runs them and ends the process with ATC's exit code. Pass files of
``ASCEND_GE_PY_PASS_PATH`` load into this interpreter; ``DUMP_GE_GRAPH`` works as with ``atc``.

When CANN's own ``ge.pyatc`` is installed, that one runs (gebench never stands in for a real CANN ``ge``);
otherwise ``gebench atc`` does, which itself hands over to CANN's ``atc`` program when there is one. From the
shell: ``gebench pyatc ...`` or ``python -m gebench.ge.pyatc ...`` (``python -m ge.pyatc`` is CANN's: gebench's
``ge`` name exists only once ``gebench`` is imported, so that it never stands in for an installed CANN).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import NoReturn

__all__ = ["main"]


def main(cmdline_argv0: str | None = None, args: Sequence[str] | None = None) -> NoReturn:
    """Run ATC with ``args`` and exit with its return code (``SystemExit``).

    Args:
        cmdline_argv0: the program name shown in usage and error lines (default ``sys.argv[0]``); a
            ``__main__.py`` shows as ``<python> -m ge.pyatc``.
        args: atc's flags (default ``sys.argv[1:]``).
    """
    from gebench.cli.atc import pyatc_program_name, run_pyatc

    argv0 = sys.argv[0] if cmdline_argv0 is None else cmdline_argv0
    argv = list(sys.argv[1:] if args is None else args)
    sys.exit(run_pyatc(argv, prog=pyatc_program_name(argv0)))


if __name__ == "__main__":
    main()
