"""What a sweep runs over: the model files behind ``MODELS...`` and the pass sets shipped to workers by content.

Model expansion runs on the driver, so the driver must see the corpus at the same paths as the workers (on a
real cluster: shared storage mounted at the same path everywhere). Pass files are read once on the driver and
travel inside every task (:class:`PassBundle`); a worker writes them into a local cache directory keyed by
their digest, so workers need no copy of the pass folder.
"""

from __future__ import annotations

import dataclasses
import glob
import hashlib
import logging
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["ModelRef", "PassBundle", "SweepInputError", "bundle_passes", "expand_models", "MODEL_SUFFIXES"]

_log = logging.getLogger(__name__)

#: Suffixes taken from folders and globs. Explicitly named files are always taken, whatever their suffix;
#: GE dump files in folders are taken only as their ``PreRunBegin`` ge_proto dump (the compile's input).
MODEL_SUFFIXES = (".onnx", ".air", ".gir", ".ir")

#: Cap on the bytes of one pass set's files: they travel with every task (a thousand tasks of a 16 MiB pass folder
#: would move 16 GB through the scheduler; pass folders are usually kilobytes).
MAX_BUNDLE_BYTES = 16 << 20

_SKIPPED_DIRS = {"__pycache__", ".git", ".ipynb_checkpoints"}


class SweepInputError(ValueError):
    """Bad input to a sweep: a missing model or pass path, an unreachable scheduler, a conflicting out dir.

    The message names the thing at fault in one or two lines (the CLI prints it and exits 2).
    """


@dataclasses.dataclass(frozen=True)
class ModelRef:
    """One model of the corpus: ``path`` is absolute (what workers read); ``name`` is the path as the user
    wrote it (joined with the file's place below a folder argument), the key that diffs match on."""

    path: str
    name: str


def _is_glob(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def _folder_takes(path: Path) -> bool:
    """Whether a file found inside a folder is a model (see :data:`MODEL_SUFFIXES`)."""
    if path.suffix.lower() in MODEL_SUFFIXES:
        return True
    from gebench.io import parse_dump_name

    name = parse_dump_name(path.name)
    return name is not None and name.kind == "ge_proto" and name.suffix == "PreRunBegin"


def _walk(folder: Path) -> list[Path]:
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIPPED_DIRS and not d.startswith("."))
        for f in sorted(filenames):
            p = Path(dirpath) / f
            if _folder_takes(p):
                found.append(p)
    return found


def expand_models(items: Iterable[str | os.PathLike[str]]) -> list[ModelRef]:
    """Expand files, folders (recursively, :data:`MODEL_SUFFIXES` and ``PreRunBegin`` dumps) and globs into
    models, in argument order then path order, each absolute path once.

    Raises:
        SweepInputError: an item that does not exist, a glob or folder that holds no model, no items at all.

    Cost: one directory walk per folder argument; files are not opened.
    """
    out: list[ModelRef] = []
    seen: set[str] = set()

    def add(path: Path, name: str) -> None:
        absolute = os.path.abspath(path)
        if absolute not in seen:
            seen.add(absolute)
            out.append(ModelRef(absolute, os.path.normpath(name)))

    def take(path: Path, name: str, item: str) -> None:
        if path.is_dir():
            files = _walk(path)
            if not files:
                raise SweepInputError(f"no models in folder {item!r} (looked for {', '.join(MODEL_SUFFIXES)} "
                                      "and PreRunBegin GE dumps)")
            for f in files:
                add(f, os.path.join(name, os.path.relpath(f, path)))
        else:
            add(path, name)

    any_item = False
    for raw in items:
        any_item = True
        item = os.fspath(raw)
        path = Path(item).expanduser()
        if path.exists():
            take(path, item, item)
        elif _is_glob(item):
            matches = sorted(glob.glob(os.path.expanduser(item), recursive=True))
            picked = [m for m in matches if not _SKIPPED_DIRS & set(Path(m).parts)
                      and (Path(m).is_dir() or _folder_takes(Path(m)))]
            if not picked:
                raise SweepInputError(f"no models match {item!r}")
            for m in picked:
                take(Path(m), m, item)
        else:
            raise SweepInputError(f"model path {item!r} does not exist")
    if not any_item:
        raise SweepInputError("no models given")
    return out


# ---------------------------------------------------------------------------------------------- pass bundles
@dataclasses.dataclass(frozen=True)
class PassBundle:
    """A pass set by content: what a worker needs to load the same passes the driver sees.

    Attributes:
        label: the pass set as the user gave it (``"passes"``, ``"a.py:b.py"``); results are keyed by it.
        origins: the absolute paths of the pass-path items on the driver, in order.
        items: the items' paths relative to the bundle root (``"0/passes"``, ``"1/b.py"``).
        files: ``(relative path, content)`` of every file below the items (no ``__pycache__``).
        digest: SHA-256 over items and files; equal digests mean the same passes.
    """

    label: str
    origins: tuple[str, ...]
    items: tuple[str, ...]
    files: tuple[tuple[str, bytes], ...]
    digest: str

    def materialize(self, cache_dir: str | os.PathLike[str] | None = None) -> list[str]:
        """Write the files below ``cache_dir/<digest>`` (once per digest; atomic: written to a temporary
        folder, then renamed) and return the item paths to load.

        Cost: nothing when the digest was written before; else one write per file.
        """
        base = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        root = base / self.digest  # the digest names the content: an existing folder is complete
        if not root.is_dir():
            base.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{self.digest[:12]}-", dir=base))
            for rel, content in self.files:
                target = staging / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
            for item in self.items:  # an item with no file (an empty folder) still exists
                (staging / item).parent.mkdir(parents=True, exist_ok=True)
            try:
                os.rename(staging, root)
            except OSError:  # another task wrote the same digest first
                import shutil

                shutil.rmtree(staging, ignore_errors=True)
        return [str(root / item) for item in self.items]

    def unmap(self, text: str, item_paths: Sequence[str]) -> str:
        """``text`` with the worker-side item paths replaced by the driver's paths (for messages)."""
        for local, origin in zip(item_paths, self.origins):
            text = text.replace(local, origin)
        return text


def _files_below(folder: Path) -> list[Path]:
    """Every file below ``folder`` in path order, without hidden entries, ``__pycache__`` and ``.pyc``."""
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIPPED_DIRS and not d.startswith("."))
        found.extend(Path(dirpath) / f for f in sorted(filenames) if not f.startswith(".") and not f.endswith(".pyc"))
    return found


_cache: list[Path] = []


def default_cache_dir() -> Path:
    """This process's folder for shipped pass files (``$TMPDIR/gebench-sweep-passes-*``), made on first use and
    removed when the process exits normally. A task server makes it before it forks, so its task processes
    share it (they end with ``os._exit`` and never remove it)."""
    if not _cache:
        import atexit
        import shutil

        path = Path(tempfile.mkdtemp(prefix="gebench-sweep-passes-"))
        owner = os.getpid()

        def remove() -> None:
            if os.getpid() == owner:
                shutil.rmtree(path, ignore_errors=True)

        atexit.register(remove)
        _cache.append(path)
    return _cache[0]


def bundle_passes(spec: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
                  label: str | None = None) -> PassBundle:
    """Read a pass set (a path, an ``os.pathsep``-separated string or a list of paths, as
    :func:`gebench.compile` takes) into a :class:`PassBundle`.

    A folder item carries every file below it (packages and the data files passes read), except
    ``__pycache__`` and hidden entries; which of them load follows GE's scan rules on the worker.

    Raises:
        SweepInputError: an item does not exist, or the files exceed :data:`MAX_BUNDLE_BYTES`.
    """
    from gebench.fusion.plugins.scan import split_pass_path

    if isinstance(spec, (str, os.PathLike)):
        text = os.fspath(spec)
        raw_items = split_pass_path(text)
        label = label or text
    else:
        raw_items = [os.fspath(p) for p in spec]
        label = label or os.pathsep.join(raw_items)
    if not raw_items:
        raise SweepInputError(f"pass set {label!r} names no pass file or folder")
    origins: list[str] = []
    items: list[str] = []
    files: list[tuple[str, bytes]] = []
    total = 0
    for i, raw in enumerate(raw_items):
        path = Path(raw).expanduser()
        if not path.exists():
            raise SweepInputError(f"pass path {raw!r} does not exist")
        path = path.resolve()
        rel_item = f"{i}/{path.name}"
        origins.append(str(path))
        items.append(rel_item)
        sources = [path] if path.is_file() else _files_below(path)
        for src in sources:
            content = src.read_bytes()
            total += len(content)
            if total > MAX_BUNDLE_BYTES:
                raise SweepInputError(f"pass set {label!r} holds more than {MAX_BUNDLE_BYTES >> 20} MiB of files")
            rel = rel_item if src == path else f"{rel_item}/{src.relative_to(path).as_posix()}"
            files.append((rel, content))
    digest = hashlib.sha256()
    for item in items:
        digest.update(b"item\0" + item.encode() + b"\0")
    for rel, content in files:
        digest.update(b"file\0" + rel.encode() + b"\0" + hashlib.sha256(content).digest())
    return PassBundle(label, tuple(origins), tuple(items), tuple(files), digest.hexdigest())
