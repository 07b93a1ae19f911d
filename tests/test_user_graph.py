"""Every graph gebench hands a user answers GE's ``Graph`` API; ``.ir`` is the one way to gebench's IR graph."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import gebench
from gebench import ir
from gebench.ge.graph import Graph, Node
from gebench.viz import Workbench

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "assets" / "small_transformer.onnx"
PASSES = ROOT / "passes"


def _is_ge_graph(graph: object) -> None:
    """``graph`` is a ``ge.graph.Graph`` whose node lists are GE nodes matching its IR graph."""
    assert isinstance(graph, Graph)
    assert isinstance(graph.ir, ir.Graph)
    direct = graph.get_direct_nodes()
    assert direct and all(isinstance(n, Node) for n in direct)
    assert [n.name for n in direct] == [n.name for n in graph.ir.nodes()]
    assert all(isinstance(n, Node) for n in graph.get_all_nodes())


def test_load_returns_a_ge_graph_with_ges_methods() -> None:
    graph = gebench.load(MODEL)
    _is_ge_graph(graph)
    assert graph.name == graph.ir.name == "small_transformer"
    assert len(graph.get_all_nodes()) == len(graph.get_direct_nodes()) == len(graph.ir)

    add = graph.find_node_by_name("l0_fc1_add")
    assert isinstance(add, Node) and add.type == "Add"
    assert add.get_inputs_size() == 2 and add.get_outputs_size() == 1
    producer, port = add.get_in_data_nodes_and_port_indexes(0)
    assert (producer.name, producer.type, port) == ("l0_fc1_matmul", "BatchMatMulV2", 0)
    assert [(n.name, p) for n, p in producer.get_out_data_nodes_and_port_indexes(0)] == [("l0_fc1_add", 0)]
    with pytest.raises(RuntimeError, match="Failed to find Node name no_such_node"):
        graph.find_node_by_name("no_such_node")


def test_the_ir_is_reachable_as_ir_and_nowhere_else_needed() -> None:
    graph = gebench.load(MODEL)
    assert graph.ir is graph.ir  # the graph itself, not a copy per read
    assert graph.ir.node_by_name("l0_fc1_add").op_type == "Add"
    with pytest.raises(AttributeError):
        graph.ir = ir.Graph("other")  # type: ignore[misc]
    # a graph object given to load comes back as that graph: a GE graph as is, an IR graph as a view of itself
    assert gebench.load(graph) is graph
    view = gebench.load(graph.ir)
    assert isinstance(view, Graph) and view.ir is graph.ir
    # text and text files load the same way
    text = ir.to_text(graph.ir)
    assert ir.to_text(gebench.load(text).ir) == text


def test_a_consumed_graph_is_refused_by_load_and_ir() -> None:
    graph = gebench.load(MODEL)
    graph._invalidate()  # what create_pattern does to the graph it takes over
    with pytest.raises(ValueError, match="consumed"):
        gebench.load(graph)
    with pytest.raises(RuntimeError, match="no longer valid"):
        graph.ir  # noqa: B018 - reading it is the test


def test_compile_of_a_loaded_graph_leaves_it_unchanged() -> None:
    graph = gebench.load(MODEL)
    before = ir.to_text(graph.ir)
    run = gebench.compile(graph, passes=[PASSES])
    assert run.ok, run.failure_reason
    assert sum(s["replaced"] for s in run.summary().values()) > 0  # the run did change its graph
    assert ir.to_text(run.graph.ir) != before
    assert ir.to_text(graph.ir) == before  # ... on a copy: the loaded graph is the user's
    assert run.graph.ir is not graph.ir


def test_compile_without_copy_works_on_the_loaded_graph() -> None:
    graph = gebench.load(MODEL)
    run = gebench.compile(graph, passes=[PASSES], copy=False)
    assert run.ok, run.failure_reason
    assert run.graph.ir is graph.ir


def test_run_graph_and_snapshots_are_ge_graphs_over_the_runs_ir() -> None:
    run = gebench.compile(MODEL, passes=[PASSES])
    _is_ge_graph(run.graph)
    assert run.graph.ir is run.ir_graph
    snapshots = run.snapshots
    assert list(snapshots) == list(run.ir_snapshots) and len(snapshots) == len(run.ir_snapshots)
    last = list(snapshots)[-1]
    assert last in snapshots and "NoSuchDumpPoint" not in snapshots
    pending = run.ir_snapshots.pending()
    assert pending >= 2  # the dump points are journals, built when read
    first = snapshots[list(snapshots)[0]]  # reading one snapshot builds that one only
    assert run.ir_snapshots.pending() == pending - 1
    _is_ge_graph(first)
    assert first.ir is run.ir_snapshots[list(snapshots)[0]]


def test_workbench_graph_is_a_ge_graph_of_what_is_drawn() -> None:
    wb = Workbench(gebench.load(ROOT / "assets" / "add_zero.onnx"))
    graph = wb.graph
    _is_ge_graph(graph)
    assert graph.find_node_by_name("add_zero").type == "Add"
    assert graph.ir is wb._view_graph  # the drawn graph itself, never a copy


def test_the_readme_graph_snippet_runs_and_prints_what_it_says() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", readme.split("Every graph gebench hands you", 1)[1], re.S)
    assert block is not None
    code = "import gebench\n" + block.group(1)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    promised = re.findall(r"^print\(.*\)\s+# (\w+ \d+|\d+ \d+)", block.group(1), re.M)
    assert done.stdout.split("\n")[:2] == promised == ["Add 142", "142 138"]


def test_diff_graphs_takes_ge_graphs_as_well() -> None:
    from gebench.viz import diff_graphs

    model = gebench.load(MODEL)
    run = gebench.compile(model, passes=[PASSES])
    by_view, by_ir = diff_graphs(model, run.graph), diff_graphs(model.ir, run.graph.ir)
    assert by_view.removed and (by_view.removed, by_view.added) == (by_ir.removed, by_ir.added)


def test_exporters_and_the_executor_take_ge_graphs_as_well(tmp_path: Path) -> None:
    import numpy as np

    from gebench.io import ge_dump, onnx_export

    graph = gebench.load(ROOT / "assets" / "add_zero.onnx")
    by_view, by_ir = onnx_export.to_onnx(graph), onnx_export.to_onnx(graph.ir)
    assert by_view.SerializeToString() == by_ir.SerializeToString()
    (dump,) = ge_dump.write_dumps({"PreRunBegin": graph}, tmp_path, formats=["ge_proto"])
    assert ir.to_text(gebench.load(dump).ir) == ir.to_text(
        gebench.load(
            ge_dump.write_dumps({"PreRunBegin": graph.ir}, tmp_path / "ir", formats=["ge_proto"])[0]
        ).ir
    )
    shape = [tuple(n.get_output_desc(0).get_shape()) for n in graph.get_direct_nodes() if n.type == "Data"]
    feed = [np.full(s, 2.0, np.float32) for s in shape]
    assert all(
        np.array_equal(a, b) for a, b in zip(gebench.execute(graph, feed), gebench.execute(graph.ir, feed))
    )
