"""``gebench compile``'s backend flags, defined without importing the backends (``gebench compile --help`` stays
light: :mod:`gebench.exec.backends` pulls in the IR, numpy and networkx). :func:`gebench.exec.backends.build_from_args`
reads them."""

from __future__ import annotations

import argparse

__all__ = ["BACKEND_NAMES", "add_backend_arguments"]

#: the names of :data:`gebench.exec.backends.BACKENDS`, sorted (a test keeps them equal)
BACKEND_NAMES = ("ascend", "reference")


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--backend``, ``--soc-version``, ``--output`` and ``--atc-on-model`` to ``parser``."""
    parser.add_argument("--backend", choices=BACKEND_NAMES, default="reference",
                        help="reference: gebench only (default); ascend: hand the result to CANN's atc")
    parser.add_argument("--soc-version", dest="soc_version", default=None, metavar="SOC",
                        help="atc --soc_version for the ascend backend (for example Ascend910B1)")
    parser.add_argument("--output", default=None, metavar="PATH",
                        help="where the backend writes its model (PATH.air for reference, PATH.om for ascend)")
    parser.add_argument("--atc-on-model", dest="atc_on_model", action="store_true",
                        help="ascend: compile the original model with ASCEND_GE_PY_PASS_PATH set to the same passes "
                             "instead of the AIR export of gebench's result")
