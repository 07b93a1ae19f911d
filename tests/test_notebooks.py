"""Every notebook in notebooks/ runs top to bottom in a fresh kernel; the notebooks assert on what the
workbench shows, so a failing assertion in a cell fails here."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
EXPECTED = ["01_quickstart", "02_debug_a_pattern", "03_decompose_and_verify", "04_teaching_fusion", "05_ge_dumps",
            "06_sweep"]


def test_all_notebooks_are_present():
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == EXPECTED


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_runs_headless(name: str) -> None:
    book = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    assert not any(c.get("outputs") for c in book.cells if c.cell_type == "code"), "commit notebooks without outputs"
    client = NotebookClient(book, timeout=240, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    try:
        client.execute()
    except CellExecutionError as exc:
        pytest.fail(f"{name}.ipynb failed:\n{exc}")
    widgets = [o for c in book.cells if c.cell_type == "code" for o in c.outputs
               if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert widgets, f"{name}.ipynb shows no workbench"
