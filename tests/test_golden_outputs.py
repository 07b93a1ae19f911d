"""The outputs of the bundled models, example passes and notebooks stay byte-identical.

``scripts/gen_golden_outputs.py`` made ``tests/golden/`` from the code before the speed work (commit e11a530,
with the intended message change of 418ffd8; see the script's docstring):
the final graph and every snapshot in the IR text form, the run's report with its ledger, the CLI's output,
report and GE dump files, per case. Here the same script runs with the current code (in a fresh process, as
when the files were made) and every file must have the same bytes. Regenerate the golden files only for an
intended change of what gebench outputs (see the script's docstring), never to make this test pass.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
SCRIPT = ROOT / "scripts" / "gen_golden_outputs.py"
#: lines of unified diff shown per differing file
DIFF_LINES = 60


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_golden_outputs", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_golden_outputs", module)
    spec.loader.exec_module(module)
    return module


gen = _load_generator()
CASES = [case.name for case in gen.cases(ROOT)]


@pytest.fixture(scope="module")
def current(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The outputs of the current code, every file stored as is (one generator run for all cases)."""
    out = tmp_path_factory.mktemp("golden_now")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DUMP_") and k != "ASCEND_GE_PY_PASS_PATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env["PYTHONHASHSEED"] = gen.HASH_SEED
    proc = subprocess.run([sys.executable, str(SCRIPT), "--root", str(ROOT), "--out", str(out), "--raw"],
                          cwd=out, env=env, capture_output=True, text=True, timeout=540)
    assert proc.returncode == 0, f"the generator failed:\n{proc.stdout}\n{proc.stderr}"
    assert f"gebench from {ROOT / 'gebench'}" in proc.stderr, proc.stderr  # the checkout's code, not another
    return out


def test_every_case_has_golden_files() -> None:
    assert sorted(p.name for p in GOLDEN.iterdir() if p.is_dir()) == sorted(CASES)
    for case in CASES:
        manifest = gen.read_manifest(GOLDEN / case)
        assert "graph.gir" in manifest and "report.json" in manifest
        for name in manifest:  # every stored copy is the file the manifest hashed
            data = gen.stored_bytes(GOLDEN / case, name, manifest)
            if data is not None:
                assert hashlib.sha256(data).hexdigest() == manifest[name]["sha256"], f"{case}/{name}"


def test_notebook_passes_are_the_notebooks() -> None:
    """The generator's copies of the notebooks' pass files are still what the notebooks write."""
    literals = set()
    for book in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(book.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                for node in ast.walk(ast.parse("".join(cell["source"]))):
                    if isinstance(node, ast.Constant) and isinstance(node.value, str):
                        literals.add(node.value)
    copies = {name: getattr(gen, name) for name in dir(gen) if name.startswith("NB0")}
    assert len(copies) == 4
    for name, text in copies.items():
        assert text in literals, f"{name} differs from the pass file its notebook writes; update the script"


def test_normaliser_replaces_only_what_varies(tmp_path: Path) -> None:
    norm = gen.Normaliser(ROOT, tmp_path)
    package = Path(gen_gebench_file()).parent
    text = (f"{tmp_path}/passes/a.py:3 {ROOT}/passes/b.py:9 _ge_py_pass_mul_one_pass_2378477398098384849 "
            f'"{package}/ge/passes/base.py:282" <object at 0x7f3a2b1c9d40> node_12 shape [1, 3]')
    assert norm.text(text) == ("<WORK>/passes/a.py:3 <ROOT>/passes/b.py:9 _ge_py_pass_mul_one_pass_<HASH> "
                               '"<GEBENCH>/ge/passes/base.py:<LINE>" <object at 0x<ADDR>> node_12 shape [1, 3]')


def gen_gebench_file() -> str:
    import gebench

    return gebench.__file__


def _first_difference(expected: bytes, actual: bytes) -> str:
    exp_lines = expected.decode("utf-8", "replace").splitlines(keepends=True)
    act_lines = actual.decode("utf-8", "replace").splitlines(keepends=True)
    first = next((i for i, (a, b) in enumerate(zip(exp_lines, act_lines)) if a != b),
                 min(len(exp_lines), len(act_lines)))
    diff = list(difflib.unified_diff(exp_lines, act_lines, "golden", "now", n=3))
    shown = "".join(diff[:DIFF_LINES]) + (f"... ({len(diff) - DIFF_LINES} more diff lines)\n"
                                          if len(diff) > DIFF_LINES else "")
    return f"first difference at line {first + 1}:\n{shown}"


def _compare_case(case: str, now_dir: Path) -> list[str]:
    golden = gen.read_manifest(GOLDEN / case)
    now = gen.read_manifest(now_dir)
    problems = []
    for name in sorted(set(golden) - set(now)):
        problems.append(f"{name}: in the golden files, not written now")
    for name in sorted(set(now) - set(golden)):
        problems.append(f"{name}: written now, not in the golden files")
    for name in sorted(set(golden) & set(now)):
        want: dict[str, Any] = golden[name]
        if want["sha256"] == now[name]["sha256"]:
            continue
        if name == "model.sha256":
            problems.insert(0, "model.sha256: the INPUT model changed (a new asset, an upgraded onnx package?); "
                               "the golden files pin the outputs of the old one")
        actual = gen.stored_bytes(now_dir, name, now)
        assert actual is not None  # written with --raw: every file is kept
        expected = gen.stored_bytes(GOLDEN / case, name, golden)
        head = f"{name}: {want['size']} bytes golden, {len(actual)} now (now: {now_dir})"
        if expected is None:
            problems.append(f"{head}\n  only its sha256 is kept; the other files of the case show the diff")
        else:
            problems.append(f"{head}\n{_first_difference(expected, actual)}")
    return problems


@pytest.mark.parametrize("case", CASES)
def test_outputs_are_byte_identical(case: str, current: Path) -> None:
    problems = _compare_case(case, current / case)
    assert not problems, f"case {case}: {len(problems)} file(s) differ from tests/golden/{case}:\n\n" + \
        "\n\n".join(problems)
