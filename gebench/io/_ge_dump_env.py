"""GE's dump switches (DUMP_GE_GRAPH, DUMP_GRAPH_FORMAT, DUMP_GRAPH_LEVEL, DUMP_GRAPH_PATH) and file names.

Semantics follow GE's code as recorded in the spec (ge-dump-format §1-§2); the docstrings say where gebench
has to choose because the code is not known.
"""

from __future__ import annotations

import dataclasses
import enum
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "DumpLevel",
    "DumpSettings",
    "DumpName",
    "dump_settings_from_env",
    "parse_dump_level",
    "parse_dump_formats",
    "stage_selected",
    "sanitize_suffix",
    "dump_file_name",
    "parse_dump_name",
    "dump_directory",
    "FORMATS",
    "DEFAULT_FORMATS",
]

_log = logging.getLogger(__name__)

#: Dump kinds in GE's order: ge_proto ``.txt``, ge_onnx ``.pbtxt``, ge_readable ``.txt``.
FORMATS = ("ge_proto", "onnx", "readable")
#: DUMP_GRAPH_FORMAT when unset or empty.
DEFAULT_FORMATS = ("ge_proto", "onnx")

_LEVEL2_STAGES = frozenset((
    "PreRunBegin", "PreRunAfterNormalizeGraph", "AfterInfershape", "PreRunAfterPrepare",
    "PreRunAfterOptimizeOriginalGraph", "PreRunAfterOptimizeAfterStage1", "PreRunAfterOptimizeSubgraph",
    "PreRunAfterOptimizeGraphBeforeBuild", "Build", "ComputeGraphBeforeLowering", "ExeGraphBeforeOptimize",
    "ExecuteGraphAfterSplit",
))
_LEVEL2_SUBSTRINGS = ("AutoFuseBeforeOptimize", "AutoFuseAfterOptimize", "RunCustomPass")
_LEVEL1_EXCLUDED = ("partition", "OptimizeSubGraph", "Aicpu", "sub_graph")
_UNSAFE = re.compile(r'[/\\:*?"<>|]')
_NAME = re.compile(r"^ge_(proto|onnx|readable)_(\d+)_(?:(aclop)_)?(?:graph_(\d+)_)?(.+)\.(txt|pbtxt)$")
_ONNX_NAME_LIMIT = 255
_ONNX_NAME_CUT = 248


class DumpLevel(enum.IntEnum):
    """``DUMP_GE_GRAPH`` values: what a dump contains."""

    NO_DUMP = 0
    #: everything, Const weights and framework defs included
    DUMP_ALL = 1
    #: no Const ``value``, no ``node_def``/``op_def``/``func_def``; ge_onnx drops string attrs and tensor bytes
    DUMP_WITH_OUT_DATA = 2
    #: as 2 without the graph option NamedAttrs; ge_onnx keeps only names, types and edges
    DUMP_WITH_OUT_DESC = 3


@dataclasses.dataclass(frozen=True)
class DumpSettings:
    """The dump switches of one process, as read from the environment.

    Attributes:
        level: DUMP_GE_GRAPH (NO_DUMP when dumping is off).
        formats: dump kinds selected by DUMP_GRAPH_FORMAT, in :data:`FORMATS` order.
        stages: the raw DUMP_GRAPH_LEVEL value (``""`` when unset: the level-2 whitelist).
        directory: where files go (see :func:`dump_directory`).
    """

    level: DumpLevel = DumpLevel.NO_DUMP
    formats: tuple[str, ...] = DEFAULT_FORMATS
    stages: str = ""
    directory: Path = Path(".")

    @property
    def enabled(self) -> bool:
        return self.level != DumpLevel.NO_DUMP

    def wants(self, suffix: str) -> bool:
        """True when dumping is on and DUMP_GRAPH_LEVEL selects the stage ``suffix``."""
        return self.enabled and stage_selected(suffix, self.stages)


def parse_dump_level(value: str | None) -> DumpLevel:
    """DUMP_GE_GRAPH as GE reads it (``strtol``): unset, empty, non-numeric, 0, negative or >= 4 turn dumping off.

    Leading blanks, a sign and trailing junk are handled as ``strtol`` does (``"2abc"`` is 2).
    """
    if value is None:
        return DumpLevel.NO_DUMP
    m = re.match(r"\s*([+-]?\d+)", value)
    if not m:
        return DumpLevel.NO_DUMP
    number = int(m.group(1))
    if number <= 0 or number >= 4:
        return DumpLevel.NO_DUMP
    return DumpLevel(number)


def parse_dump_formats(value: str | None) -> tuple[str, ...]:
    """DUMP_GRAPH_FORMAT: ``|``-separated, case-insensitive items, each matched as a substring.

    ``ge_proto`` selects ge_proto files, ``onnx`` ge_onnx files, ``readable`` ge_readable files; unset or empty
    gives ``("ge_proto", "onnx")``. A value that names none of them selects nothing (and is logged).
    """
    if value is None or not value.strip():
        return DEFAULT_FORMATS
    items = [item.strip().lower() for item in value.split("|") if item.strip()]
    chosen = tuple(kind for kind in FORMATS if any(kind in item for item in items))
    if not chosen:
        _log.warning("DUMP_GRAPH_FORMAT=%r names no dump format (ge_proto, onnx, readable): nothing is written", value)
    return chosen


def stage_selected(suffix: str, level: str | int | None) -> bool:
    """Whether DUMP_GRAPH_LEVEL ``level`` dumps the stage ``suffix`` (GE's ``NoNeedDumpGraphBySuffix``).

    ``None``/``""`` is level 2. ``1``: all but suffixes containing partition/OptimizeSubGraph/Aicpu/sub_graph.
    ``2``: the whitelist plus any suffix containing AutoFuseBeforeOptimize/AutoFuseAfterOptimize/RunCustomPass.
    ``3``: only ``Build``. ``4``: only ``PreRunBegin``. Other numbers are not documented; gebench treats them
    as 2 and logs a warning. A non-numeric ``"a|b"`` selects suffixes containing any item; an empty or
    all-digit suffix is then never selected.
    """
    text = "" if level is None else str(level).strip()
    if text == "":
        text = "2"
    if text.isdigit():
        number = int(text)
        if number not in (1, 2, 3, 4):
            _log.warning("DUMP_GRAPH_LEVEL=%s is not 1-4; using 2", text)
            number = 2
        if number == 1:
            return not any(word in suffix for word in _LEVEL1_EXCLUDED)
        if number == 2:
            return suffix in _LEVEL2_STAGES or any(word in suffix for word in _LEVEL2_SUBSTRINGS)
        return suffix == ("Build" if number == 3 else "PreRunBegin")
    if not suffix or suffix.isdigit():
        return False
    return any(item and item in suffix for item in text.split("|"))


def dump_directory(env: Mapping[str, str] | None = None, *, pid: int | None = None, device_id: int = 0) -> Path:
    """The dump directory GE picks (``GetDumpGraphPrefix``), first match wins:

    ``NPU_COLLECT_PATH`` -> ``<it>/extra-info/graph/<pid>_<device>/``; ``DUMP_GRAPH_PATH`` ->
    ``<it>/pid_<pid>_deviceid_<device>/``; ``ASCEND_WORK_PATH`` -> ``<it>/``; else the current directory.
    The directory is not created here (writers create it; GE falls back to ``./`` when that fails).
    ``DUMP_GE_GRAPH_PATH`` is not a GE variable and is ignored.
    """
    env = os.environ if env is None else env
    pid = os.getpid() if pid is None else pid
    if env.get("NPU_COLLECT_PATH"):
        return Path(env["NPU_COLLECT_PATH"]) / "extra-info" / "graph" / f"{pid}_{device_id}"
    if env.get("DUMP_GRAPH_PATH"):
        return Path(env["DUMP_GRAPH_PATH"]) / f"pid_{pid}_deviceid_{device_id}"
    if env.get("ASCEND_WORK_PATH"):
        return Path(env["ASCEND_WORK_PATH"])
    return Path(".")


def dump_settings_from_env(env: Mapping[str, str] | None = None) -> DumpSettings:
    """Read DUMP_GE_GRAPH, DUMP_GRAPH_FORMAT, DUMP_GRAPH_LEVEL and the directory variables (``os.environ`` by
    default). Cheap; reads nothing from disk."""
    env = os.environ if env is None else env
    return DumpSettings(
        level=parse_dump_level(env.get("DUMP_GE_GRAPH")),
        formats=parse_dump_formats(env.get("DUMP_GRAPH_FORMAT")),
        stages=env.get("DUMP_GRAPH_LEVEL", "") or "",
        directory=dump_directory(env),
    )


def sanitize_suffix(suffix: str) -> str:
    """GE's ``GetSanitizedName``: each of ``/ \\ : * ? " < > |`` becomes ``_``."""
    return _UNSAFE.sub("_", suffix)


def dump_file_name(kind: str, index: int, suffix: str, *, graph_id: int = 0, aclop: bool = False,
                   index_width: int = 8) -> str:
    """The file name GE gives a dump, for example ``ge_proto_00000003_graph_0_PreRunBegin.txt``.

    ``kind`` is ``"ge_proto"``, ``"onnx"`` or ``"readable"``. ge_onnx names of 255 characters or more are cut
    to 248 and get ``.pbtxt`` again. ``index_width=5`` gives the explicit-path API's names.

    Raises:
        ValueError: an unknown ``kind`` or a negative index.
    """
    if kind not in FORMATS:
        raise ValueError(f"unknown dump kind {kind!r}; expected one of {FORMATS}")
    if index < 0:
        raise ValueError(f"dump index {index} is negative")
    prefix = {"ge_proto": "ge_proto", "onnx": "ge_onnx", "readable": "ge_readable"}[kind]
    ext = "pbtxt" if kind == "onnx" else "txt"
    scene = "aclop_graph" if aclop else "graph"
    name = f"{prefix}_{index:0{index_width}d}_{scene}_{graph_id}_{sanitize_suffix(suffix)}.{ext}"
    if kind == "onnx" and len(name) >= _ONNX_NAME_LIMIT:
        name = name[:_ONNX_NAME_CUT] + ".pbtxt"
    return name


@dataclasses.dataclass(frozen=True)
class DumpName:
    """The parts of a dump file name (any GE version)."""

    kind: str  # "ge_proto", "onnx" or "readable"
    index: int
    index_digits: int
    graph_id: int | None  # None for the older names without "graph_<id>_"
    suffix: str
    aclop: bool


def parse_dump_name(name: str | os.PathLike[str]) -> DumpName | None:
    """Split a dump file name into its parts, or None when it is not a GE dump name.

    Accepts the current 8-digit names, the 5-digit names of the explicit-path API, and the older names without
    ``graph_<id>_`` (``ge_proto_00017_OptimizeOriginalGraph_FeGraphFusionAfter.txt``).
    """
    m = _NAME.match(Path(name).name)
    if not m:
        return None
    kind = "ge_proto" if m.group(1) == "proto" else m.group(1)
    return DumpName(kind=kind, index=int(m.group(2)), index_digits=len(m.group(2)),
                    graph_id=int(m.group(4)) if m.group(4) is not None else None, suffix=m.group(5),
                    aclop=m.group(3) is not None)
