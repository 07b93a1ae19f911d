"""``gebench --version`` and ``gebench --help`` import no command's module (nor onnx, numpy, networkx or anywidget);
a command's module is imported when the command is chosen or its ``--help`` is asked for."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from gebench import cli
from gebench.cli._commands import BUILTIN_COMMANDS

#: Libraries that take from a tenth of a second to seconds to import (onnx pulls ml_dtypes in).
HEAVY = ("onnx", "ml_dtypes", "numpy", "networkx", "anywidget", "ipywidgets", "dask", "distributed")


def _imported_by(argv: list[str]) -> tuple[int, str, set[str]]:
    """Exit code, stdout and the HEAVY modules imported by ``gebench.cli.main(argv)`` in a fresh interpreter."""
    code = textwrap.dedent(f"""
        import contextlib, io, json, sys
        from gebench import cli
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                status = cli.main({argv!r})
            except SystemExit as exc:
                status = exc.code
        heavy = [m for m in {HEAVY!r} if m in sys.modules]
        print(json.dumps([status, out.getvalue(), heavy]))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    status, out, heavy = json.loads(done.stdout.strip().splitlines()[-1])
    return status, out, set(heavy)


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []])
def test_version_and_help_import_no_heavy_library(argv):
    status, out, heavy = _imported_by(argv)
    assert heavy == set(), f"gebench {' '.join(argv)} imported {sorted(heavy)}"
    assert status == (cli.EXIT_USAGE if not argv else 0)
    assert out.startswith("gebench " if argv == ["--version"] else "usage: gebench")


def test_version_as_a_module_imports_no_heavy_library():
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "gebench.cli", "--version"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("gebench "), done.stderr[-2000:]
    imported = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert imported, done.stderr[-2000:]
    assert not imported & set(HEAVY), sorted(imported & set(HEAVY))
    # the commands' own modules (but gebench.cli, which defines compile) and the layers they run on wait
    waiting = {c.setup.partition(":")[0] for c in BUILTIN_COMMANDS} - {"gebench.cli"}
    waiting |= {"gebench.api", "gebench.io", "gebench.exec", "gebench.viz", "gebench.sweep", "gebench.compare"}
    assert waiting and not imported & waiting, sorted(imported & waiting)


@pytest.mark.parametrize("command", [c.name for c in BUILTIN_COMMANDS])
def test_a_commands_help_imports_neither_onnx_nor_the_widget(command):
    status, out, heavy = _imported_by([command, "--help"])
    assert status == 0 and out.startswith(f"usage: gebench {command}")
    assert not heavy & {"onnx", "ml_dtypes", "anywidget", "ipywidgets", "dask", "distributed"}, sorted(heavy)


def test_top_level_help_lists_every_command_with_its_help_line(capsys):
    cli._load_extensions()
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0
    flat = " ".join(capsys.readouterr().out.split())  # argparse wraps the help lines
    assert cli._COMMANDS and {c.name for c in BUILTIN_COMMANDS} <= set(cli._COMMANDS)
    for name, (_setup, help_text, _epilog) in cli._COMMANDS.items():
        assert f" {name} {' '.join(help_text.split())}" in flat, name


def test_builtin_commands_are_registered_as_the_table_says():
    for command in BUILTIN_COMMANDS:
        _setup, help_text, epilog = cli._COMMANDS[command.name]
        assert (help_text, epilog) == (command.help, command.epilog)


def test_a_command_given_as_module_and_function_is_imported_when_chosen(tmp_path, monkeypatch, capsys):
    (tmp_path / "gebench_lazy_probe.py").write_text(
        "def setup(parser):\n"
        "    parser.add_argument('--flag', default='x')\n"
        "    return lambda args: 4 if args.flag == 'y' else 5\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "gebench_lazy_probe", raising=False)
    cli.register_command("gebench-lazy-probe", "gebench_lazy_probe:setup", "a lazily imported command")
    try:
        with pytest.raises(SystemExit):
            cli.main(["--help"])
        assert "a lazily imported command" in capsys.readouterr().out
        assert "gebench_lazy_probe" not in sys.modules
        assert cli.main(["gebench-lazy-probe", "--flag", "y"]) == 4
        assert "gebench_lazy_probe" in sys.modules
    finally:
        cli._COMMANDS.pop("gebench-lazy-probe")
        sys.modules.pop("gebench_lazy_probe", None)


def test_a_command_whose_module_is_missing_exits_2_naming_it(capsys):
    cli.register_command("gebench-missing-probe", "gebench_no_such_module_here:setup", "a missing command")
    try:
        with pytest.raises(SystemExit) as done:
            cli.main(["gebench-missing-probe"])
        assert done.value.code == cli.EXIT_USAGE
        err = capsys.readouterr().err
        assert "gebench gebench-missing-probe" in err and "gebench_no_such_module_here" in err
    finally:
        cli._COMMANDS.pop("gebench-missing-probe")


def test_register_command_rejects_a_setup_string_without_a_function():
    with pytest.raises(ValueError, match="module:function"):
        cli.register_command("gebench-bad-probe", "gebench_lazy_probe", "bad")
    assert "gebench-bad-probe" not in cli._COMMANDS


def test_compile_help_imports_no_heavy_library():
    status, out, heavy = _imported_by(["compile", "--help"])
    assert status == 0 and "--backend {ascend,reference}" in out
    assert heavy == set(), sorted(heavy)
