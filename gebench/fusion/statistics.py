"""GE's fusion statistics: the ``fusion_result.json`` file a compile leaves behind, made from a run's ledger.

What GE counts for custom Python passes, summed per pass name over one compiled graph (its root graph and
subgraphs, every pattern, every stage run):

* ``PatternFusionPass``: one *match* per match the matcher produced, counted before ``meet_requirements``, the
  fuse-cycle check and the replacement; one *effect* per replacement done. A candidate the matcher turned down
  (structural mismatch, output used outside the match) is no match.
* ``DecomposePass``: one match per node of its op types that reached ``meet_requirements``; one effect per node
  replaced (a node an earlier decomposition of the same pass removed is not visited).
* ``report_fuse`` and ``SubgraphRewriter.replace(..., context=...)``: one match and one effect each.
  ``SubgraphRewriter.replace`` without a context and ``FusionBasePass.run`` itself record nothing.
* A pass with no match at all, and a pass the fusion switch file turned off, do not appear.

The file (``fusion_result.json``) is one JSON object: per compiled graph the key
``session_and_graph_id_<session>_<graph>`` holding ``{"graph_fusion": {<pass>: {"effect_times": "<n>",
"match_times": "<n>"}}}``, the counts as decimal strings, written with 4-space indentation and sorted keys.
Built-in GE/FE passes (and ``ub_fusion``, buffer fusion) appear in GE's file too; gebench runs none of them.

The ledger records every match-level verdict of a run, so the statistics are computed from it
(:func:`pass_counts`); a run made with ``ledger=False`` has none.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from gebench._atomic import write_text_atomically

__all__ = [
    "FILE_NAME",
    "check_fusion_result",
    "FusionResultError",
    "GRAPH_FUSION",
    "UB_FUSION",
    "fusion_result",
    "fusion_result_path",
    "graph_key",
    "pass_counts",
    "read_fusion_result",
    "write_fusion_result",
]

_log = logging.getLogger(__name__)

#: The file's name, in the current folder or in ``$ASCEND_WORK_PATH/FE/<pid>/``.
FILE_NAME = "fusion_result.json"
#: Section of graph fusion passes (custom Python passes are counted here).
GRAPH_FUSION = "graph_fusion"
#: Section of buffer (UB) fusion passes of the backend; never written by gebench.
UB_FUSION = "ub_fusion"
_MATCH = "match_times"
_EFFECT = "effect_times"
_HIT = "repository_hit_times"

# verdicts reached only after the matcher produced a match (or a DecomposePass visited a node)
_MATCH_ONLY = frozenset({"REJECTED_BY_MEET_REQUIREMENTS", "WOULD_CREATE_CYCLE"})


class FusionResultError(ValueError):
    """A ``fusion_result.json`` that cannot be read: the message names the file and what is wrong."""


def graph_key(session_id: int = 0, graph_id: int = 0) -> str:
    """GE's top-level key of one compiled graph: ``session_and_graph_id_<session>_<graph>``."""
    return f"session_and_graph_id_{int(session_id)}_{int(graph_id)}"


def pass_counts(records: Iterable[Any]) -> dict[str, tuple[int, int]]:
    """``pass name -> (match_times, effect_times)`` of ledger ``records``, counted as GE does (module docstring).

    Passes without a match are left out. O(records).
    """
    counts: dict[str, list[int]] = {}
    for r in records:
        status = getattr(r.status, "value", r.status)
        detail = r.detail if isinstance(r.detail, dict) else {}
        via = detail.get("via")
        if status in _MATCH_ONLY:
            match, effect = 1, 0
        elif status == "REPLACED":
            if via == "SubgraphRewriter.replace" and not detail.get("with_context"):
                continue
            match, effect = 1, 1
        elif status == "REPLACEMENT_FAILED" and via is None:  # a pattern/decompose rewrite that failed the pass
            match, effect = 1, 0
        else:
            continue
        entry = counts.setdefault(r.pass_name, [0, 0])
        entry[0] += match
        entry[1] += effect
    return {name: (m, e) for name, (m, e) in counts.items()}


def fusion_result(source: Any, *, session_id: int = 0, graph_id: int = 0) -> dict[str, Any]:
    """The ``fusion_result.json`` object of one compile: ``source`` is a ``Run``, a ``Ledger`` or records.

    Returns ``{}`` when no pass recorded a match (GE then writes no file).
    """
    records = getattr(source, "ledger", source)
    counts = pass_counts(records)
    if not counts:
        return {}
    graph_fusion = {name: {_MATCH: str(m), _EFFECT: str(e)} for name, (m, e) in sorted(counts.items())}
    return {graph_key(session_id, graph_id): {GRAPH_FUSION: graph_fusion}}


def fusion_result_path(env: Mapping[str, str] | None = None, *, cwd: str | os.PathLike[str] | None = None,
                       pid: int | None = None) -> Path:
    """Where GE writes the file: ``$ASCEND_WORK_PATH/FE/<pid>/fusion_result.json`` when ``ASCEND_WORK_PATH`` is
    set and that folder can be made (it is made here), else ``fusion_result.json`` in the current folder."""
    env = os.environ if env is None else env
    base = Path(cwd) if cwd is not None else Path.cwd()
    work = env.get("ASCEND_WORK_PATH")
    if work:
        folder = Path(work) / "FE" / str(os.getpid() if pid is None else pid)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            return folder / FILE_NAME
        except OSError as exc:
            _log.warning("ASCEND_WORK_PATH: cannot create %s (%s); fusion_result.json goes to %s", folder, exc, base)
    return base / FILE_NAME


def write_fusion_result(result: Mapping[str, Any], path: str | os.PathLike[str], *,
                        empty_too: bool = False) -> Path | None:
    """Write ``result`` as GE does (4-space indentation, sorted keys); returns the path, or None when ``result``
    is empty (GE writes no file then; ``empty_too`` writes ``{}``). The file is replaced atomically.

    Raises:
        OSError: the file cannot be written.
    """
    if not result and not empty_too:
        return None
    target = Path(path)
    write_text_atomically(target, json.dumps(result, indent=4, sort_keys=True) + "\n")
    return target


def read_fusion_result(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and check a ``fusion_result.json`` (GE's or gebench's).

    Returns the object with every count as an int: ``{graph key: {"graph_fusion": {pass: {"match_times": int,
    "effect_times": int}}, "ub_fusion": {...}}}``.

    Raises:
        FusionResultError: the file is missing, not JSON, or not laid out as GE writes it (the message names the
            file and the first entry at fault).
    """
    where = os.fspath(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FusionResultError(f"{where}: no such file; give the fusion_result.json written by atc") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise FusionResultError(f"{where}: cannot be read ({exc})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise FusionResultError(f"{where}: not JSON ({exc}); is it the fusion_result.json written by atc?") from None
    return check_fusion_result(data, where)


def check_fusion_result(data: Any, where: str = "fusion result") -> dict[str, Any]:
    """``data`` (a parsed ``fusion_result.json``) with its counts as ints; see :func:`read_fusion_result`.

    Raises:
        FusionResultError: naming ``where`` and the entry at fault.
    """
    if not isinstance(data, dict):
        raise FusionResultError(f"{where}: the top level is a JSON {type(data).__name__}, not an object of "
                                "'session_and_graph_id_<session>_<graph>' keys")
    out: dict[str, Any] = {}
    for key, graph in data.items():
        if not isinstance(graph, dict):
            raise FusionResultError(f"{where}: {key!r} holds a {type(graph).__name__}, not an object with "
                                    f"'{GRAPH_FUSION}' / '{UB_FUSION}'")
        sections: dict[str, Any] = {}
        for section, passes in graph.items():
            if section not in (GRAPH_FUSION, UB_FUSION):
                _log.info("%s: %s: unknown section %r ignored", where, key, section)
                continue
            if not isinstance(passes, dict):
                raise FusionResultError(f"{where}: {key}.{section} is a {type(passes).__name__}, not an object")
            fields = (_MATCH, _EFFECT) if section == GRAPH_FUSION else (_MATCH, _HIT, _EFFECT)
            entries: dict[str, dict[str, int]] = {}
            for name, counts in passes.items():
                if not isinstance(counts, dict):
                    raise FusionResultError(f"{where}: {key}.{section}.{name} is not an object of counts")
                entry: dict[str, int] = {}
                for field in fields:
                    entry[field] = _count(counts.get(field, "0"), f"{where}: {key}.{section}.{name}.{field}")
                entries[name] = entry
            sections[section] = entries
        out[key] = sections
    return out


def _count(value: Any, what: str) -> int:
    """A count written as GE writes it (a decimal string; a plain int is accepted too)."""
    if isinstance(value, bool):
        raise FusionResultError(f"{what} is {value!r}, not a count")
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.strip().isdigit():
        number = int(value)
    else:
        raise FusionResultError(f"{what} is {value!r}, not a count (GE writes a decimal string such as \"3\")")
    if number < 0:
        raise FusionResultError(f"{what} is negative ({number})")
    return number
