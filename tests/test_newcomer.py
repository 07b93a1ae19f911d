"""What a new user trips over first: a clean ``git status`` after running things, the README's notebook snippet in
the folder JupyterLab opens, a script run beside a clone called ``gebench``, and the README's explanations."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gebench.io._ge_dump_env import dump_directory, dump_file_name

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def ignored(paths: list[str]) -> dict[str, bool]:
    """Whether git ignores each repository-relative path (tracked or not, existing or not)."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs git and a git checkout")
    done = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=REPO, input="\n".join(paths),
                          capture_output=True, text=True, check=False)
    hits = set(done.stdout.splitlines())
    return {p: p in hits for p in paths}


def test_gitignore_covers_what_runs_leave_in_the_working_folder():
    names = [dump_file_name(kind, i, "RunCustomPassBeforeInfershape") for i, kind in
             enumerate(("ge_proto", "onnx", "readable"))]
    env_dir = dump_directory({"DUMP_GRAPH_PATH": "."}, pid=4242).as_posix().removeprefix("./")
    leftovers = [*names, *(f"notebooks/{n}" for n in names), f"{env_dir}/{names[0]}", "fusion_result.json",
                 "out/small_cnn.air", "out/small_cnn.om", "dumps/ge_proto_00000000_graph_0_PreRunBegin.txt",
                 "report.json", "gebench_sweep/results.jsonl", "notebooks/.ipynb_checkpoints/01_quickstart.ipynb",
                 "model.om"]
    result = ignored(leftovers)
    assert all(result.values()), [p for p, hit in result.items() if not hit]
    # ...and nothing of the project itself, test data included
    kept = ["gebench/io/ge_dump.py", "README.md", "notebooks/01_quickstart.ipynb", "assets/small_cnn.onnx",
            "tests/golden/model_add_zero/dumps/ge_proto_00000000_graph_0_PreRunBegin.txt",
            "tests/golden/model_add_zero/report.json", "tests/data/fusion_result.json", "passes/README.md"]
    result = ignored(kept)
    assert not any(result.values()), [p for p, hit in result.items() if hit]


def test_a_script_in_the_folder_above_a_clone_named_gebench_finds_gebench_and_ge(tmp_path):
    (tmp_path / "gebench").symlink_to(REPO, target_is_directory=True)  # a clone called gebench, here
    script = tmp_path / "build_graph.py"
    script.write_text("import gebench\n"
                      "from ge.es.graph_builder import GraphBuilder\n"
                      "b = GraphBuilder('g')\n"
                      "b.build_and_reset([b.create_input(0)])\n"
                      "print(gebench.__file__)\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == REPO / "gebench" / "__init__.py"


def readme_block(after: str) -> str:
    """The first ```python block of the README after the line ``after``."""
    rest = README.split(after, 1)[1]
    return re.search(r"```python\n(.*?)```", rest, re.S).group(1)


@pytest.mark.parametrize("folder", [".", "notebooks"], ids=["checkout", "notebooks"])
def test_the_readme_notebook_snippet_works_where_jupyterlab_opens(folder):
    code = readme_block("In a notebook:")
    code += "\nfrom gebench.viz import Workbench\nassert isinstance(wb, Workbench)\nprint(len(wb.run.graph.ir))\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO / folder, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) > 0


def test_readme_says_who_it_is_for_what_the_terms_mean_and_what_needs_root():
    assert "**Who it is for:**" in README
    for term, expansion in [("CANN", "Compute Architecture for Neural Networks"), ("GE", "Graph Engine"),
                            ("ATC", "Ascend Tensor Compiler"), ("AIR", "Ascend Intermediate Representation")]:
        assert f"{term} ({expansion})" in README or f"{expansion} ({term})" in README, term
    root = README.split("**Which commands need root (apt):**", 1)[1].split("\n\n", 1)[0]
    for script in ("scripts/setup_env.sh", "scripts/test.sh", "scripts/install_browser_deps.sh",
                   "scripts/lint_js.sh"):
        assert script in root
    # every script that calls apt-get is named there
    apt = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "scripts").glob("*.sh") if "apt-get" in p.read_text())
    assert apt and all(p in root for p in apt), apt
