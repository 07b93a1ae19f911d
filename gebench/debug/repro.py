"""Repro bundles: a folder that reproduces one candidate's verdict on the smallest graph around it.

:func:`repro_bundle` writes, for one ledger record of a run:

* ``subgraph_ge_proto.txt``: the candidate's matched nodes with their direct producers as graph inputs (a Data per
  producer output, or a copy of a Const producer), as a standalone graph whose NetOutput reads every output the
  rest of the graph read, in GE's ge_proto dump format (``DUMP_GE_GRAPH`` text);
* ``subgraph.onnx``: the same graph as ONNX (when an op has no ONNX form: ``subgraph.air`` instead, and the reason in
  the README);
* ``passes/<file>``: a copy of the pass file that defines the candidate's pass;
* ``fusion_switch.json``: GE's fusion switch turning every pass off but the candidate's;
* ``repro.sh``: the ``gebench compile`` command that reproduces the verdict (``GEBENCH`` overrides the command,
  e.g. ``GEBENCH="python -m gebench"``) writing ``report.json``;
* ``atc.sh``: the ``atc`` command line for a real Ascend machine, with ``ASCEND_GE_PY_PASS_PATH`` and
  ``DUMP_GE_GRAPH=1`` (``SOC_VERSION`` overrides the SoC);
* ``candidate.json``: the original record; ``README.md``: what the bundle is and how to use it.

The graph around the candidate is the graph the pass saw: the run is replayed up to the candidate
(:mod:`gebench.debug.replay`, one compile of the input). For a structural mismatch, whose record names only the
anchor, the nodes the matcher had bound and the node it failed at are taken too, so the subgraph fails the
pattern at the same place. Verdicts that depend on more than these nodes and their producers (a
``meet_requirements`` that reads nodes further away, a cycle through nodes outside the match) may not reproduce
on the subgraph; the README says which verdict to expect.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import logging
import os
import shlex
import shutil
from pathlib import Path
from typing import Any

from gebench import ir
from gebench.exec.equivalence import capture_rewrite
from gebench.fusion.ledger import CandidateStatus
from gebench.fusion.plugins.api import pass_api
from gebench.fusion.runtime import Run
from gebench.fusion.stages import STAGE_ORDER
from gebench.io.air import save_air
from gebench.io.ge_dump import dump_text
from gebench.io.onnx_export import OnnxExportError, save_onnx

from .replay import graph_after_rewrites_ir

__all__ = ["DEFAULT_SOC_VERSION", "ReproBundle", "ReproError", "repro_bundle", "subgraph_around", "subgraph_around_ir"]

_log = logging.getLogger(__name__)

#: The SoC written into ``atc.sh`` unless ``SOC_VERSION`` is set when it runs.
DEFAULT_SOC_VERSION = "Ascend910B1"


class ReproError(ValueError):
    """A repro bundle cannot be made for this record (no target nodes, no pass file, an unknown record)."""


@dataclasses.dataclass(frozen=True)
class ReproBundle:
    """What :func:`repro_bundle` wrote: the ``directory``, its ``files`` (relative paths), the ``gebench compile``
    ``command`` (argv, relative to the directory), the ``atc_command`` line, the ``expected`` verdict, and the
    candidate's ``pass_name``, ``pattern_name`` and ``target_node_names``."""

    directory: Path
    files: tuple[str, ...]
    command: tuple[str, ...]
    atc_command: str
    expected: str
    pass_name: str
    pattern_name: str
    target_node_names: tuple[str, ...]


def _resolve(run: Run, candidate: Any) -> tuple[int, Any]:
    records = run.ledger.records
    if isinstance(candidate, int) and not isinstance(candidate, bool):
        if not 0 <= candidate < len(records):
            raise ReproError(f"candidate index {candidate} is out of range: the ledger has {len(records)} records")
        return candidate, records[candidate]
    for i, r in enumerate(records):
        if r is candidate:
            return i, r
    for i, r in enumerate(records):  # an equal record (from a JSON round trip, say)
        if r == candidate:
            return i, r
    raise ReproError("the candidate is neither a ledger index nor a record of this run's ledger")


def subgraph_around(run: Run, candidate: Any) -> tuple[Any, Any]:
    """The standalone graph around ``candidate`` (a ledger index or record), as a ``ge.graph.Graph`` (``.ir``: its
    IR graph), and the record. One replay of the run up to the candidate.

    Raises:
        ReproError, ReplayError: as :func:`subgraph_around_ir`.
    """
    sub, record = subgraph_around_ir(run, candidate)
    return pass_api().wrap_graph(sub), record


def subgraph_around_ir(run: Run, candidate: Any) -> tuple[ir.Graph, Any]:
    """:func:`subgraph_around` with the ``ir.Graph`` itself (a new graph, the caller's alone).

    Raises:
        ReproError: the record names no node, or its nodes are not in the graph the replay reached.
        ReplayError: the run cannot be replayed up to the candidate (see :mod:`gebench.debug.replay`).
    """
    index, record = _resolve(run, candidate)
    where = f"record {index} ({record.status.value} of pass {record.pass_name!r}, pattern {record.pattern_name!r})"
    if not record.target_node_ids:
        raise ReproError(f"{where} names no node, so there is no subgraph around it")
    records = run.ledger.records
    before = sum(1 for r in records[:index] if r.status is CandidateStatus.REPLACED)
    root = graph_after_rewrites_ir(run, before)
    graph = next((g for g in root.all_graphs() if g.name == record.graph_name), None)
    if graph is None:
        raise ReproError(f"{where}: graph {record.graph_name!r} is not in the run's graph after {before} rewrites")
    ids = []
    for nid, name in zip(record.target_node_ids, record.target_node_names, strict=False):
        if not graph.has_node_id(nid):
            raise ReproError(f"{where}: node {name!r} (#{nid}) is not in graph {graph.name!r} after {before} "
                             "rewrites (was it removed by the rewrite that ended its pass?)")
        ids.append(nid)
    if record.status is CandidateStatus.STRUCTURAL_MISMATCH:
        ids.extend(_mismatch_nodes(graph, record.detail, ids))
    region = capture_rewrite(graph, ids)
    sub = region.graph
    sub.name = f"repro_{record.pass_name}"
    return sub, record


def _mismatch_nodes(graph: ir.Graph, detail: dict[str, Any], known: list[int]) -> list[int]:
    """Ids of the nodes a structural mismatch had bound (``detail["bindings"]``, by name) and of the node it failed
    at (``target_node_id``), not in ``known``: with them the subgraph fails the pattern at the same place. Names
    the graph does not have (nodes made by a replacement are named anew in a replay) are skipped."""
    out: list[int] = []
    seen = set(known)
    for name in (detail.get("bindings") or {}).values():
        node = graph.find(str(name))
        if node is not None and node.id not in seen:
            seen.add(node.id)
            out.append(node.id)
    target = detail.get("target_node_id")
    if isinstance(target, int) and graph.has_node_id(target) and target not in seen:
        out.append(target)
    return out


def _pass_file(run: Run, pass_name: str) -> Path:
    desc = next((d for d in run.passes if d.pass_name == pass_name), None)
    if desc is None:
        raise ReproError(f"pass {pass_name!r} is not one of the run's passes")
    try:
        source = inspect.getsourcefile(desc.cls)
    except TypeError:
        source = None
    if not source or not os.path.isfile(source):
        raise ReproError(f"pass {pass_name!r} (class {desc.class_name}) has no source file to copy")
    return Path(source)


def repro_bundle(run: Run, candidate: Any, directory: str | os.PathLike[str], *,
                 soc_version: str = DEFAULT_SOC_VERSION) -> ReproBundle:
    """Write the repro bundle of ``candidate`` (a ledger index or record of ``run``) into ``directory``.

    ``directory`` is created; files of an earlier bundle in it are overwritten. Cost: one replay of the run up to
    the candidate plus writing a graph of the candidate's size.

    Raises:
        ReproError: the record names no node or pass file, or its stage is not a pass stage.
        ReplayError: the run cannot be replayed up to the candidate.
        OSError: the directory cannot be written.
    """
    sub, record = subgraph_around_ir(run, candidate)
    if record.stage not in STAGE_ORDER:
        raise ReproError(f"record of pass {record.pass_name!r} has stage {record.stage!r}, not a pass stage")
    pass_file = _pass_file(run, record.pass_name)
    out = Path(directory)
    (out / "passes").mkdir(parents=True, exist_ok=True)
    files = []

    def write(rel: str, text: str) -> None:
        (out / rel).write_text(text, encoding="utf-8")
        files.append(rel)

    write("subgraph_ge_proto.txt", dump_text(sub, "ge_proto"))
    onnx_note = ""
    try:
        save_onnx(sub, out / "subgraph.onnx")
        files.append("subgraph.onnx")
    except OnnxExportError as exc:
        onnx_note = f"subgraph.onnx was not written: {exc}"
        _log.info("repro bundle for pass %s: %s", record.pass_name, onnx_note)
    pass_rel = f"passes/{pass_file.name}"
    shutil.copyfile(pass_file, out / pass_rel)
    files.append(pass_rel)
    switch = {"Switch": {"GraphFusion": {"ALL": "off", record.pass_name: "on"}}}
    write("fusion_switch.json", json.dumps(switch, indent=2) + "\n")
    write("candidate.json", json.dumps(record.to_dict(), indent=2) + "\n")
    command = ("gebench", "compile", "subgraph_ge_proto.txt", "--passes", pass_rel, "--stage", record.stage,
               "--fusion-switch-file", "fusion_switch.json", "--report", "report.json")
    gebench_line = '${GEBENCH:-gebench} ' + shlex.join(command[1:])
    write("repro.sh", "#!/usr/bin/env bash\n"
          f"# reproduces {record.status.value} of pass {record.pass_name}, pattern {record.pattern_name!r}, on "
          f"{', '.join(record.target_node_names)}\n"
          "set -euo pipefail\ncd \"$(dirname \"$0\")\"\n" + gebench_line + "\n")
    model, framework = "subgraph.onnx", 5
    if onnx_note:  # atc reads no GE dump: the AIR form (framework 1) instead
        save_air(sub, out / "subgraph.air")
        files.append("subgraph.air")
        model, framework = "subgraph.air", 1
    atc_line = (f"ASCEND_GE_PY_PASS_PATH=\"$PWD/{pass_rel}\" DUMP_GE_GRAPH=1 DUMP_GRAPH_LEVEL=1 "
                f"atc --model={model} --framework={framework} --output=out/repro "
                f"--soc_version=${{SOC_VERSION:-{soc_version}}} --fusion_switch_file=fusion_switch.json")
    write("atc.sh", "#!/usr/bin/env bash\n# on a machine with the CANN toolkit: the real compile, GE's dumps in "
          "the current directory\nset -euo pipefail\ncd \"$(dirname \"$0\")\"\n" + atc_line + "\n")
    for rel in ("repro.sh", "atc.sh"):
        (out / rel).chmod(0o755)
    options = run.replay_args.get("options") or {}
    write("README.md", _readme(record, gebench_line, atc_line, onnx_note, options))
    return ReproBundle(out, tuple(files), command, atc_line, record.status.value, record.pass_name,
                       record.pattern_name, tuple(record.target_node_names))


def _readme(record: Any, gebench_line: str, atc_line: str, onnx_note: str, options: dict[str, str]) -> str:
    lines = [
        f"# Repro: {record.pass_name} / {record.pattern_name or '(no pattern)'}",
        "",
        f"Expected verdict: **{record.status.value}** — {record.reason}",
        "",
        f"Nodes: {', '.join(record.target_node_names)} (graph {record.graph_name!r}, stage {record.stage}).",
        f"Pattern source: {record.pattern_source or '-'}; hook source: {record.hook_source or '-'}.",
        "",
        "`subgraph_ge_proto.txt` (GE dump) and `subgraph.onnx` hold these nodes with their direct producers as",
        "inputs (Data, or Const copies); `passes/` holds the pass file; `fusion_switch.json` turns every other pass",
        "off; `candidate.json` is the original ledger record.",
        "",
        "Reproduce with gebench (writes `report.json`; look for the record of the nodes above):",
        "",
        "```sh",
        "./repro.sh        # = " + gebench_line,
        "```",
        "",
        "On an Ascend machine (writes GE's dump files, `ge_proto_*_RunCustomPass*.txt`, in this folder):",
        "",
        "```sh",
        "./atc.sh          # = " + atc_line,
        "```",
    ]
    if onnx_note:
        lines += ["", onnx_note + "; atc.sh reads `subgraph.air` instead."]
    if options:
        lines += ["", "The original compile had options the commands above do not pass: "
                  + ", ".join(f"{k}={v}" for k, v in sorted(options.items())) + "."]
    return "\n".join(lines) + "\n"

