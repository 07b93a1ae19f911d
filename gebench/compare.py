"""Check gebench's prediction against a real Ascend machine: GE's ``fusion_result.json`` (and a GE dump) vs a run.

``compare_fusion_result(real, model, passes)`` compiles ``model`` with ``passes`` (or takes a finished ``Run``),
lines up, per pass, the match and effect counts GE wrote on the machine with the counts gebench predicts (see
:mod:`gebench.fusion.statistics` for what is counted), and marks every difference. Passes the file names that are
not among the passes given (GE's and FE's built-in passes, buffer fusion) are listed but not compared.

With ``dump=`` (a ``ge_proto`` dump written on the machine after the custom passes, for example
``ge_proto_00000001_graph_0_RunCustomPassBeforeInfershape.txt``) it also compares the *sites*: every node a
``PatternFusionPass`` or ``DecomposePass`` made carries ``pass_name`` (the last entry is the pass that made it)
and ``_datadump_original_op_names`` (what it was made from), so the set of (pass, original nodes) pairs of the
dump is compared with the same set of gebench's graph at the same dump point. For a site only the machine fused,
gebench's ledger verdict on those nodes is shown (why gebench did not fuse them).

``gebench compare --fusion-result REAL.json MODEL --passes P [--dump REAL_DUMP]`` is the command-line form; it
exits 0 when nothing differs, 1 when something does, 2 for a bad input.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .fusion.statistics import GRAPH_FUSION, UB_FUSION, FusionResultError, check_fusion_result, pass_counts
from .fusion.statistics import read_fusion_result as _read_fusion_result

__all__ = ["CompareInputError", "FusionComparison", "PassRow", "SiteDiff", "compare_fusion_result"]

_log = logging.getLogger(__name__)


class CompareInputError(ValueError):
    """An input of a comparison cannot be used (the message names the file or argument and what to do)."""


@dataclasses.dataclass(frozen=True)
class PassRow:
    """One pass: GE's counts on the machine and gebench's prediction (0 where a side has no entry)."""

    pass_name: str
    real_match: int
    real_effect: int
    predicted_match: int
    predicted_effect: int
    note: str = ""

    @property
    def differs(self) -> bool:
        return (self.real_match, self.real_effect) != (self.predicted_match, self.predicted_effect)

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "differs": self.differs}


@dataclasses.dataclass(frozen=True)
class SiteDiff:
    """A fusion site found on one side only: ``side`` is ``"machine"`` (only the real dump has it) or
    ``"gebench"``; ``origin`` the original op names it was made from; ``nodes`` the nodes carrying it;
    ``verdict`` gebench's ledger verdict on those nodes for that pass (machine-only sites), else ``""``."""

    pass_name: str
    side: str
    origin: tuple[str, ...]
    nodes: tuple[str, ...]
    verdict: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "origin": list(self.origin), "nodes": list(self.nodes)}


@dataclasses.dataclass
class FusionComparison:
    """The outcome of :func:`compare_fusion_result`.

    Attributes:
        real_path: the ``fusion_result.json`` compared ("" for a dict).
        graph_key: its ``session_and_graph_id_*`` key used (None when the file holds no graph).
        rows: the passes given, by name.
        other_passes: passes in the file that were not given (built-in GE/FE passes), not compared.
        ub_fusion_passes: how many buffer-fusion entries the file has (never predicted by gebench).
        sites: site differences (with ``dump``); ``dump_path`` / ``dump_stage`` say what was compared.
        notes: remarks that qualify the result (a failed gebench compile, a dump without marks, ...).
    """

    real_path: str
    graph_key: str | None
    rows: list[PassRow]
    other_passes: list[str]
    ub_fusion_passes: int
    sites: list[SiteDiff] = dataclasses.field(default_factory=list)
    dump_path: str = ""
    dump_stage: str = ""
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def differing(self) -> list[PassRow]:
        """The rows whose counts differ."""
        return [r for r in self.rows if r.differs]

    @property
    def equal(self) -> bool:
        """True when no count and no site differs."""
        return not self.differing and not self.sites

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict."""
        return {"equal": self.equal, "real_path": self.real_path, "graph_key": self.graph_key,
                "rows": [r.to_dict() for r in self.rows], "other_passes": list(self.other_passes),
                "ub_fusion_passes": self.ub_fusion_passes, "sites": [s.to_dict() for s in self.sites],
                "dump_path": self.dump_path, "dump_stage": self.dump_stage, "notes": list(self.notes)}

    def text(self) -> str:
        """The comparison as a table; ``!`` marks every difference."""
        source = self.real_path or "the given fusion result"
        key = f" ({self.graph_key})" if self.graph_key else " (no graph in it)"
        lines = [f"GE's fusion_result {source}{key} vs gebench's prediction"]
        width = max([len("pass"), *(len(r.pass_name) for r in self.rows)])
        lines.append(f"  {'pass':<{width}}  {'match GE/gebench':>16}  {'effect GE/gebench':>17}")
        for r in self.rows:
            mark = "!" if r.differs else " "
            match = f"{r.real_match}/{r.predicted_match}"
            effect = f"{r.real_effect}/{r.predicted_effect}"
            tail = []
            if r.real_match != r.predicted_match:
                tail.append(f"match_times GE {r.real_match}, gebench {r.predicted_match}")
            if r.real_effect != r.predicted_effect:
                tail.append(f"effect_times GE {r.real_effect}, gebench {r.predicted_effect}")
            if r.note:
                tail.append(r.note)
            lines.append(f"{mark} {r.pass_name:<{width}}  {match:>16}  {effect:>17}"
                         + (f"  {'; '.join(tail)}" if tail else ""))
        if not self.rows:
            lines.append("  (no pass was given)")
        if self.other_passes:
            shown = ", ".join(self.other_passes[:8]) + (", ..." if len(self.other_passes) > 8 else "")
            lines.append(f"  not compared: {len(self.other_passes)} other graph_fusion pass(es) in the file, not "
                         f"among the passes given (GE/FE built-in passes?): {shown}")
        if self.ub_fusion_passes:
            lines.append(f"  not compared: {self.ub_fusion_passes} ub_fusion (buffer fusion) pass(es)")
        if self.dump_path:
            lines.append(f"sites: {self.dump_path} vs gebench's {self.dump_stage or 'final graph'}")
            for s in self.sites:
                where = "fused on the machine, not by gebench" if s.side == "machine" else \
                    "fused by gebench, not on the machine"
                verdict = f" (gebench: {s.verdict})" if s.verdict else ""
                lines.append(f"! {s.pass_name}: {where}: from {', '.join(s.origin)} "
                             f"[{', '.join(s.nodes)}]{verdict}")
            if not self.sites:
                lines.append("  every site agrees")
        for note in self.notes:
            lines.append(f"note: {note}")
        if self.equal:
            lines.append("no difference")
        else:
            parts = []
            if self.differing:
                parts.append(f"{len(self.differing)} pass(es) differ: {', '.join(r.pass_name for r in self.differing)}")
            if self.sites:
                parts.append(f"{len(self.sites)} site(s) differ")
            lines.append("DIFFERENT: " + "; ".join(parts))
        return "\n".join(lines)


def compare_fusion_result(real: str | os.PathLike[str] | Mapping[str, Any], model: Any, passes: Any = None, *,
                          dump: str | os.PathLike[str] | None = None, fusion_switch: Any = None,
                          graph_key: str | None = None, custom_ops: Any = None) -> FusionComparison:
    """Compare a real machine's ``fusion_result.json`` (and optionally a dump) with gebench's prediction.

    Args:
        real: the path of GE's ``fusion_result.json``, or its parsed object.
        model: the model compiled on the machine (anything ``gebench.load`` reads), or a finished
            :class:`~gebench.fusion.runtime.Run` (then ``passes``, ``fusion_switch`` and ``custom_ops`` are not used).
        passes: the custom passes used on the machine (as ``gebench.compile`` takes them; default
            ``ASCEND_GE_PY_PASS_PATH``).
        dump: a GE dump file written on the machine after the custom passes: also compare the fusion sites.
        fusion_switch: the fusion switch file used on the machine (``--fusion_switch_file``), if any.
        graph_key: the ``session_and_graph_id_*`` key to compare when the file holds several graphs.
        custom_ops: custom-op JSON file(s), as ``gebench.compile`` takes them.

    Raises:
        CompareInputError: a file cannot be read (a bad ``fusion_result.json``, a pass file that does not load,
            a model or dump gebench cannot read); the message names the file.
    """
    real_path = "" if isinstance(real, Mapping) else os.fspath(real)
    try:
        data = check_fusion_result(dict(real), "fusion result") if isinstance(real, Mapping) \
            else _read_fusion_result(real)
    except FusionResultError as exc:
        raise CompareInputError(str(exc)) from None
    run = _run_of(model, passes, fusion_switch, custom_ops)
    given = [d.pass_name for d in run.passes]
    key, graph = _pick_graph(data, graph_key, given, real_path or "fusion result")
    real_passes: dict[str, dict[str, int]] = graph.get(GRAPH_FUSION, {})
    predicted = pass_counts(run.ledger)
    rows = []
    off = _switched_off(fusion_switch, given) if fusion_switch is not None else set()
    for name in sorted(set(given)):
        r = real_passes.get(name, {})
        m, e = predicted.get(name, (0, 0))
        note = "switched off by the fusion switch file" if name in off else ""
        rows.append(PassRow(name, r.get("match_times", 0), r.get("effect_times", 0), m, e, note))
    other = sorted(n for n in real_passes if n not in set(given))
    result = FusionComparison(real_path, key, rows, other, len(graph.get(UB_FUSION, {})))
    if run.status != "SUCCESS":
        result.notes.append(f"gebench's compile FAILED"
                            f"{' at pass ' + run.failed_pass if run.failed_pass else ''}: {run.failure_reason}")
    if not given:
        result.notes.append("no pass was given (--passes) or found in ASCEND_GE_PY_PASS_PATH: nothing to predict")
    if dump is not None:
        _compare_sites(result, run, dump, given)
    return result


def _run_of(model: Any, passes: Any, fusion_switch: Any, custom_ops: Any) -> Any:
    from .fusion.runtime import Run

    if isinstance(model, Run):
        return model
    from . import api

    try:
        run = api.compile(model, passes=passes, fusion_switch=fusion_switch, custom_ops=custom_ops)
    except (OSError, ValueError, TypeError) as exc:
        raise CompareInputError(f"cannot read the model {model}: {exc}") from None
    if run.load_errors:
        first = run.load_errors[0]
        raise CompareInputError(f"pass file {getattr(first, 'path', '') or first} failed to load "
                                f"({len(run.load_errors)} error(s); GE would not compile): {first}")
    return run


def _switched_off(fusion_switch: Any, names: list[str]) -> set[str]:
    from .fusion.runtime import disabled_by_fusion_switch

    try:
        return disabled_by_fusion_switch(fusion_switch, names)
    except ValueError as exc:
        raise CompareInputError(str(exc)) from None


def _pick_graph(data: dict[str, Any], graph_key: str | None, given: list[str],
                where: str) -> tuple[str | None, dict[str, Any]]:
    """The graph entry of ``data`` to compare: ``graph_key``, else the only one, else the only one naming a
    given pass."""
    if graph_key is not None:
        if graph_key not in data:
            raise CompareInputError(f"{where}: no graph {graph_key!r}; it has {', '.join(sorted(data)) or 'none'}")
        return graph_key, data[graph_key]
    if not data:
        return None, {}
    if len(data) == 1:
        key = next(iter(data))
        return key, data[key]
    names = set(given)
    candidates = [k for k, g in data.items() if names & set(g.get(GRAPH_FUSION, {}))]
    if len(candidates) == 1:
        return candidates[0], data[candidates[0]]
    raise CompareInputError(f"{where}: holds {len(data)} graphs ({', '.join(sorted(data))}) and "
                            f"{'several' if candidates else 'none'} of them name a pass given; choose one with "
                            "--graph-key")


def _sites(graphs: Iterable[Any]) -> dict[tuple[str, tuple[str, ...]], list[str]]:
    """``(pass that made it, sorted original op names) -> node names`` over the nodes carrying ``pass_name``."""
    from .fusion._rewriter import ORIGIN_NAMES_ATTR, PASS_NAME_ATTR

    sites: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for g in graphs:
        for n in g.nodes():
            marks = n.attrs.get(PASS_NAME_ATTR)
            if not isinstance(marks, list) or not marks:
                continue
            origin = n.attrs.get(ORIGIN_NAMES_ATTR)
            names = tuple(sorted(str(o) for o in origin)) if isinstance(origin, list) and origin else (n.name,)
            sites.setdefault((str(marks[-1]), names), []).append(n.name)
    return sites


def _compare_sites(result: FusionComparison, run: Any, dump: str | os.PathLike[str], given: list[str]) -> None:
    from . import api
    from .io import parse_dump_name

    path = Path(dump)
    result.dump_path = os.fspath(dump)
    try:
        real_graph = api._load_ir(path)
    except FileNotFoundError:
        raise CompareInputError(f"--dump {path}: no such file; give a GE dump written on the machine") from None
    except (OSError, ValueError, TypeError) as exc:
        raise CompareInputError(f"--dump {path}: cannot be read as a GE dump: {exc}") from None
    parsed = parse_dump_name(path)
    stage = parsed.suffix if parsed is not None else ""
    snapshots = run.ir_snapshots
    if stage and stage in snapshots:
        ours = snapshots[stage]
        result.dump_stage = stage
    else:
        ours = run.ir_graph
        result.dump_stage = "final graph"
        if stage:
            result.notes.append(f"the dump's stage {stage!r} is not one of gebench's dump points; compared with "
                                "gebench's final graph")
    real_sites = _sites(real_graph.all_graphs())
    our_sites = _sites(ours.all_graphs())
    if not real_sites:
        result.notes.append(f"{path.name} has no node with a pass_name mark: give a dump written after the custom "
                            "passes (ge_proto_*_RunCustomPass*.txt)")
    ledger = run.ledger
    for key in sorted(set(real_sites) | set(our_sites)):
        if key in real_sites and key in our_sites:
            continue
        pass_name, origin = key
        if key in real_sites:
            result.sites.append(SiteDiff(pass_name, "machine", origin, tuple(real_sites[key]),
                                         _verdict(ledger, pass_name, origin, given)))
        else:
            result.sites.append(SiteDiff(pass_name, "gebench", origin, tuple(our_sites[key])))


def _verdict(ledger: Any, pass_name: str, origin: tuple[str, ...], given: list[str]) -> str:
    """gebench's last ledger verdict of ``pass_name`` on a node named in ``origin`` ("" when there is none)."""
    if pass_name not in given:
        return "not among the passes given"
    found = None
    for name in origin:
        for record in ledger.for_node(name):
            if record.pass_name == pass_name and getattr(record.status, "value", "") != "LINT":
                found = record
    if found is None:
        return "no candidate at these nodes"
    return f"{getattr(found.status, 'value', found.status)}: {found.reason}"
