"""The ledger data model: records, indexes, near-misses, summaries, JSON round trip, matcher recording."""

from __future__ import annotations

import json

import pytest

from gebench.fusion import Matcher, PatternGraph
from gebench.fusion.ledger import (
    NEAR_MISSES_KEPT,
    CandidateRecord,
    CandidateStatus,
    Ledger,
    LedgerRecorder,
    NearMiss,
)
from test_fusion_core_helpers import build, data, matmul_add_pattern, matmul_add_target


def _record(status, pass_name="P", ids=(1,), names=("n1",), **kw):
    return CandidateRecord(pass_name, "BeforeInferShape", "g", "P_pattern", status, "why",
                           list(ids), list(names), **kw)


def test_status_set_is_closed_and_named():
    assert {s.name for s in CandidateStatus} == {
        "REPLACED", "REJECTED_BY_MEET_REQUIREMENTS", "STRUCTURAL_MISMATCH", "BOUNDARY_VIOLATION",
        "WOULD_CREATE_CYCLE", "LOST_TO_OVERLAP", "REPLACEMENT_FAILED", "LINT"}
    with pytest.raises(ValueError):
        CandidateStatus("MAYBE")


def test_indexes_summary_and_for_node():
    ledger = Ledger()
    ledger.append(_record(CandidateStatus.REPLACED, ids=(1, 2), names=("mm", "add"), removed_node_ids=[1, 2],
                          added_node_ids=[9]))
    ledger.append(_record(CandidateStatus.REJECTED_BY_MEET_REQUIREMENTS, ids=(3,), names=("add2",),
                          meet_requirements_result=False))
    ledger.append(_record(CandidateStatus.STRUCTURAL_MISMATCH, ids=(4,), names=("add3",)))
    ledger.append(_record(CandidateStatus.STRUCTURAL_MISMATCH, pass_name="Q", ids=(2,), names=("add",)))
    ledger.append(_record(CandidateStatus.LINT, pass_name="Q", ids=(), names=()))
    assert len(ledger) == 5 and ledger.pass_names() == ["P", "Q"]
    assert [r.status for r in ledger.for_node(2)] == [CandidateStatus.REPLACED, CandidateStatus.STRUCTURAL_MISMATCH]
    assert [r.pass_name for r in ledger.for_node("add")] == ["P", "Q"]
    assert ledger.for_node(77) == [] and ledger.for_node("nope") == []
    assert len(ledger.by_pass("P")) == 3
    assert ledger.summary() == {
        "P": {"candidates": 3, "replaced": 1, "rejected": {"REJECTED_BY_MEET_REQUIREMENTS": 1,
                                                          "STRUCTURAL_MISMATCH": 1}, "lints": 0},
        "Q": {"candidates": 1, "replaced": 0, "rejected": {"STRUCTURAL_MISMATCH": 1}, "lints": 1},
    }


def test_json_round_trip():
    ledger = Ledger()
    ledger.append(_record(CandidateStatus.REPLACED, captures=[(1, "mm", 0)], detail={"k": (1, 2)},
                          max_abs_error=1e-7, hook_source="pass.py:12"))
    ledger.append(_record(CandidateStatus.REPLACEMENT_FAILED, exception="TypeError: x (pass.py:30)"))
    ledger.note_near_miss(NearMiss("P", "P_pattern", 5, "add", 2, "pmm", "op_type", "MatMul", "Relu", "r"))
    text = ledger.to_json()
    data_ = json.loads(text)
    assert data_["records"][0]["status"] == "REPLACED" and data_["records"][0]["captures"] == [[1, "mm", 0]]
    again = Ledger.from_json(text)
    assert again.to_json() == text
    assert again.records[0].status is CandidateStatus.REPLACED
    assert again.near_misses("P_pattern")[0].bound_count == 2
    with pytest.raises(ValueError):
        CandidateRecord.from_dict({**data_["records"][0], "bogus": 1})


def test_near_misses_keep_the_best_few_by_bound_count():
    ledger = Ledger()
    for i, bound in enumerate([1, 4, 2, 4, 3, 1, 5, 0, 2]):
        ledger.note_near_miss(NearMiss("P", "pat", i, f"n{i}", bound, "x", "op_type", "A", "B"))
    kept = ledger.near_misses("pat")
    assert len(kept) == NEAR_MISSES_KEPT
    assert [m.bound_count for m in kept] == [5, 4, 4, 3, 2]
    assert [m.anchor_node_id for m in kept[:3]] == [6, 1, 3]  # ties keep arrival order
    assert ledger.near_misses("other") == []


def test_recorder_writes_mismatches_violations_and_near_misses():
    g = matmul_add_target()
    g.add_edge(g.node_by_name("mm"), 0, g.add_node("Neg", name="leak", inputs=1, outputs=1), 0)
    g2 = build("t", [("x", "Data", [], 1, data(0)), ("y", "Data", [], 1, data(1)), ("add2", "Add", ["x", "y"], 1),
                     ("o", "NetOutput", ["add2"], 0)])
    ledger = Ledger()
    pattern = PatternGraph(matmul_add_pattern())
    for graph in (g, g2):
        rec = LedgerRecorder(ledger, pass_name="Fuse", stage="BeforeInferShape", graph_name=graph.name,
                             pattern_name=pattern.name, pattern_source="p.py:3")
        assert list(Matcher(pattern, graph, recorder=rec)) == []
    violation, mismatch = ledger.records
    assert violation.status is CandidateStatus.BOUNDARY_VIOLATION
    assert list(violation.target_node_names) == ["mm", "add"] and violation.detail["escaping_node"] == "mm"
    assert "'mm'" in violation.reason and "'leak'" in violation.reason
    assert mismatch.status is CandidateStatus.STRUCTURAL_MISMATCH and list(mismatch.target_node_names) == ["add2"]
    assert mismatch.detail["pattern_node"] == "pmm" and mismatch.pattern_source == "p.py:3"
    # the Add anchor was bound when its first input failed to be a MatMul
    assert mismatch.detail["bindings"] == {str(pattern.graph.node_by_name("padd").id): "add2"}
    (miss,) = ledger.near_misses(pattern.name)
    assert (miss.anchor_node_name, miss.pattern_node, miss.expected, miss.actual) == ("add2", "pmm", "MatMul", "Data")
    assert miss.bindings == mismatch.detail["bindings"]
    again = Ledger.from_json(ledger.to_json())
    assert again.near_misses(pattern.name)[0].bindings == miss.bindings


def test_deferred_records_are_built_in_order_on_the_first_read():
    ledger = Ledger()
    built = []

    def make(name):
        built.append(name)
        return _record(CandidateStatus.STRUCTURAL_MISMATCH, names=(name,))

    ledger.append(_record(CandidateStatus.REPLACED, names=("a",)))
    ledger.append_deferred(make, "b")
    ledger.append(_record(CandidateStatus.LINT, names=("c",)))
    ledger.append_deferred(make, "d")
    assert len(ledger) == 4 and built == []  # counting does not build them
    assert [r.target_node_names[0] for r in ledger] == ["a", "b", "c", "d"] and built == ["b", "d"]
    ledger.append_deferred(make, "e")
    assert [r.target_node_names[0] for r in ledger.for_node("e")] == ["e"]  # the indexes see it too
    assert ledger.summary()["P"]["rejected"] == {"STRUCTURAL_MISMATCH": 3}
    assert built == ["b", "d", "e"]  # each built once
    assert [r["target_node_names"] for r in ledger.to_dict()["records"]] == [["a"], ["b"], ["c"], ["d"], ["e"]]


def test_public_names_exist():
    import gebench.fusion as fusion
    from gebench.fusion import ledger as ledger_module

    for module in (fusion, ledger_module):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert missing == [], f"{module.__name__}.__all__ names missing attributes: {missing}"
    assert {"PatternGraph", "Capture", "Matcher", "Match", "Boundary", "BoundaryInput", "rewrite", "RewriteResult",
            "RewriteError", "would_create_cycle", "decompose_boundary", "ledger"} <= set(fusion.__all__)
