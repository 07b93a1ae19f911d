"""The workbench's request protocol, candidate table, search and navigation, through the kernel side.

The browser side of the same behaviour is tested in ``tests/test_browser_workbench.py``.
"""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import pytest

import gebench
from gebench import ir
from gebench.viz import Workbench
from gebench.viz._source import STATUS_CLASS, STATUS_PRECEDENCE, candidate_rows
from gebench.viz._synthetic import transformer_like
from gebench.viz._table import CandidateTable, TableQuery
from test_viz_workbench import StandInRun, _run


class Sent(list):
    """Records the custom messages the widget sends to the front end."""


@pytest.fixture
def wb() -> Workbench:
    w = Workbench(_run())
    w.sent = Sent()  # type: ignore[attr-defined]
    w.send = lambda content, buffers=None: w.sent.append(content)  # type: ignore[method-assign]
    return w


def _msg(wb: Workbench, **content: Any) -> None:
    wb._on_message(wb, content, [])


# ------------------------------------------------------------------------------------------ sequence numbers
def test_every_answer_carries_the_request_seq_even_when_the_handler_fails(wb):
    _msg(wb, action="select_pass", name="AddZero", seq=3)
    assert wb.seq == 3 and wb.selected_pass == "AddZero"
    _msg(wb, action="select_candidate", index=99, seq=4)  # no such candidate: the status says so
    assert wb.seq == 4 and "IndexError" in wb.status_text
    _msg(wb, action="select_pass", name="FuseMatMulAdd", seq=2)  # an older request never lowers seq
    assert wb.seq == 4


# ------------------------------------------------------------------------------------------ stale state
def test_another_pass_clears_the_previous_candidates_details_and_pattern(wb):
    wb.select_candidate(1)
    assert "candidate #1" in wb.details_html
    wb.select_pass("FuseMatMulAdd")
    assert wb.selected_candidate == -1 and "candidate #" not in wb.details_html
    assert wb.side_kind != "pattern" and wb.side_svg_gz == b""


def test_a_new_run_clears_selection_and_details(wb):
    wb.select_candidate(1)
    wb.selected_node = 5
    wb._set_run(_run())  # what Run/reload does with the new run
    assert wb.selected_candidate == -1 and wb.selected_node == -1
    assert wb.details_html == "" and wb.selected_pass == "AddZero"
    assert wb.table["pass"] == "AddZero" and wb.table["selected_pos"] == -1


def test_no_diff_after_an_overlay_redraws_the_plain_snapshot(wb):
    plain = wb.view_info["drawn"]
    wb.select_pass("FuseMatMulAdd")
    wb.show_diff("pass", "overlay")
    assert wb.view_info["drawn"] > plain and wb.diff_info["layout"] == "overlay"
    wb.diff_mode = ""
    assert wb.view_info == {**wb.view_info, "snapshot": "PreRunBegin", "drawn": plain}
    assert not any("gb_diff" in v for v in wb.highlight.values())
    assert wb.diff_info == {} and wb.pane_title == "" and "diff" not in wb.status_text


def test_the_header_never_keeps_a_diff_the_dropdown_does_not_show(wb):
    wb.select_pass("FuseMatMulAdd")
    wb.diff_mode = "pass:side"
    assert "removed" in wb.diff_info["text"] and wb.status_text == wb.diff_info["text"]
    assert wb.pane_title == "before: PreRunBegin" and wb.side_title.startswith("after:") and wb.side_kind == "diff"
    wb.diff_mode = ""
    assert wb.diff_info == {} and wb.status_text == "" and wb.side_svg_gz == b"" and wb.side_kind == ""


def test_a_rewrite_diff_without_a_candidate_says_so_and_draws_no_diff(wb):
    wb.select_pass("FuseMatMulAdd")
    wb.diff_mode = "pass:overlay"
    wb.diff_mode = "candidate:overlay"
    assert wb.diff_info == {"mode": "candidate:overlay", "error": "select a candidate first (a rewrite diff needs one)"}
    assert not any("gb_diff" in v for v in wb.highlight.values()) and wb.view_info["snapshot"] == "PreRunBegin"


def test_stage_diff_follows_the_selected_pass():
    g = ir.parse_text("graph g\n  #0 x = Data() {index=0} -> (DT_FLOAT[2])\n  #1 r = Relu(x:0) -> (DT_FLOAT[2])\n"
                      "  #2 out = NetOutput(r:0)\n")
    snaps = {"PreRunBegin": g, "RunCustomPassBeforeInfershape": g.copy(), "RunCustomPass_AfterInferShape": g.copy()}
    rows = [{"pass_name": "Early", "stage": "BeforeInferShape", "status": "STRUCTURAL_MISMATCH",
             "target_node_ids": [1], "target_node_names": ["r"]},
            {"pass_name": "Late", "stage": "AfterInferShape", "status": "STRUCTURAL_MISMATCH",
             "target_node_ids": [1], "target_node_names": ["r"]}]
    wb = Workbench(StandInRun(snaps, g, rows))
    wb.select_pass("Late")
    wb.diff_mode = "stage:side"
    assert (wb.diff_info["before"], wb.diff_info["after"]) == ("RunCustomPassBeforeInfershape",
                                                               "RunCustomPass_AfterInferShape")
    wb.select_pass("Early")
    assert (wb.diff_info["before"], wb.diff_info["after"]) == ("PreRunBegin", "RunCustomPassBeforeInfershape")


def test_a_side_by_side_diff_keeps_its_after_pane_when_a_candidate_is_picked(wb):
    wb.select_pass("FuseMatMulAdd")
    wb.diff_mode = "pass:side"
    after = wb.side_svg_gz
    wb.select_candidate(0)
    assert wb.side_kind == "diff" and wb.side_svg_gz == after and "candidate #0" in wb.details_html


# ------------------------------------------------------------------------------------------ the table
def test_table_is_sent_as_a_first_page_of_columns_then_pages_on_request(wb):
    wb.select_pass("AddZero")
    t = wb.table
    assert (t["pass"], t["total"], t["all"]) == ("AddZero", 3, 3)
    assert t["counts"] == {"REJECTED_BY_MEET_REQUIREMENTS": 1, "STRUCTURAL_MISMATCH": 1, "REPLACEMENT_FAILED": 1}
    assert t["page"]["i"] == [1, 2, 3] and t["page"]["status"][2] == "REPLACEMENT_FAILED"
    _msg(wb, action="rows", version=t["version"], offset=1, limit=5)
    assert wb.sent[-1]["reply"] == "rows" and wb.sent[-1]["i"] == [2, 3] and wb.sent[-1]["offset"] == 1
    n = len(wb.sent)
    _msg(wb, action="rows", version=t["version"] - 1, offset=0, limit=5)  # a page of an older table
    assert len(wb.sent) == n
    # each row carries its target node ids: a row click marks them on the drawing before the kernel answers
    assert t["page"]["ids"] == [wb.rows[i].target_ids for i in t["page"]["i"]]


def test_a_pass_switch_counts_its_rewrites_from_the_table_columns(wb):
    wb.select_pass("FuseMatMulAdd")
    assert wb.rewrite_step["n"] == len(wb.pass_rewrites("FuseMatMulAdd")) == sum(
        1 for r in wb.rows if r.pass_name == "FuseMatMulAdd" and r.status == "REPLACED")
    assert [r.index for r in wb.pass_rewrites("FuseMatMulAdd")] == sorted(r.index for r in wb.pass_rewrites("FuseMatMulAdd"))


def test_table_filter_and_sort(wb):
    wb.select_pass("AddZero")
    _msg(wb, action="table", statuses=["STRUCTURAL_MISMATCH", "REPLACEMENT_FAILED"], sort="i", desc=True, seq=1)
    assert wb.table["page"]["i"] == [3, 2] and wb.table["total"] == 2 and wb.table["all"] == 3
    wb.set_table_query(sort="status")  # precedence order: failed before rejected before near-miss
    assert wb.table["page"]["status"] == ["REPLACEMENT_FAILED", "REJECTED_BY_MEET_REQUIREMENTS", "STRUCTURAL_MISMATCH"]
    with pytest.raises(ValueError, match="unknown sort key"):
        wb.set_table_query(sort="colour")


def test_pass_colouring_matches_the_precedence_rule_on_random_ledgers():
    rnd = random.Random(7)
    statuses = list(STATUS_CLASS)
    for _ in range(20):
        recs = [{"pass_name": rnd.choice("PQ"), "status": rnd.choice(statuses),
                 "target_node_ids": rnd.sample(range(30), rnd.randint(0, 4))} for _ in range(rnd.randint(0, 60))]
        rows = candidate_rows(recs)
        table = CandidateTable(rows)
        rank = {s: k for k, s in enumerate(STATUS_PRECEDENCE)}
        for p in "PQ":
            best: dict[int, str] = {}
            for r in rows:
                if r.pass_name != p:
                    continue
                for nid in r.target_ids:
                    if nid not in best or rank[r.status] < rank[best[nid]]:
                        best[nid] = r.status
            assert table.pass_status(p) == {n: "gb_st_" + STATUS_CLASS[s] for n, s in best.items()}
            order = table.order(p, TableQuery(sort="status"))
            assert [rank[rows[i].status] for i in order] == sorted(rank[r.status] for r in rows if r.pass_name == p)


def test_rows_read_from_ledger_records_equal_rows_read_from_their_dicts():
    # candidate_rows reads CandidateRecords by attribute and anything else by key: both give the same rows
    root = Path(__file__).resolve().parents[1]
    run = gebench.compile(root / "assets" / "small_transformer.onnx", passes=[root / "passes"])
    records = list(run.ledger.records)
    assert {r.status.name for r in records} >= {"REPLACED", "STRUCTURAL_MISMATCH", "REJECTED_BY_MEET_REQUIREMENTS"}
    assert any(r.captures for r in records)
    fast = candidate_rows(records)
    generic = candidate_rows([r.to_dict() for r in records])
    assert len(fast) == len(generic) == len(records)
    for a, b, rec in zip(fast, generic, records, strict=True):
        assert a.record is rec
        for f in dataclasses.fields(a):
            if f.name not in ("record", "detail"):  # to_dict() makes the detail JSON-ready (tuples as lists)
                assert getattr(a, f.name) == getattr(b, f.name), (f.name, rec)
        assert a.detail == rec.detail and a.detail is not rec.detail
        assert a.target_ids == list(rec.target_node_ids) and a.target_ids is not rec.target_node_ids


def test_keyboard_steps_follow_the_table_order_and_back_returns(wb):
    wb.select_pass("AddZero")
    wb.set_table_query(sort="i", desc=True)
    assert wb.step_candidate(1) == 3 and wb.step_candidate(1) == 2
    assert wb.table_sel == {"version": wb.table["version"], "index": 2, "pos": 1}
    assert wb.step_candidate(-1) == 3
    assert wb.next_rewrite() == 0 and wb.selected_pass == "FuseMatMulAdd"  # the only rewrite, another pass
    assert wb.back() and wb.selected_candidate == 3 and wb.selected_pass == "AddZero"
    assert wb.back() and wb.selected_candidate == 2


def test_select_deep_links_from_python(wb):
    wb.select(candidate=2)
    assert wb.selected_pass == "AddZero" and "candidate #2" in wb.details_html
    wb.select(node="w")
    assert wb.selected_node == 1 and "<code>w</code>" in wb.details_html
    wb.select(pass_name="FuseMatMulAdd")
    assert wb.selected_pass == "FuseMatMulAdd"
    with pytest.raises(ValueError, match="exactly one"):
        wb.select(node=1, candidate=2)


# ------------------------------------------------------------------------------------------ search
def test_search_is_a_regex_over_names_types_and_attrs_and_walks_its_hits(wb):
    hits = wb.find("^add")
    assert [n.name for n in hits] == ["add", "add2"] and wb.selected_node == 4
    assert [h["where"] for h in wb.search_hits["hits"]] == ["name", "name"]
    assert wb.search_step() == 7 and wb.search_hits["pos"] == 1
    assert wb.search_step() == 4  # wraps around
    hits = wb.find("index=0")
    assert [n.name for n in hits] == ["x"] and wb.search_hits["hits"][0]["where"] == "attr index=0"
    assert [n.name for n in wb.find("relu")] == ["r"] and wb.search_hits["hits"][0]["where"] == "type"
    assert wb.find("mm(") == [] and wb.search_hits["total"] == 0  # not a valid expression: taken literally
    assert [n.name for n in wb.find("tensor[3")] == ["w"]  # literally too
    assert wb.find("") == [] and wb.search_hits == {}
    with pytest.raises(LookupError):
        wb.search_step()


def test_search_from_the_front_end_on_enter(wb):
    _msg(wb, action="find", query="mat.*", seq=5)
    assert wb.seq == 5 and [h["name"] for h in wb.search_hits["hits"]] == ["mm"]
    _msg(wb, action="search_step", delta=0, absolute=True, seq=6)
    assert wb.selected_node == 2


def test_focused_views_expand_outward_from_a_cut_node():
    g = transformer_like(3000)
    wb = Workbench(g, threshold=1500, hops=1, max_focus_nodes=40)
    wb.select_node("blk300/relu")
    view = wb.view
    cut = next(n for n in view.nodes if n.hidden_neighbours)
    before = set(view.node_ids)
    wb._on_message(wb, {"action": "expand", "node": cut.id, "seq": 1}, [])
    assert before < set(wb.view.node_ids) and wb.view_info["focused"]
    assert {n.id for n in g.predecessors(g.node(cut.id))} | {n.id for n in g.successors(g.node(cut.id))} \
        <= set(wb.view.node_ids)
    assert "expanded" in wb.status_text


def test_the_status_line_describes_the_drawing_a_level_then_a_candidates_focused_view():
    g = transformer_like(3000)
    ops = [n for n in g.nodes() if n.op_type == "Relu"]
    ledger = [{"pass_name": "P", "stage": "BeforeInferShape", "status": "REPLACED", "pattern_name": "p",
               "target_node_ids": [n.id], "target_node_names": [n.name]} for n in ops]
    wb = Workbench(StandInRun({"PreRunBegin": g}, g, ledger), threshold=1500, hops=1, max_focus_nodes=40)
    assert wb.view.level == 0 and wb.status_text.startswith("model: ")
    group = next(iter(wb.view.groups))
    wb.open_group(group)
    level_text = wb.status_text
    assert "nodes of its own" in level_text
    far = next(r.index for r in wb.rows if r.target_ids[0] not in wb.view.node_ids)
    _msg(wb, action="select_candidate", index=far, seq=1)
    assert wb.view_info["focused"] and wb.view.level is None
    assert wb.status_text.startswith(f"focused view around candidate #{far}: "), wb.status_text
    _msg(wb, action="overview", seq=2)  # back to the root level: the status line follows again
    assert wb.status_text.startswith("model: ")


def test_full_names_of_shortened_labels(wb):
    _msg(wb, action="names", pane="main", ids=["n2", "n99", "bogus"])
    assert wb.sent[-1] == {"reply": "names", "pane": "main", "names": {"n2": "MatMul mm"}}


def test_back_returns_from_clicks_too(wb):
    _msg(wb, action="select_candidate", index=1, seq=1)
    _msg(wb, action="select_pass", name="FuseMatMulAdd", seq=2)
    assert wb.selected_candidate == -1
    _msg(wb, action="back", seq=3)
    assert wb.selected_pass == "AddZero" and wb.selected_candidate == 1 and "candidate #1" in wb.details_html


def test_table_bench_runs_at_a_tiny_size():
    """bench/bench_viz_table.py works end to end (not a timing test: the numbers come from working code)."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "bench_viz_table.py"
    spec = importlib.util.spec_from_file_location("bench_viz_table", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_viz_table", module)
    spec.loader.exec_module(module)
    result = module.bench_kernel(300, 2000, 2)
    assert {"switch_ms", "click_ms", "filter_ms", "sort_ms", "page_ms"} <= set(result)
    assert result["highlighted"] > 0


# ------------------------------------------------------------------------------------------ passes sent ahead
def _prefetch_all(wb: Workbench, key: str = "", have: tuple[str, ...] = ()) -> tuple[str, list[dict[str, Any]]]:
    """Ask for passes as the page does (one at a time, naming the passes it holds for the key of the last
    answer) until the kernel says done: ``(key, the answers that carried a pass)``."""
    held, got = list(have), []
    for _ in range(50):
        _msg(wb, action="prefetch", key=key, have=held, tag=7)
        answer = wb.sent[-1]
        assert answer["reply"] == "prefetch" and answer["tag"] == 7 and "seq" not in answer
        if answer["key"] != key:
            held = []  # what the page held was made for another drawing, rows or query
        key = answer["key"]
        if answer.get("done"):
            return key, got
        got.append(answer)
        held.append(answer["pass"])
    raise AssertionError("prefetch never said done")


def test_passes_are_sent_ahead_one_per_request_smallest_first_as_a_switch_shows_them(wb):
    seq = wb.seq
    key, got = _prefetch_all(wb)
    assert [a["pass"] for a in got] == ["FuseMatMulAdd", "AddZero"]  # 1 candidate, then 3
    assert wb.prefetched == 2 and wb.seq == seq and wb.selected_pass == ""  # nothing selected, no seq touched
    for answer in got:
        wb.select_pass(answer["pass"])
        table = {k: v for k, v in wb.table.items() if k not in ("version", "selected_pos")}
        assert {k: v for k, v in answer["table"].items() if k not in ("version", "selected_pos")} == table
        assert answer["colours"] == {el: " ".join(c for c in cls.split() if c.startswith("gb_st_"))
                                     for el, cls in wb.highlight.items() if "gb_st_" in cls}
    # the page holds them all: nothing more is sent for this drawing, rows and query
    n = len(wb.sent)
    assert _prefetch_all(wb, key, ("FuseMatMulAdd", "AddZero")) == (key, [])
    assert len(wb.sent) == n + 1 and wb.prefetched == 2


def test_passes_sent_ahead_are_void_after_a_new_run_a_new_query_or_a_new_drawing():
    g = transformer_like(3000)
    relus = [n for n in g.nodes() if n.op_type == "Relu"]
    ledger = [{"pass_name": p, "stage": "BeforeInferShape", "status": "REPLACED", "pattern_name": "p",
               "target_node_ids": [n.id], "target_node_names": [n.name]} for p, n in
              [("P", n) for n in relus] + [("Q", n) for n in relus[:5]]]
    wb = Workbench(StandInRun({"PreRunBegin": g}, g, ledger), threshold=1500, hops=1, max_focus_nodes=40)
    wb.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    sent: list[dict[str, Any]] = []
    wb.sent = sent  # type: ignore[attr-defined]
    assert wb.snapshot == "final" and wb.view.level == 0
    # a switch would draw PreRunBegin (where the candidates were found): nothing is sent for this drawing
    assert _prefetch_all(wb)[1] == [] and wb.prefetched == 0
    wb.show_snapshot("PreRunBegin")
    assert wb.view.level == 0  # the root level of the hierarchy: every pass's nodes are in its boxes
    key, got = _prefetch_all(wb)
    assert [a["pass"] for a in got] == ["Q", "P"] and wb.prefetched == 2
    root_colours = got[1]["colours"]
    assert root_colours and all(el.startswith("g") for el in root_colours)  # group boxes of the root level

    # another drawing (a group opened into its level): the page's passes are void, both are sent again
    wb.open_group(next(iter(wb.view.groups)))
    key2, again = _prefetch_all(wb, key, ("Q", "P"))
    assert key2 != key and [a["pass"] for a in again] == ["Q", "P"] and wb.prefetched == 4
    assert again[1]["colours"] != root_colours

    # another query (a filter): sent again, in the new order
    wb.set_table_query(sort="i", desc=True)
    key3, again = _prefetch_all(wb, key2, ("Q", "P"))
    assert key3 != key2 and len(again) == 2 and wb.prefetched == 6
    assert again[0]["table"]["page"]["i"][0] > again[0]["table"]["page"]["i"][-1]

    # a new run (Run / reload): sent again, for the new rows
    wb._set_run(StandInRun({"PreRunBegin": g}, g, ledger[:3]))
    wb.show_snapshot("PreRunBegin")
    key4, again = _prefetch_all(wb, key3, ("Q", "P"))
    assert key4 != key3 and [a["pass"] for a in again] == ["P"] and wb.prefetched == 7
    assert again[0]["table"]["rows_gen"] == wb.table["rows_gen"] != got[0]["table"]["rows_gen"]


def test_nothing_is_sent_ahead_for_a_switch_that_draws_something_else(wb):
    wb.diff_mode = "pass:overlay"  # a diff follows the selected pass: a switch draws another diff
    assert _prefetch_all(wb)[1] == []
    wb.diff_mode = ""
    wb.show_snapshot("RunCustomPassBeforeInfershape")  # both passes' candidates live in PreRunBegin
    assert _prefetch_all(wb)[1] == []
    wb.show_snapshot("PreRunBegin")
    assert [a["pass"] for a in _prefetch_all(wb)[1]] == ["FuseMatMulAdd", "AddZero"]
