"""``gebench compare``: check gebench's prediction against a real Ascend machine.

::

    gebench compare --fusion-result fusion_result.json model.onnx --passes my_passes/
    gebench compare --fusion-result fusion_result.json model.onnx --passes my_passes/ \\
        --dump ge_proto_00000001_graph_0_RunCustomPassBeforeInfershape.txt

Lines up GE's per-pass match/effect counts from the machine's ``fusion_result.json`` with what gebench predicts
for the same model and passes (:mod:`gebench.compare`), and with ``--dump`` the fusion sites. Exit codes: 0 no
difference, 1 a difference, 2 a bad input (the message names the file).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import TextIO

__all__ = ["register", "run_compare_command"]

EXIT_SAME = 0
EXIT_DIFFERENT = 1
EXIT_USAGE = 2

def setup_compare(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    """Add ``gebench compare``'s arguments; returns the handler."""
    parser.add_argument("model", help="the model compiled on the machine (ONNX, AIR, a GE dump or IR text)")
    parser.add_argument("--fusion-result", required=True, metavar="REAL.json",
                        help="the fusion_result.json atc wrote on the machine")
    parser.add_argument("--passes", default=None,
                        help="the pass files/directories used there, separated by ':' (default: "
                             "$ASCEND_GE_PY_PASS_PATH)")
    parser.add_argument("--dump", default=None, metavar="REAL_DUMP",
                        help="a GE dump written on the machine after the custom passes: also compare the sites")
    parser.add_argument("--fusion-switch-file", default=None, metavar="FILE",
                        help="the fusion switch file used on the machine, if any")
    parser.add_argument("--graph-key", default=None, metavar="KEY",
                        help="the session_and_graph_id_* entry to compare when the file holds several graphs")
    parser.add_argument("--custom-ops", action="append", default=[], metavar="FILE",
                        help="JSON file declaring custom ops (repeatable)")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the comparison as JSON")
    return run_compare_command


def run_compare_command(args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run ``gebench compare`` for parsed ``args``; returns the exit code."""
    import os

    from gebench._atomic import write_text_atomically
    from gebench.compare import CompareInputError, compare_fusion_result
    from gebench.fusion.plugins.scan import split_pass_path

    out = out or sys.stdout
    err = err or sys.stderr

    def usage(message: str) -> int:
        print(f"gebench compare: {message}", file=err)
        return EXIT_USAGE

    if not os.path.exists(args.model):
        return usage(f"model {args.model} does not exist; check the path")
    for item in split_pass_path(args.passes):
        if not os.path.exists(item):
            return usage(f"--passes {item}: no such file or directory; check the path")
    if args.fusion_switch_file and not os.path.isfile(args.fusion_switch_file):
        return usage(f"--fusion-switch-file {args.fusion_switch_file}: no such file; check the path")
    try:
        result = compare_fusion_result(args.fusion_result, args.model, args.passes, dump=args.dump,
                                       fusion_switch=args.fusion_switch_file, graph_key=args.graph_key,
                                       custom_ops=args.custom_ops or None)
    except CompareInputError as exc:
        return usage(str(exc))
    print(result.text(), file=out)
    if args.json:
        try:
            write_text_atomically(args.json, json.dumps(result.to_dict(), indent=1))
        except OSError as exc:
            return usage(f"--json {args.json}: cannot write it ({exc.strerror or exc}); choose another path")
    return EXIT_SAME if result.equal else EXIT_DIFFERENT


def register() -> None:
    """Add ``compare`` to the ``gebench`` command line (:mod:`gebench.cli` registers it when imported; this puts it
    back after a plugin replaced it)."""
    from gebench.cli import _register_builtins

    _register_builtins("compare")
