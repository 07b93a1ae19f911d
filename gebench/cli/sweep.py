"""``gebench sweep`` and ``gebench sweep-diff``: pass regression over a model corpus on Dask.

``gebench sweep MODELS... --passes P [--passes Q] [--verify] [--out DIR] [--scheduler tcp://HOST:PORT]
[--workers N] [--task-timeout S] [--task-memory MB] [--resume] [--baseline OLD_DIR]`` runs every pass set over
every model (:func:`gebench.sweep`) and prints a summary; ``gebench sweep-diff OLD NEW`` compares two sweep
folders.

Exit codes: 0 success; 1 with ``--baseline`` (and for ``sweep-diff``) when the diff finds a regression (sites
lost, a new failure, a new verify error), and without a baseline when some task did not succeed (a compile GE
would fail, or a task that errored, crashed, timed out or ran out of memory); 2 bad usage or input (a missing
model or pass path, a bad scheduler address, an out folder holding another sweep), in one or two lines with no
traceback unless ``--debug``; 3 without a baseline when every task succeeded but ``--verify`` found rewrites
that change results; 130 interrupted (finished tasks are kept: ``--resume`` continues).
"""

from __future__ import annotations

import argparse
import logging
import sys
import traceback
from collections.abc import Callable
from typing import TextIO

from gebench.cli import (
    EXIT_COMPILE_FAILED,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    EXIT_VERIFY_MISMATCH,
    _register_builtins,
)

__all__ = ["EXIT_REGRESSION"]

_log = logging.getLogger(__name__)

#: Exit code of a diff that found a regression (the same code as a failed compile).
EXIT_REGRESSION = EXIT_COMPILE_FAILED

_DEPS_HINT = "gebench sweep needs dask and distributed: pip install 'gebench[sweep]'"


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def _add_diff_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--time-rel", type=float, default=0.5, metavar="FRACTION",
                        help="a time change counts when beyond this fraction of the old time (default 0.5)")
    parser.add_argument("--time-abs", type=float, default=0.25, metavar="SECONDS",
                        help="... and beyond this many seconds (default 0.25)")
    parser.add_argument("--fail-on-slowdown", action="store_true",
                        help="count a slowdown beyond noise as a regression")


def _setup_sweep(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.add_argument("models", nargs="+", metavar="MODEL",
                        help="model files, folders (searched recursively) and globs: ONNX, AIR, IR text, GE dumps")
    parser.add_argument("--passes", action="append", required=True, metavar="P[:P...]",
                        help="a pass set: pass files/folders separated by ':'; repeat for several sets "
                             "(one task per model and set)")
    parser.add_argument("--verify", action="store_true", help="check every rewrite numerically as it happens")
    parser.add_argument("--out", default="gebench_sweep", metavar="DIR",
                        help="results folder (default ./gebench_sweep): results.jsonl, results.csv, report.html")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="an existing Dask scheduler, tcp://host:port (default: a local cluster)")
    parser.add_argument("--workers", type=_positive_int, default=None, metavar="N",
                        help="worker processes of the local cluster (default: the number of cores)")
    parser.add_argument("--task-timeout", type=_positive_float, default=None, metavar="SECONDS",
                        help="kill a task running longer (recorded as TIMEOUT)")
    parser.add_argument("--task-memory", type=_positive_float, default=None, metavar="MB",
                        help="kill a task using more resident memory (recorded as OUT_OF_MEMORY)")
    parser.add_argument("--no-isolate", action="store_true",
                        help="run tasks in the worker processes instead of forked task processes")
    parser.add_argument("--tasks-per-process", type=_positive_int, default=20, metavar="N",
                        help="tasks one forked task process runs before a fresh one (default 20; 1: one each)")
    parser.add_argument("--resume", action="store_true", help="continue the sweep in --out, skipping finished tasks")
    parser.add_argument("--retry-failed", action="store_true",
                        help="with --resume: run again the tasks that errored, crashed, timed out or ran out of memory")
    parser.add_argument("--overwrite", action="store_true", help="replace a sweep already in --out")
    parser.add_argument("--baseline", default=None, metavar="OLD_DIR",
                        help="compare with the sweep in OLD_DIR; exit 1 on a regression")
    parser.add_argument("--custom-ops", action="append", default=[], metavar="FILE",
                        help="JSON file declaring custom ops (repeatable)")
    parser.add_argument("--ledger", choices=("compact", "full", "none"), default="compact",
                        help="what to keep in DIR/ledgers (default: compact, without structural mismatches)")
    parser.add_argument("--connect-timeout", type=_positive_float, default=10.0, metavar="SECONDS",
                        help="time to reach --scheduler and see a worker (default 10)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar; print only the summary line")
    _add_diff_options(parser)
    return _run_sweep


def _fail(command: str, exc: BaseException, debug: bool, code: int = EXIT_USAGE) -> int:
    """One line naming what is wrong (``--debug``, the command line's own flag, adds the traceback)."""
    if debug:
        traceback.print_exception(exc)
    print(f"gebench {command}: {exc}", file=sys.stderr)
    return code


def _run_sweep(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    try:
        import gebench.sweep as sweep_pkg
        from gebench.sweep import SweepInputError
    except ImportError as exc:  # pragma: no cover - the package itself is part of gebench
        return _fail("sweep", exc, getattr(args, "debug", False))
    if args.resume and args.overwrite:
        print("gebench sweep: --resume and --overwrite exclude each other", file=sys.stderr)
        return EXIT_USAGE
    if args.scheduler is not None and args.workers is not None:
        print("gebench sweep: --workers sizes the local cluster; it does not apply with --scheduler", file=sys.stderr)
        return EXIT_USAGE
    try:
        import distributed  # noqa: F401
    except ImportError:
        print(f"gebench sweep: {_DEPS_HINT}", file=sys.stderr)
        return EXIT_USAGE
    pass_sets = {spec: spec for spec in args.passes}
    try:
        result = sweep_pkg.sweep(
            args.models, pass_sets=pass_sets, out=args.out, verify=args.verify, scheduler=args.scheduler,
            workers=args.workers, task_timeout=args.task_timeout, task_memory_mb=args.task_memory,
            resume=args.resume, overwrite=args.overwrite, retry_failed=args.retry_failed, baseline=args.baseline,
            isolate=not args.no_isolate, tasks_per_process=args.tasks_per_process,
            progress=False if args.quiet else None, ledger=args.ledger,
            custom_ops=args.custom_ops or None, connect_timeout=args.connect_timeout, time_rel=args.time_rel,
            time_abs=args.time_abs, slowdown_is_regression=args.fail_on_slowdown)
    except SweepInputError as exc:
        return _fail("sweep", exc, getattr(args, "debug", False))
    except KeyboardInterrupt:
        print(f"gebench sweep: interrupted; finished tasks are in {args.out} (--resume continues)", file=sys.stderr)
        return EXIT_INTERRUPTED
    text = result.summary()
    print(text.splitlines()[0] if args.quiet else text, file=out)
    if not args.quiet:
        print(f"  results: {result.out / 'results.jsonl'}, {result.out / 'results.csv'}", file=out)
        print(f"  report: {result.report_path}", file=out)
    if result.diff is not None:
        diff_text = result.diff.summary()
        print(diff_text.splitlines()[0] if args.quiet else diff_text, file=out)
        return EXIT_REGRESSION if result.diff.has_regression else 0
    if not result.ok:
        return EXIT_COMPILE_FAILED
    if result.verify_errors:
        return EXIT_VERIFY_MISMATCH
    return 0


def _setup_diff(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.add_argument("old", metavar="OLD", help="the baseline sweep folder")
    parser.add_argument("new", metavar="NEW", help="the sweep folder to judge")
    parser.add_argument("--json", default=None, metavar="FILE", help="also write the diff as JSON")
    _add_diff_options(parser)
    return _run_diff


def _run_diff(args: argparse.Namespace, out: TextIO | None = None) -> int:
    import json

    from gebench.sweep import SweepInputError, diff

    out = out or sys.stdout
    try:
        result = diff(args.old, args.new, time_rel=args.time_rel, time_abs=args.time_abs,
                      slowdown_is_regression=args.fail_on_slowdown)
    except SweepInputError as exc:
        return _fail("sweep-diff", exc, getattr(args, "debug", False))
    print(result.summary(limit=1000), file=out)
    if args.json:
        try:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(result.to_dict(), fh, indent=1, default=str)
        except OSError as exc:
            return _fail("sweep-diff", exc, getattr(args, "debug", False))
    return EXIT_REGRESSION if result.has_regression else 0


def register() -> None:
    """Add ``sweep`` and ``sweep-diff`` to the ``gebench`` command line (:mod:`gebench.cli` registers them when
    imported; this puts them back after a plugin replaced them)."""
    _register_builtins("sweep", "sweep-diff")
