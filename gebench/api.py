"""gebench's Python API: load a graph, compile it through custom passes, look at the result.

``load(path_or_graph)`` accepts a ``ge.graph.Graph`` (e.g. from ``GraphBuilder``), an ``ir.Graph``, the IR
text form (a file or a string), the files :mod:`gebench.io` reads (ONNX, GE dumps, AIR: its ``FILE_LOADERS``)
and whatever is registered with :func:`register_loader`, and returns a ``ge.graph.Graph`` (GE's graph API; its ``.ir`` is gebench's IR graph).
``compile(graph, passes=...)`` runs the passes through GE's stages and returns a
:class:`~gebench.fusion.runtime.Run`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import ir
from ._atomic import write_text_atomically
from .fusion.runtime import Run, execute
from .fusion.snapshots import checking_journals
from .fusion.stages import in_dump_order
from .progress import ProgressCallback, accepts_progress, step

if TYPE_CHECKING:
    from .ge.graph import Graph as GeGraph

__all__ = [
    "Run",
    "compile",
    "load",
    "register_dump_writer",
    "register_loader",
    "resolve_passes",
    "write_dumps",
]

_log = logging.getLogger(__name__)

Loader = Callable[[Path], Any]
DumpWriter = Callable[[Run, Path], list[Path]]

_LOADERS: dict[str, Loader] = {}
_DUMP_WRITERS: list[DumpWriter] = []

#: Suffixes read as the IR text form when no other loader claims them.
TEXT_SUFFIXES = (".gir", ".ir", ".txt")


def register_loader(suffixes: str | Iterable[str], fn: Loader) -> None:
    """Make :func:`load` read files with these suffixes (``".onnx"``) by ``fn(path) -> ir.Graph``.

    ``fn`` may also return a ``ge.graph.Graph``. A later registration for a suffix replaces the earlier one, and
    any registration replaces gebench.io's reader of that suffix (``gebench.io.FILE_LOADERS``). Suffix matching
    is case-insensitive and also tries compound suffixes (``".pbtxt"``, ``".onnx.txt"``).
    """
    if isinstance(suffixes, str):
        suffixes = [suffixes]
    for suffix in suffixes:
        s = suffix.lower()
        _LOADERS[s if s.startswith(".") else "." + s] = fn


def register_dump_writer(fn: DumpWriter) -> None:
    """Make ``gebench compile --dump-dir`` (and :func:`write_dumps`) call ``fn(run, dump_dir) -> paths`` too
    (after gebench.io's writer of GE's dump files)."""
    _DUMP_WRITERS.append(fn)


def _ensure_extensions() -> Any:
    """:mod:`gebench.io` (imported on first use: it needs onnx and protobuf), or None when it cannot be imported
    (a partial install: :func:`load` then reads the IR text form and registered suffixes only)."""
    try:
        from . import io as gebench_io
    except ImportError as exc:
        _log.debug("gebench.io not importable; ONNX, GE dumps and AIR are not read or written: %s", exc)
        return None
    return gebench_io


def _loaders() -> dict[str, Loader]:
    """Suffix -> loader: gebench.io's readers, replaced by those registered with :func:`register_loader`."""
    gebench_io = _ensure_extensions()
    return {**(gebench_io.FILE_LOADERS if gebench_io is not None else {}), **_LOADERS}


def _dump_writers() -> list[DumpWriter]:
    """gebench.io's writer of GE's dump files (when importable), then those of :func:`register_dump_writer`."""
    return ([_write_ge_dumps] if _ensure_extensions() is not None else []) + _DUMP_WRITERS


def _write_ge_dumps(run: Run, out_dir: Path, *, progress: Any = None) -> list[Path]:
    """GE's dump files of every snapshot of ``run``, its dump points first (``gebench.io.write_dump_dir``)."""
    from .io import write_dump_dir

    return write_dump_dir(in_dump_order(run.ir_snapshots), out_dir, progress=progress)


def _as_ir(value: Any, what: str) -> ir.Graph:
    if isinstance(value, ir.Graph):
        return value
    ir_graph = getattr(value, "_ir", None)
    if isinstance(ir_graph, ir.Graph):
        if getattr(value, "_handle", True) is None:
            raise ValueError(f"{what}: the ge.graph.Graph was consumed (by Pattern/create_pattern) and is no longer valid")
        return ir_graph
    raise TypeError(f"{what}: expected ir.Graph or ge.graph.Graph, got {type(value).__name__}")


def load(path_or_graph: Any, *, progress: ProgressCallback | None = None) -> GeGraph:
    """Return the graph of a graph object, a file, or IR text as a ``ge.graph.Graph``.

    The result answers GE's ``Graph`` API (``get_direct_nodes``, ``find_node_by_name``, ``get_all_nodes``, ...);
    its ``.ir`` is the :class:`gebench.ir.Graph` behind it. A graph read from a file or text is the caller's
    alone; :func:`compile` still works on a copy of it (pass ``copy=False`` to let the run change it).

    Args:
        path_or_graph: ``ge.graph.Graph`` (returned as is), ``ir.Graph`` (a view of that very graph: ``.ir`` is
            it), a path to a file (by suffix through the loader registry; the IR text form otherwise), or a
            string holding IR text.
        progress: reading a file is reported as step ``"load <file name>"`` (:mod:`gebench.progress`), with
            the loader's own counts when it takes a ``progress`` argument.

    Raises:
        FileNotFoundError: a path that does not exist.
        ir.TextFormError: text that does not parse (message gives line and column, and the file for a file).
        ValueError: a file a registered loader cannot read (``GeDumpError``, ``OnnxImportError``, ... naming it),
            or a ``ge.graph.Graph`` that was consumed (by ``create_pattern``).
        TypeError: an unsupported object.
    """
    from .ge.graph import Graph

    if isinstance(path_or_graph, Graph):
        _as_ir(path_or_graph, "load()")  # a consumed graph is refused here, not at its first use
        return path_or_graph
    if isinstance(path_or_graph, ir.Graph) or hasattr(path_or_graph, "_ir"):
        return Graph._wrap(_as_ir(path_or_graph, "load()"), owns=False)
    return Graph._wrap(_load_ir(path_or_graph, progress=progress), owns=True)


def _load_ir(path_or_graph: Any, *, progress: ProgressCallback | None = None) -> ir.Graph:
    """:func:`load`, returning the IR graph itself (``ir.Graph`` as is, a ``ge.graph.Graph``'s live IR graph);
    for gebench's own callers. Raises as :func:`load`."""
    if isinstance(path_or_graph, ir.Graph) or hasattr(path_or_graph, "_ir"):
        return _as_ir(path_or_graph, "load()")
    if isinstance(path_or_graph, (str, os.PathLike)):
        text = os.fspath(path_or_graph)
        if isinstance(path_or_graph, str) and ("\n" in text or not text.strip()):
            return ir.parse_text(text)
        path = Path(text)
        if not path.exists():
            if isinstance(path_or_graph, str) and path.suffix.lower() not in _known_suffixes():
                try:
                    return ir.parse_text(text)
                except ValueError:
                    pass
            raise FileNotFoundError(f"gebench.load: {text!r} does not exist")
        loaders = _loaders()
        name = path.name.lower()
        try:
            with step(progress, f"load {path.name}") as counts:
                for suffix in sorted(loaders, key=len, reverse=True):
                    if name.endswith(suffix):
                        loader = loaders[suffix]
                        if counts is not None and accepts_progress(loader):
                            return _as_ir(loader(path, progress=counts), f"loader for {suffix}")
                        return _as_ir(loader(path), f"loader for {suffix}")
                return ir.parse_text(path.read_text(encoding="utf-8"))
        except (ir.TextFormError, ir.GraphError, UnicodeDecodeError) as exc:
            # the text form's errors give a line but no file: name it (a misnamed or damaged file, say)
            if str(path) in str(exc):
                raise
            what = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc)
            if isinstance(exc, UnicodeDecodeError) or what.startswith("line 1,"):  # not even the header parses
                what += "; is it a graph file gebench reads (IR text, a GE dump, ONNX, AIR)?"
            raise ir.TextFormError(f"{path}: {what}") from exc
    raise TypeError(f"gebench.load: expected a graph, a path or IR text, got {type(path_or_graph).__name__}")


def _known_suffixes() -> set[str]:
    return {*TEXT_SUFFIXES, *_loaders()}


def resolve_passes(passes: Any) -> tuple[list[Any], list[Any], Any]:
    """Turn ``passes`` into (descriptors, load errors, PassSet or None).

    Accepts None (``ASCEND_GE_PY_PASS_PATH``), a :class:`~gebench.fusion.plugins.reload.PassSet`, a path string
    (``os.pathsep``-separated), a path, or an iterable mixing paths, pass classes (decorated with
    ``register_*_pass``) and ``PassDescriptor`` objects.
    """
    from .fusion.plugins.descriptor import PassDescriptor
    from .fusion.plugins.reload import PassSet

    if isinstance(passes, PassSet):
        return passes.descriptors(), passes.errors, passes
    if passes is None or isinstance(passes, (str, os.PathLike)):
        pass_set = PassSet(passes if not isinstance(passes, os.PathLike) else [passes])
        return pass_set.descriptors(), pass_set.errors, pass_set
    descriptors: list[Any] = []
    paths: list[str] = []
    for item in passes:
        if isinstance(item, PassDescriptor):
            descriptors.append(item)
        elif isinstance(item, type) and isinstance(getattr(item, "__ge_pass_descriptor__", None), PassDescriptor):
            descriptors.append(item.__ge_pass_descriptor__)
        elif isinstance(item, (str, os.PathLike)):
            paths.append(os.fspath(item))
        else:
            raise TypeError(f"passes: expected paths, registered pass classes or PassDescriptors, got {item!r}")
    errors: list[Any] = []
    pass_set = None
    if paths:
        pass_set = PassSet(paths)
        descriptors = [*pass_set.descriptors(), *descriptors]
        errors = pass_set.errors
    seen: set[str] = set()
    unique = []
    for d in descriptors:
        if d.pass_name in seen:
            from .fusion.plugins.scan import PassLoadError

            errors.append(PassLoadError(_class_file(d.cls), 0, ValueError(
                f"duplicate pass name {d.pass_name!r}; pass names must be unique"), "registration"))
            continue
        seen.add(d.pass_name)
        unique.append(d)
    return unique, errors, pass_set


def _class_file(cls: type) -> str:
    import inspect

    try:
        return inspect.getsourcefile(cls) or cls.__module__
    except TypeError:
        return cls.__module__


def compile(graph: Any, passes: Any = None, custom_ops: str | os.PathLike[str] | Iterable[Any] | None = None,  # noqa: A001
            stages: Iterable[Any] | None = None, *, options: dict[str, str] | None = None, copy: bool = True,
            record_all: bool = True, run_after_load_error: bool = False, verify_rewrites: bool = False,
            snapshots: bool = True, verify: bool = False, fusion_switch: Any = None, ledger: bool = True,
            hook_timeout: float | None = None, progress: ProgressCallback | None = None) -> Run:
    """Compile ``graph`` through the custom-pass stages of GE with ``passes``.

    Args:
        graph: anything :func:`load` accepts.
        passes: see :func:`resolve_passes`; default: the files of ``ASCEND_GE_PY_PASS_PATH``.
        custom_ops: JSON file(s) declaring custom ops (``gebench.ops.load_custom_ops``), loaded first.
        stages: restrict to these stages (PassStage members or their values).
        options: compile options visible through ``PassContext.get_option_value``.
        copy: work on a copy (default) so the caller's graph is untouched (a graph read here from a file or
            text is nobody else's: the run works on it directly). The copy is copy-on-write
            (``ir.Graph.copy(share=True)``): nodes the run leaves alone share their attrs and descs with the
            caller's graph, so edit a node of either graph in place only after ``graph.touch(node)`` (as the IR
            asks: ``graph.ir.touch(node)`` for a ``ge.graph.Graph``; the ``ge`` facade's setters do it), or copy
            it first.
        record_all: record structural mismatches and boundary violations too.
        run_after_load_error: run the loaded passes even though a pass file failed (GE would not compile).
        verify_rewrites: check every IR invariant (``ir.Graph.verify``) after each rewrite.
        verify: check each pattern/decompose rewrite numerically as it happens (errors on the ledger records;
            ``Run.verify()`` then compares the snapshots too).
        fusion_switch: GE's fusion-switch JSON (path or dict) turning passes off by name (or ``ALL``).
        snapshots: keep the graph at each GE dump point (``Run.snapshots``). Each is a journal of what later
            stages change (O(changes)), built into a full graph the first time it is read.
        ledger: False keeps no ledger at all (``Run.ledger`` is empty); the outcome and the graph are the same.
        hook_timeout: seconds each pass hook call may take; a hook running longer is interrupted and fails its
            pass (the reason names the pass, the hook and the ``file:line`` where it was interrupted). None
            (default): no bound, as in GE. Interruption is exact on the main thread (a timer signal); in other
            threads it is checked per line of pass code (see ``gebench.fusion.runtime.execute``).
        progress: called as ``progress(step, done, total)`` while the graph loads and compiles (steps of
            :func:`load` and of ``gebench.fusion.runtime.execute``; :mod:`gebench.progress`).

    Returns:
        The :class:`Run`; GE's compile failures are its ``status``/``failure_reason``, never exceptions.

    Raises:
        FileNotFoundError, TypeError, ir.TextFormError: ``graph`` or ``custom_ops`` cannot be read.
    """
    if custom_ops is not None:
        from . import ops

        items = [custom_ops] if isinstance(custom_ops, (str, os.PathLike)) else list(custom_ops)
        for item in items:
            ops.load_custom_ops(item)
    ir_graph = _load_ir(graph, progress=progress)
    # a graph loaded here from a file or text belongs to nobody else: the run works on it without a copy
    fresh = not (isinstance(graph, ir.Graph) or hasattr(graph, "_ir"))
    caller_graph = expected = pre_run = None
    if copy and not fresh:
        caller_graph = ir_graph
        if checking_journals():  # the tests' check that the copy-on-write copy kept the caller's graph intact
            expected = ir_graph.copy()
        with step(progress, "copy graph"):
            ir_graph = ir_graph.copy(share=True)
        if snapshots:
            # the caller's graph is the run's graph as it starts: a journal on it keeps that state (the PreRunBegin
            # snapshot) at the cost of what the caller changes later, so the first stage's rewrites keep none
            pre_run = ir.GraphJournal(caller_graph)
    descriptors, errors, _ = resolve_passes(passes)
    run = execute(ir_graph, descriptors, stages=stages, options=options, record_all=record_all,
                  load_errors=errors, run_after_load_error=run_after_load_error, verify_rewrites=verify_rewrites,
                  snapshots=snapshots, verify=verify, fusion_switch=fusion_switch, ledger=ledger,
                  hook_timeout=hook_timeout, progress=progress, pre_run_snapshot=pre_run)
    if expected is not None and caller_graph is not None:
        diff = ir.first_difference(caller_graph, expected)
        if diff is not None:
            raise ir.GraphError(f"compile changed the caller's graph {caller_graph.name!r} through its copy (a change "
                                f"skipped Graph.touch): {diff}")
    return run


def write_dumps(run: Run, dump_dir: str | os.PathLike[str], *,
                progress: ProgressCallback | None = None) -> list[Path]:
    """Write one file per snapshot into ``dump_dir``.

    Dump writers are used when there are any (gebench.io's GE ge_proto/ge_onnx files, then those registered with
    :func:`register_dump_writer`); otherwise each snapshot is written in the IR text form as
    ``ge_readable_<8-digit seq>_graph_0_<GE dump name>.txt``. Every file is written under a unique temporary name
    and renamed into place, so several processes may share ``dump_dir``.

    ``progress`` sees step ``"dump"`` (one per writer, ``"dump i/n"``, when several are registered), with the
    writer's own counts when it takes a ``progress`` argument, else per file written here.

    Raises:
        OSError: ``dump_dir`` cannot be created or written (the writers of gebench.io raise ``GeDumpError``).
    """
    out_dir = Path(dump_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    writers = _dump_writers()
    if writers:
        written: list[Path] = []
        for i, writer in enumerate(writers):
            name = "dump" if len(writers) == 1 else f"dump {i + 1}/{len(writers)}"
            with step(progress, name) as counts:
                if counts is not None and accepts_progress(writer):
                    written.extend(writer(run, out_dir, progress=counts))
                else:
                    written.extend(writer(run, out_dir))
        return written
    snapshots = in_dump_order(run.ir_snapshots)
    written = []
    with step(progress, "dump", len(snapshots)) as counts:
        for seq, (suffix, graph) in enumerate(snapshots.items()):
            path = out_dir / f"ge_readable_{seq:08d}_graph_0_{suffix}.txt"
            write_text_atomically(path, ir.to_text(graph))  # others may dump here too
            written.append(path)
            if counts is not None:
                counts(seq + 1, len(snapshots))
    return written
