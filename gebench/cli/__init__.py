"""The ``gebench`` command line.

``gebench compile MODEL [--passes P[:P...]] [--custom-ops FILE] [--dump-dir DIR] [--report FILE]`` runs the
custom-pass stages like GE's compiler, prints a per-pass summary and exits non-zero where GE would fail the
compile. The built-in commands (``compile``, ``atc``, ``lab``, ``sweep``, ``compare`` ...) are listed in
:mod:`gebench.cli._commands`, and each one's module is imported only when the command is chosen or its ``--help``
is asked for, so ``gebench --version`` and ``gebench --help`` import none of them; plugins add commands with
:func:`register_command` (from the ``gebench.commands`` entry points).
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import json
import logging
import os
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

from gebench._atomic import write_text_atomically
from gebench.cli._commands import BUILTIN_COMMANDS
from gebench.progress import ProgressCallback, step, terminal_progress

__all__ = ["main", "run", "end_process", "register_command", "build_parser", "format_summary"]

_log = logging.getLogger(__name__)

#: Exit code of a compile GE would fail (a pass failed, a pass file did not load, inference failed).
EXIT_COMPILE_FAILED = 1
#: Exit code of a command-line or input error (bad model path, unreadable file).
EXIT_USAGE = 2
#: Exit code of ``--verify`` finding a rewrite or pass that changes results.
EXIT_VERIFY_MISMATCH = 3
#: Exit code of a run stopped by Ctrl-C (SIGINT), as shells report it.
EXIT_INTERRUPTED = 130

Setup = Callable[[argparse.ArgumentParser], Any]
_COMMANDS: dict[str, tuple[Setup, str, str]] = {}


class _LazySetup:
    """A command's setup named ``"module:function"``, imported when it is called (the command is chosen or its
    ``--help`` is shown), so that listing the commands imports none of them."""

    def __init__(self, spec: str) -> None:
        module, sep, function = spec.partition(":")
        if not (module and sep and function):
            raise ValueError(f"a command's setup is a callable or 'module:function', not {spec!r}")
        self.spec = spec

    def __call__(self, parser: argparse.ArgumentParser) -> Any:
        module, _, function = self.spec.partition(":")
        return getattr(importlib.import_module(module), function)(parser)

    def __repr__(self) -> str:
        return f"_LazySetup({self.spec!r})"


def register_command(name: str, setup: Setup | str, help: str = "", *, epilog: str = "") -> None:  # noqa: A002
    """Add subcommand ``name``. ``setup(parser)`` adds its arguments and either returns the handler
    ``handler(args) -> int`` or calls ``parser.set_defaults(handler=...)``; given as ``"module:function"`` it is
    imported only when the command is chosen or its ``--help`` is asked for. ``epilog`` (examples) is shown at the
    end of ``gebench NAME --help``, as written. Re-registering replaces."""
    _COMMANDS[name] = (_LazySetup(setup) if isinstance(setup, str) else setup, help, epilog)


def _register_builtins(*names: str) -> None:
    """(Re-)register the built-in commands ``names`` (all of them by default) from :mod:`gebench.cli._commands`."""
    for command in BUILTIN_COMMANDS:
        if not names or command.name in names:
            register_command(command.name, command.setup, command.help, epilog=command.epilog)


def _load_extensions() -> None:
    """Load the command plugins of the ``gebench.commands`` entry points (the built-in commands are registered
    when :mod:`gebench.cli` is imported, and import their modules only when used)."""
    try:
        from importlib.metadata import entry_points

        for ep in entry_points(group="gebench.commands"):
            try:
                ep.load()
            except Exception as exc:  # noqa: BLE001 - a broken plugin must not break the CLI
                _log.warning("gebench command plugin %s failed to load: %s", ep.name, exc)
    except Exception:  # noqa: BLE001
        pass


_DEBUG_HELP = "show the Python traceback of an error (errors are one or two lines without it)"


class _CommandParser(argparse.ArgumentParser):
    """A subcommand's parser whose arguments are set up on first use: when it parses the command line or shows its
    help or usage. ``gebench --help`` and ``gebench --version`` thus import no command's module."""

    def __init__(self, *args: Any, setup: Setup | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._pending_setup = setup

    def set_up(self) -> None:
        """Run the command's setup (once): its arguments, its handler, and ``--debug``."""
        setup, self._pending_setup = self._pending_setup, None
        if setup is None:
            return
        try:
            handler = setup(self)
        except ImportError as exc:  # a command whose module (or a library its setup needs) is not installed
            _log.debug("cannot set up %s", self.prog, exc_info=True)
            self.exit(EXIT_USAGE, f"{self.prog}: this command is not available: {exc}\n")
        if callable(handler):
            self.set_defaults(handler=handler)
        if "--debug" not in self._option_string_actions:  # `gebench COMMAND --debug` works as well
            self.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.set_up()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self.set_up()
        return super().format_usage()

    def format_help(self) -> str:
        self.set_up()
        return super().format_help()


def build_parser(*, lazy: bool = False) -> argparse.ArgumentParser:
    """The ``gebench`` parser with every registered command. With ``lazy``, a command's setup (and the import of its
    module) waits until the command is chosen or its help is shown."""
    parser = argparse.ArgumentParser(
        prog="gebench", description="A workbench for Ascend GE graph fusion passes.",
        epilog="examples:\n  gebench compile assets/small_transformer.onnx --passes passes\n  gebench lab\n\n"
               "`gebench COMMAND --help` shows each command's options and examples.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (repeat for debug)")
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    parser.add_argument("--version", action="version", version=f"gebench {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_CommandParser)
    for name, (setup, help_text, epilog) in sorted(_COMMANDS.items()):
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=epilog or None, setup=setup,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        if not lazy:
            p.set_up()
    return parser


def _version() -> str:
    """The installed gebench's version ("unknown" when it is not installed, e.g. run from a bare checkout)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gebench")
    except PackageNotFoundError:
        return "unknown"


def _seconds(text: str) -> float:
    """argparse type: a positive number of seconds."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value


def _setup_compile(parser: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    parser.add_argument("model", help="the model: IR text, a GE dump or ONNX (when gebench.io is present)")
    parser.add_argument("--passes", default=None,
                        help="pass files/directories separated by ':' (default: $ASCEND_GE_PY_PASS_PATH)")
    parser.add_argument("--custom-ops", action="append", default=[], metavar="FILE",
                        help="JSON file declaring custom ops (repeatable)")
    parser.add_argument("--dump-dir", default=None, metavar="DIR", help="write a graph file per GE dump point")
    parser.add_argument("--report", default=None, metavar="FILE", help="write the JSON report of the run")
    parser.add_argument("--fusion-result", default=None, metavar="FILE",
                        help="write GE's fusion statistics (fusion_result.json, as atc writes them) to FILE; "
                             "compare them with a real machine's by `gebench compare`")
    parser.add_argument("--stage", action="append", default=None, metavar="STAGE",
                        help="run only this stage (repeatable; e.g. BeforeInferShape)")
    parser.add_argument("--fusion-switch-file", default=None, metavar="FILE",
                        help="GE fusion switch JSON: Switch.GraphFusion.<pass>|ALL = on/off")
    parser.add_argument("--verify", action="store_true",
                        help="check every rewrite and pass numerically on the reference executor")
    parser.add_argument("--quiet", action="store_true",
                        help="print only the outcome line, and no progress bars (shown on a terminal's stderr for "
                             "steps over a second; GEBENCH_PROGRESS_DELAY=SECONDS changes that)")
    parser.add_argument("--hook-timeout", type=_seconds, default=None, metavar="SECONDS",
                        help="fail a pass whose hook (meet_requirements, replacement, run, ...) runs longer than this; "
                             "off by default, as in GE")
    from gebench.cli._backend_args import add_backend_arguments

    add_backend_arguments(parser)  # --backend, --soc-version, --output, --atc-on-model
    return _run_compile


def format_summary(run: Any) -> str:
    """The per-pass summary printed by ``gebench compile``."""
    lines = []
    snapshots = run.ir_snapshots
    if "PreRunBegin" not in snapshots:
        nodes_before = len(run.ir_graph)
    elif hasattr(snapshots, "node_count"):  # a snapshot still kept as a journal is counted, not built
        nodes_before = snapshots.node_count("PreRunBegin")
    else:
        nodes_before = len(snapshots["PreRunBegin"])
    if run.status == "SUCCESS":
        lines.append(f"compile SUCCESS: {nodes_before} -> {len(run.ir_graph)} nodes")
        if not run.passes and not run.load_errors:
            lines.append("  no pass ran: no pass file was given (--passes) or found in ASCEND_GE_PY_PASS_PATH")
    else:
        where = f" at pass {run.failed_pass}" if run.failed_pass else ""
        stage = f" (stage {run.failed_stage})" if run.failed_stage else ""
        reason = run.failure_reason
        if run.load_errors and reason.startswith("pass plugin load failed"):
            reason = f"pass plugin load failed ({len(run.load_errors)} error(s); GE would not compile)"
        lines.append(f"compile FAILED{where}{stage}: {reason}")
    for err in run.load_errors:
        lines.append(f"  load error: {err}")
    summary = run.summary()
    from gebench.fusion.stages import STAGE_ORDER

    def order(desc: Any) -> tuple[int, bytes]:
        stage = getattr(desc.stage, "value", str(desc.stage))
        rank = STAGE_ORDER.index(stage) if stage in STAGE_ORDER else len(STAGE_ORDER)
        return rank, desc.pass_name.encode()

    ran = {r.get("pass_name") for r in getattr(run, "pass_results", None) or ()}
    not_run = []
    for desc in sorted(run.passes, key=order):
        stage = getattr(desc.stage, "value", str(desc.stage))
        if desc.pass_name not in ran and desc.pass_name not in summary:
            not_run.append(f"[{stage}] {desc.pass_name}")  # the compile stopped before this pass: no counts
            continue
        entry = summary.get(desc.pass_name, {"candidates": 0, "replaced": 0, "rejected": {}, "lints": 0})
        rejected = ", ".join(f"{k}={v}" for k, v in sorted(entry["rejected"].items())) or "none"
        lines.append(f"  [{stage}] {desc.pass_name}: {entry['candidates']} candidates, {entry['replaced']} replaced, "
                     f"rejected: {rejected}" + (f", {entry['lints']} lints" if entry["lints"] else ""))
    if not_run:
        lines.append(f"  not run (the compile stopped before them): {', '.join(not_run)}")
    # a load error is also in the ledger as a lint: it is listed once, above
    load_texts = {str(err) for err in run.load_errors}
    lints = [r for r in run.ledger if getattr(r.status, "name", "") == "LINT" and r.reason not in load_texts]
    for r in lints:
        source = r.detail.get("source") if isinstance(r.detail, dict) else ""
        lines.append(f"  lint {r.pass_name or '-'}: {r.reason}" + (f" ({source})" if source else ""))
    # hook exceptions GE only logs (meet_requirements raising counts as False): each distinct one, once
    raised: dict[tuple[str, str], int] = {}
    for r in run.ledger:
        if r.exception and getattr(r.status, "name", "") != "LINT":
            key = (r.pass_name, (r.exception.strip().splitlines() or [""])[0])
            raised[key] = raised.get(key, 0) + 1
    for (pass_name, text), count in raised.items():
        lines.append(f"  exception {pass_name}: {text}" + (f" ({count} candidates)" if count > 1 else ""))
    return "\n".join(lines)


def _env_dumps(run: Any) -> list[Any]:
    """GE's own switch: with DUMP_GE_GRAPH set (and no --dump-dir) write the dumps GE would write, through
    gebench.io (DUMP_GRAPH_PATH / DUMP_GRAPH_LEVEL / DUMP_GRAPH_FORMAT). Nothing when gebench.io is absent."""
    try:
        from gebench.io.ge_dump import write_dumps_from_env
    except ImportError as exc:
        _log.info("DUMP_GE_GRAPH is set but gebench.io is not importable (%s); no dumps written", exc)
        return []
    return list(write_dumps_from_env(run.ir_snapshots))


class UsageError(Exception):
    """A bad command-line argument or input file: the CLI prints ``gebench COMMAND: <message>`` and exits 2."""


def _usage(message: str) -> int:
    print(f"gebench compile: {message}", file=sys.stderr)
    return EXIT_USAGE


def _check_output_dir(flag: str, value: str) -> None:
    """``value`` can hold the files of ``flag``: it is (or can be made) a writable directory.

    Raises:
        UsageError: naming the flag, the path and the reason.
    """
    path = os.path.abspath(value)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{flag} {value}: cannot create the directory ({exc.strerror or exc}); choose another "
                         "folder") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {value}: the directory is not writable; choose another folder")


def _check_output_file(flag: str, value: str) -> None:
    """``value`` can be written as the file of ``flag``: it is no folder, and its folder is (or can be made)
    writable.

    Raises:
        UsageError: naming the flag, the path and the reason.
    """
    folder = os.path.dirname(os.path.abspath(value))
    if os.path.isdir(value):
        raise UsageError(f"{flag} {value}: is a directory; give a file name")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"{flag} {value}: cannot create the folder {folder} ({exc.strerror or exc}); choose "
                         "another path") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {value}: the folder {folder} is not writable; choose another path")


def _check_compile_args(args: argparse.Namespace) -> None:
    """Every path the compile reads or writes, checked before anything runs.

    Raises:
        UsageError: a missing model, pass path item, custom-op or fusion-switch file, or an unwritable output.
    """
    from gebench.fusion.plugins.scan import split_pass_path

    if not os.path.exists(args.model):
        raise UsageError(f"model {args.model} does not exist; check the path")
    for item in split_pass_path(args.passes):
        if not os.path.exists(item):
            raise UsageError(f"--passes {item}: no such file or directory; check the path")
    for item in args.custom_ops:
        if not os.path.isfile(item):
            raise UsageError(f"--custom-ops {item}: no such file; check the path")
    if args.fusion_switch_file and not os.path.isfile(args.fusion_switch_file):
        raise UsageError(f"--fusion-switch-file {args.fusion_switch_file}: no such file; check the path")
    if args.dump_dir:
        _check_output_dir("--dump-dir", args.dump_dir)
    if args.report:
        _check_output_file("--report", args.report)
    if getattr(args, "fusion_result", None):
        _check_output_file("--fusion-result", args.fusion_result)


def _run_compile(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``gebench compile``, with progress bars on stderr when it is a terminal and ``--quiet`` is not given."""
    progress = terminal_progress(quiet=args.quiet)
    try:
        return _compile_command(args, out, progress)
    finally:
        if progress is not None:
            progress.close()


def _compile_command(args: argparse.Namespace, out: TextIO | None, progress: ProgressCallback | None) -> int:
    from gebench import api, ops
    from gebench.fusion.runtime import disabled_by_fusion_switch

    out = out or sys.stdout
    try:
        _check_compile_args(args)
        for item in args.custom_ops:
            try:
                ops.load_custom_ops(item)
            except ops.CustomOpError as exc:
                raise UsageError(f"--custom-ops: {exc}") from None
        try:
            disabled_by_fusion_switch(args.fusion_switch_file, [])
        except ValueError as exc:
            raise UsageError(f"--fusion-switch-file: {exc}") from None
    except UsageError as exc:
        return _usage(str(exc))
    try:
        run = api.compile(args.model, passes=args.passes, stages=args.stage, verify=args.verify,
                          fusion_switch=args.fusion_switch_file, hook_timeout=args.hook_timeout, progress=progress)
    except (FileNotFoundError, TypeError, ValueError, OSError) as exc:
        return _usage(f"cannot read the model {args.model}: {exc}")
    text = format_summary(run)
    if args.quiet:
        text = text.splitlines()[0]
    print(text, file=out)
    try:
        if args.dump_dir:
            for path in api.write_dumps(run, args.dump_dir, progress=progress):
                print(f"  dump: {path}", file=out)
        elif os.environ.get("DUMP_GE_GRAPH"):
            with step(progress, "dump"):
                written = _env_dumps(run)
            for path in written:
                print(f"  dump: {path}", file=out)
    except (OSError, ValueError) as exc:  # GeDumpError is a ValueError
        where = f"--dump-dir {args.dump_dir}" if args.dump_dir else "DUMP_GE_GRAPH"
        return _usage(f"{where}: the dumps could not be written: {exc}")
    verify_report = None
    if args.verify and run.status == "SUCCESS":
        with step(progress, "verify"):
            verify_report = run.verify()
        print(verify_report.summary(), file=out)
    if args.report:
        data = run.report()
        if verify_report is not None:
            data["verify"] = verify_report.to_dict()
        try:
            with step(progress, "report"):
                write_text_atomically(args.report, json.dumps(data, indent=1, default=str))
        except OSError as exc:
            return _usage(f"--report {args.report}: cannot write the report ({exc.strerror or exc}); choose "
                          "another path")
        print(f"  report: {args.report}", file=out)
    if getattr(args, "fusion_result", None):
        from gebench.fusion.statistics import write_fusion_result

        try:  # written even when no pass matched (an empty object), so the file always tells
            write_fusion_result(run.fusion_result() or {}, args.fusion_result, empty_too=True)
        except OSError as exc:
            return _usage(f"--fusion-result {args.fusion_result}: cannot write it ({exc.strerror or exc}); choose "
                          "another path")
        print(f"  fusion result: {args.fusion_result}", file=out)
    if run.status != "SUCCESS":
        return EXIT_COMPILE_FAILED
    if verify_report is not None and not verify_report.ok:
        return EXIT_VERIFY_MISMATCH
    return _run_backend(args, run, out)


def _run_backend(args: argparse.Namespace, run: Any, out: TextIO) -> int:
    """``--backend``/``--output``: hand the compiled graph to gebench.exec.backends (AIR, or CANN's atc)."""
    if getattr(args, "backend", None) is None:
        return 0
    from gebench.exec.backends import BackendError, build_from_args

    pass_path = args.passes or os.environ.get("ASCEND_GE_PY_PASS_PATH")
    model_path = args.model if os.path.isfile(args.model) else None
    try:
        result = build_from_args(args, run.ir_graph, model_path=model_path, pass_path=pass_path)
    except (BackendError, ValueError) as exc:
        print(f"gebench compile: {exc}", file=sys.stderr)
        return EXIT_COMPILE_FAILED
    if result is None:
        return 0
    for path in result.outputs:
        print(f"  {result.backend}: {path}", file=out)
    if not result.ok:
        print(result.log, file=sys.stderr)
        print(f"gebench compile: atc exited with status {result.returncode}", file=sys.stderr)
        return EXIT_COMPILE_FAILED
    return 0


_register_builtins()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gebench`` script; returns the exit code.

    Exit codes: 0 success; 1 where GE would fail the compile; 2 bad usage or a bad input file (argparse's own
    errors too); 3 ``--verify`` found a mismatch; 130 Ctrl-C. An error is one or two lines on stderr naming what
    is at fault; ``--debug`` adds the Python traceback.
    """
    _load_extensions()
    parser = build_parser(lazy=True)
    args = parser.parse_args(argv)
    if args.verbose:
        logging.basicConfig(level=logging.DEBUG if args.verbose > 1 else logging.INFO)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    command = f"gebench {args.command}"
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        if args.debug:
            traceback.print_exc()
        print(f"{command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - the CLI turns every error into one or two lines
        if args.debug:
            traceback.print_exc()
        first = (str(exc).strip().splitlines() or [""])[0]
        print(f"{command}: {type(exc).__name__}: {first}", file=sys.stderr)
        print(f"{command}: this error was not expected here; run again with --debug for the traceback",
              file=sys.stderr)
        return EXIT_USAGE


def run() -> NoReturn:
    """Entry point of the ``gebench`` script and of ``python -m gebench``: :func:`main` on the process's arguments,
    then :func:`end_process` with its exit code."""
    try:
        code: Any = main()
    except SystemExit as exc:  # argparse's --help and usage errors
        code = exc.code
    end_process(code)


def end_process(code: Any) -> NoReturn:
    """End the process with exit ``code`` (as ``sys.exit`` reads it) once the exit handlers have run (logging,
    temporary folders, child processes) and stdout and stderr are flushed, without the interpreter freeing every
    object one by one: after a compile of an LLM-sized graph that teardown alone took seconds. While a thread
    other than a daemon is still running, it is a plain ``sys.exit`` (which waits for it)."""
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    elif not isinstance(code, int):
        code = 0 if code is None else 1
    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon and t.is_alive() for t in threading.enumerate()):
        sys.exit(code)
    atexit._run_exitfuncs()  # noqa: SLF001 - what the interpreter's own shutdown runs first
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (``gebench ... | head``) or a closed stream
            pass
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    run()
