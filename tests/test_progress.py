"""Progress of long work: the library's ``progress(step, done, total)`` calls and the CLI's bars on stderr.

The CLI tests run ``gebench`` with stderr on a pseudo-terminal (``pty``) and ``GEBENCH_PROGRESS_DELAY=0`` so a
bar shows at once; with ``--quiet`` or with stderr on a pipe nothing may be drawn.
"""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import gebench
from gebench import api, ir
from gebench.fusion.runtime import PROGRESS_EVERY
from gebench.progress import DELAY_ENV, TqdmProgress, accepts_progress, step, terminal_progress

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "assets"
PASSES = ROOT / "passes"

Calls = list[tuple[str, int, int]]


def _recorder() -> tuple[Calls, Callable[[str, int, int], None]]:
    calls: Calls = []
    return calls, lambda name, done, total: calls.append((name, done, total))


def _runs(calls: Calls) -> list[Calls]:
    """The calls split into runs of one step each: a run ends with its done == total call."""
    open_runs: dict[str, Calls] = {}
    runs: list[Calls] = []
    for call in calls:
        run = open_runs.setdefault(call[0], [])
        run.append(call)
        if call[1] >= call[2]:
            runs.append(open_runs.pop(call[0]))
    assert not open_runs, f"steps that never ended: {sorted(open_runs)}"
    return runs


def _assert_protocol(calls: Calls) -> list[Calls]:
    runs = _runs(calls)
    for run in runs:
        dones = [done for _, done, _ in run]
        assert dones == sorted(dones), f"done went back in {run}"
        assert all(total >= 1 and 0 <= done <= total for _, done, total in run), run
        assert run[-1][1] == run[-1][2], run
    return runs


def _mul_chain(n: int, factor: float) -> ir.Graph:
    """x -> Mul(., factor) n times: n candidates of the example GebenchMulOnePass pattern."""
    from ge.es.graph_builder import GraphBuilder

    b = GraphBuilder("chain")
    t = b.create_input(0, shape=[2, 4])
    for _ in range(n):
        t = t * factor
    return ir.as_graph(b.build_and_reset([t]))


# ---------------------------------------------------------------------------------------------- library
def test_compile_reports_every_step_monotonically_to_its_end() -> None:
    calls, progress = _recorder()
    run = gebench.compile(ASSETS / "small_transformer.onnx", passes=[PASSES], progress=progress)
    assert run.status == "SUCCESS"
    runs = _assert_protocol(calls)
    names = [r[0][0] for r in runs]
    assert names[0] == "load small_transformer.onnx"
    assert "InferShape" in names and names[-1] == "compile"
    compile_calls = [c for c in calls if c[0] == "compile"]
    assert compile_calls[0] == ("compile", 0, 5)  # four stages and the inference
    assert [d for _, d, _ in compile_calls] == [0, 1, 2, 3, 4, 5]
    assert ("BeforeInferShape GebenchMulOnePass", 0, 8) in calls  # the pattern's 8 Mul candidates


def test_compile_without_progress_gives_the_same_run() -> None:
    with_progress = gebench.compile(ASSETS / "small_cnn.onnx", passes=[PASSES], progress=lambda *a: None)
    without = gebench.compile(ASSETS / "small_cnn.onnx", passes=[PASSES])
    assert ir.to_text(with_progress.ir_graph) == ir.to_text(without.ir_graph)
    assert with_progress.report()["ledger"] == without.report()["ledger"]


def test_pattern_pass_reports_candidates_every_few_hundred() -> None:
    calls, progress = _recorder()
    run = gebench.compile(_mul_chain(700, 2.0), passes=[PASSES / "mul_one_pass.py"], progress=progress)
    assert run.summary()["GebenchMulOnePass"]["candidates"] == 700
    _assert_protocol(calls)
    counts = [(d, t) for name, d, t in calls if name == "BeforeInferShape GebenchMulOnePass"]
    assert counts == [(0, 700), (PROGRESS_EVERY, 700), (2 * PROGRESS_EVERY, 700), (700, 700)]


def test_a_failed_compile_still_ends_its_steps(tmp_path: Path) -> None:
    bad = tmp_path / "bad_pass.py"
    bad.write_text("from ge.passes import PassStage, FusionBasePass, register_fusion_pass\n\n\n"
                   "@register_fusion_pass(name='Boom', stage=PassStage.BEFORE_INFER_SHAPE)\n"
                   "class Boom(FusionBasePass):\n"
                   "    def run(self, graph, context):\n"
                   "        raise RuntimeError('boom')\n", encoding="utf-8")
    calls, progress = _recorder()
    run = gebench.compile(ASSETS / "add_zero.onnx", passes=[bad], progress=progress)
    assert run.status == "FAILED"
    _assert_protocol(calls)
    assert calls[-1] == ("compile", 5, 5)


def test_write_dumps_reports_a_dump_step(tmp_path: Path) -> None:
    run = gebench.compile(ASSETS / "add_zero.onnx", passes=[PASSES])
    calls, progress = _recorder()
    written = api.write_dumps(run, tmp_path / "dumps", progress=progress)
    assert written
    _assert_protocol(calls)
    assert {name for name, _, _ in calls} == {"dump"}


def test_load_hands_its_counts_to_a_loader_that_takes_progress(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    text = ir.to_text(_mul_chain(2, 3.0))
    seen: list[str] = []

    def counting_loader(path: Path, *, progress: Callable[[int, int], None] | None = None) -> ir.Graph:
        seen.append("with progress" if progress else "without")
        if progress is not None:
            for done in range(4):
                progress(done, 3)
        return ir.parse_text(path.read_text(encoding="utf-8"))

    def plain_loader(path: Path) -> ir.Graph:
        seen.append("plain")
        return ir.parse_text(path.read_text(encoding="utf-8"))

    monkeypatch.setitem(api._LOADERS, ".countme", counting_loader)
    monkeypatch.setitem(api._LOADERS, ".plain", plain_loader)
    (tmp_path / "g.countme").write_text(text, encoding="utf-8")
    (tmp_path / "g.plain").write_text(text, encoding="utf-8")
    calls, progress = _recorder()
    gebench.load(tmp_path / "g.countme", progress=progress)
    assert calls == [("load g.countme", 0, 1), ("load g.countme", 0, 3), ("load g.countme", 1, 3),
                     ("load g.countme", 2, 3), ("load g.countme", 3, 3)]
    calls.clear()
    gebench.load(tmp_path / "g.plain", progress=progress)
    assert calls == [("load g.plain", 0, 1), ("load g.plain", 1, 1)]
    gebench.load(tmp_path / "g.countme")
    assert seen == ["with progress", "plain", "without"]


def test_step_ends_a_step_the_block_left_open_even_when_it_raises() -> None:
    calls, progress = _recorder()
    with pytest.raises(RuntimeError), step(progress, "work", 4) as counts:
        assert counts is not None
        counts(2, 4)
        raise RuntimeError("stop")
    assert calls == [("work", 0, 4), ("work", 2, 4), ("work", 4, 4)]
    with step(None, "nothing") as counts:
        assert counts is None


def test_accepts_progress() -> None:
    def takes(path: str, *, progress: object = None) -> None: ...

    def anything(path: str, **kwargs: object) -> None: ...

    def plain(path: str) -> None: ...

    assert accepts_progress(takes) and accepts_progress(anything) and not accepts_progress(plain)


# ---------------------------------------------------------------------------------------------- the bar
class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_terminal_progress_is_off_when_quiet_or_not_a_terminal() -> None:
    assert terminal_progress(quiet=True, stream=_Terminal()) is None
    assert terminal_progress(stream=io.StringIO()) is None
    assert isinstance(terminal_progress(stream=_Terminal()), TqdmProgress)


def test_bar_shows_after_the_delay_and_is_cleared_at_the_end() -> None:
    screen = _Terminal()
    with TqdmProgress(screen, delay=0.3) as progress:
        progress("quick", 0, 2)
        progress("quick", 2, 2)
        assert screen.getvalue() == ""  # a step under the delay shows nothing
        progress("slow", 0, 10)
        time.sleep(0.8)  # no call meanwhile: the refresh thread puts the bar up once the delay has passed
        assert "slow:   0%|" in screen.getvalue() and "0/10" in screen.getvalue()
        progress("slow", 5, 10)
        assert "slow:  50%|" in screen.getvalue()
        progress("slow", 10, 10)
    assert "quick" not in screen.getvalue()
    assert screen.getvalue().endswith("\r")  # cleared (leave=False): the terminal keeps no bar


def test_a_broken_stream_turns_the_bars_off() -> None:
    class Broken(_Terminal):
        def write(self, text: str) -> int:
            raise OSError("terminal gone")

    with TqdmProgress(Broken(), delay=0) as progress:
        progress("step", 0, 3)  # no exception: the work goes on
        assert progress.broken
        progress("step", 3, 3)


# ---------------------------------------------------------------------------------------------- the CLI
def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("DUMP_") and k not in ("ASCEND_GE_PY_PASS_PATH", DELAY_ENV)}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.update(extra)
    return env


def _run_in_pty(args: list[str], env: dict[str, str], cwd: Path, timeout: float = 240) -> tuple[int, str, str]:
    """Run ``python -m gebench ARGS`` with stderr on a pseudo-terminal; (exit code, stdout, stderr)."""
    master, slave = pty.openpty()
    out_path = cwd / "stdout.txt"
    with open(out_path, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "gebench", *args], stdin=subprocess.DEVNULL, stdout=out,
                                stderr=slave, env=env, cwd=cwd)
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    return code, out_path.read_text(encoding="utf-8"), b"".join(chunks).decode("utf-8", "replace")


@pytest.fixture(scope="module")
def chain_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An IR text model with 700 candidates of GebenchMulOnePass (more than PROGRESS_EVERY)."""
    path = tmp_path_factory.mktemp("progress_model") / "chain.gir"
    path.write_text(ir.to_text(_mul_chain(700, 2.0)), encoding="utf-8")
    return path


def test_cli_compile_draws_bars_on_a_terminal(tmp_path: Path, chain_model: Path) -> None:
    code, out, err = _run_in_pty(["compile", str(chain_model), "--passes", str(PASSES), "--dump-dir",
                                  str(tmp_path / "dumps")], _env(**{DELAY_ENV: "0"}), tmp_path)
    assert code == 0, out + err
    assert out.startswith("compile SUCCESS") and "GebenchMulOnePass: 700 candidates" in out
    for bar in ("load chain.gir:", "compile:", "InferShape:", "BeforeInferShape GebenchMulOnePass:", "dump:"):
        assert bar in err, f"no {bar!r} bar in {err!r}"
    assert f"{PROGRESS_EVERY}/700" in err  # counts inside the pattern pass, not only its start and end
    assert "compile:  80%|" in err and "4/5" in err  # the compile bar counted its stages (cleared at 5/5)
    assert "%|" not in out  # bars never go to stdout


def test_cli_compile_quiet_draws_nothing(tmp_path: Path, chain_model: Path) -> None:
    code, out, err = _run_in_pty(["compile", str(chain_model), "--passes", str(PASSES), "--quiet"],
                                 _env(**{DELAY_ENV: "0"}), tmp_path)
    assert code == 0
    assert out.strip() == "compile SUCCESS: 1402 -> 1402 nodes"  # the outcome line only
    assert err == ""


def test_cli_compile_draws_no_bar_when_stderr_is_not_a_terminal(tmp_path: Path, chain_model: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "gebench", "compile", str(chain_model), "--passes", str(PASSES)],
                          env=_env(**{DELAY_ENV: "0"}), cwd=tmp_path, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert "%|" not in proc.stderr and "\r" not in proc.stderr
    assert "GebenchMulOnePass: 700 candidates" in proc.stdout


def test_cli_compile_waits_a_second_before_drawing(tmp_path: Path) -> None:
    """With the default delay a compile of a small model, over in well under a second, draws nothing."""
    code, out, err = _run_in_pty(["compile", str(ASSETS / "add_zero.onnx"), "--passes", str(PASSES)],
                                 _env(**{DELAY_ENV: "30"}), tmp_path)
    assert code == 0 and out.startswith("compile SUCCESS")
    assert err == ""


def test_cli_atc_draws_bars_and_log_null_silences_them(tmp_path: Path) -> None:
    args = ["atc", f"--model={ASSETS / 'small_cnn.onnx'}", "--framework=5", "--soc_version=Ascend910B1",
            f"--output={tmp_path / 'out' / 'small_cnn'}", "--gebench_backend=reference"]
    env = _env(**{DELAY_ENV: "0", "ASCEND_GE_PY_PASS_PATH": str(PASSES)})
    code, out, err = _run_in_pty(args, env, tmp_path)
    assert code == 0, out + err
    assert "ATC run success" in out
    assert "load small_cnn.onnx:" in err and "compile:" in err and "save AIR:" in err
    code, out, err = _run_in_pty([*args, "--log=null"], env, tmp_path)
    assert code == 0 and "ATC run success" in out
    assert "%|" not in err
