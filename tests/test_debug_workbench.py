"""The workbench's debugging wrappers: ``Workbench.bisect_numerics`` selects the culprit, ``export_repro`` writes a
bundle for the selected candidate, also after a re-run that merged cached stages."""

from __future__ import annotations

import textwrap

import pytest

from gebench import ir
from gebench.viz import Workbench
from test_debug_bisect import PASSES, _graph


@pytest.fixture
def wb(tmp_path):
    path = tmp_path / "bisect_passes.py"
    path.write_text(textwrap.dedent(PASSES))
    return Workbench(ir.parse_text(_graph(4)), passes=[str(path)])


def test_bisect_selects_the_breaking_rewrite(wb):
    record = wb.bisect_numerics(seed=0)
    assert record is not None and record.pass_name == "A_AbsAbs" and record.status.value == "REPLACED"
    index = wb.run.ledger.records.index(record)
    assert wb.selected_candidate == index and wb.selected_pass == "A_AbsAbs"
    replaced = [i for i, r in enumerate(wb.run.ledger.records) if r.pass_name == "A_AbsAbs"
                and r.status.value == "REPLACED"]
    assert replaced.index(index) == 2  # the third rewrite of A_AbsAbs is the wrong one


def test_export_repro_of_the_selected_candidate(wb, tmp_path):
    with pytest.raises(ValueError, match="needs a run and a candidate"):
        wb.export_repro(tmp_path / "none")
    index = next(i for i, r in enumerate(wb.run.ledger.records)
                 if r.pass_name == "B_ExpNeg" and r.status.value == "REPLACED")
    wb.select_candidate(index)
    bundle = wb.export_repro(tmp_path / "bundle")
    assert bundle.pass_name == "B_ExpNeg" and bundle.expected == "REPLACED"
    assert (tmp_path / "bundle" / "subgraph_ge_proto.txt").is_file()
    assert "--stage AfterInferShape" in (tmp_path / "bundle" / "repro.sh").read_text()


def test_bisect_after_a_rerun_of_later_stages_only(wb, tmp_path):
    path = tmp_path / "bisect_passes.py"
    text = path.read_text()
    path.write_text(text.replace("        return Reciprocal(Exp(inputs[0]))",
                                 "        # edited: the AfterInferShape stage re-runs from the cached snapshot\n"
                                 "        return Reciprocal(Exp(inputs[0]))"))
    wb.rerun()
    assert wb.last_rerun["from_snapshot"] is not None  # a merged run, not a full compile
    record = wb.bisect_numerics(seed=0)
    assert record is not None and record.pass_name == "A_AbsAbs"
    replaced = [r for r in wb.run.ledger.records if r.pass_name == "A_AbsAbs" and r.status.value == "REPLACED"]
    assert replaced.index(record) == 2
