"""``ge.pyatc`` (spec ge-fusion-artifacts §4) and ``gebench pyatc``: atc's command line run in a Python process,
exiting with atc's code; CANN's own ``ge.pyatc`` runs instead when it is installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MODEL = REPO / "assets" / "small_cnn.onnx"
PASS_FILE = '''
from ge.passes import FusionBasePass, PassStage, register_fusion_pass


@register_fusion_pass(name="PyatcSeenPass", stage=PassStage.BEFORE_INFER_SHAPE)
class PyatcSeenPass(FusionBasePass):
    def run(self, graph, context):
        return None
'''


@pytest.fixture()
def no_cann(monkeypatch, tmp_path):
    """No CANN: an empty PATH folder, no CANN roots or dump switches; the working folder is a temporary one."""
    empty = tmp_path / "empty_bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", f"{empty}{os.pathsep}{Path(sys.executable).parent}")
    for var in ("ASCEND_PATH", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME", "ASCEND_GE_PY_PASS_PATH", "DUMP_GE_GRAPH",
                "DUMP_GRAPH_PATH", "DUMP_GRAPH_LEVEL", "DUMP_GRAPH_FORMAT", "NPU_COLLECT_PATH", "ASCEND_WORK_PATH",
                "PYTHONPATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def atc_args(out: Path) -> list[str]:
    return [f"--model={MODEL}", "--framework=5", "--soc_version=Ascend910B1", f"--output={out}"]


def test_main_runs_gebench_atc_with_the_pass_path_and_exits_with_its_code(no_cann, monkeypatch, capsys):
    import importlib

    import gebench  # noqa: F401 - makes `ge` resolve to the facade

    pyatc = importlib.import_module("ge.pyatc")  # the name pass authors use
    assert pyatc is importlib.import_module("gebench.ge.pyatc")

    (no_cann / "seen.py").write_text(PASS_FILE)
    monkeypatch.setenv("ASCEND_GE_PY_PASS_PATH", str(no_cann / "seen.py"))
    with pytest.raises(SystemExit) as done:
        pyatc.main(args=atc_args(no_cann / "out" / "net"))
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "PyatcSeenPass" in out and "ATC run success" in out
    assert (no_cann / "out" / "net.air").is_file()


def test_main_exits_with_atc_usage_code_and_names_the_program(no_cann, capsys):
    from gebench.ge import pyatc

    with pytest.raises(SystemExit) as done:
        pyatc.main("/usr/lib/python3/site-packages/ge/pyatc/__main__.py", ["--model=x.onnx", "--bogus=1"])
    assert done.value.code == 2
    assert f"usage: {sys.executable} -m ge.pyatc" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:  # missing flags: gebench atc's own usage error
        pyatc.main("myatc", ["--model=x.onnx"])
    assert done.value.code == 2
    assert "missing --framework, --output, --soc_version" in capsys.readouterr().err


def test_main_reads_sys_argv_by_default(no_cann, monkeypatch, capsys):
    from gebench.ge import pyatc

    monkeypatch.setattr(sys, "argv", ["prog-name", "--model=x.onnx", "--framework=3", "--soc_version=A", "--output=o"])
    with pytest.raises(SystemExit) as done:
        pyatc.main()
    assert done.value.code == 2 and "--framework=3 is not emulated" in capsys.readouterr().err


def run(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_gebench_pyatc_and_python_m_from_the_shell(no_cann):
    env = dict(os.environ)
    ok = run([sys.executable, "-m", "gebench.cli", "pyatc", *atc_args(no_cann / "a")], no_cann, env)
    assert ok.returncode == 0, ok.stderr
    assert "ATC run success" in ok.stdout and (no_cann / "a.air").is_file()
    bad = run([sys.executable, "-m", "gebench.ge.pyatc", f"--model={MODEL}", "--framework=5"], no_cann, env)
    assert bad.returncode == 2 and "missing --output, --soc_version" in bad.stderr
    assert "Traceback" not in bad.stderr


FAKE_CANN_PYATC = '''
import json, os, sys


def main(cmdline_argv0=None, args=None):
    with open(os.environ["PYATC_RECORD"], "w") as fh:
        json.dump(sys.argv[1:] if args is None else args, fh)
    sys.exit(7)


if __name__ == "__main__":
    main()
'''


def test_a_real_cann_ge_pyatc_takes_over_and_is_never_shadowed(no_cann):
    import json

    site = no_cann / "cann_site"
    (site / "ge" / "pyatc").mkdir(parents=True)
    (site / "ge" / "__init__.py").write_text("REAL_CANN = True\n")
    (site / "ge" / "pyatc" / "__init__.py").write_text(FAKE_CANN_PYATC)
    (site / "ge" / "pyatc" / "__main__.py").write_text("from ge.pyatc import main\nmain()\n")
    env = dict(os.environ, PYTHONPATH=str(site), PYATC_RECORD=str(no_cann / "record.json"))
    args = atc_args(no_cann / "b")
    done = run([sys.executable, "-m", "gebench.cli", "pyatc", *args], no_cann, env)
    assert done.returncode == 7, done.stderr
    assert json.loads((no_cann / "record.json").read_text()) == [args[0], args[1], args[3], args[2]]
    assert not (no_cann / "b.air").exists()  # gebench's emulation did not run
    (no_cann / "record.json").unlink()
    code = ("import sys, gebench.ge.pyatc as p; p.main(None, sys.argv[1:])")
    done = run([sys.executable, "-c", code, *args], no_cann, env)
    assert done.returncode == 7 and json.loads((no_cann / "record.json").read_text()) == args
