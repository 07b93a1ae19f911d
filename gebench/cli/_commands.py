"""The built-in ``gebench`` commands: name, help line, examples and where their arguments are set up.

This module imports nothing, so ``gebench --version`` and ``gebench --help`` list the commands without importing
them. A command's setup is named ``"module:function"``; :mod:`gebench.cli` imports it only when the command is
chosen or its ``--help`` is asked for. The setup modules import the heavy libraries (onnx, numpy, networkx,
anywidget, dask) inside their handlers, not when they are imported.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["BUILTIN_COMMANDS", "BuiltinCommand", "builtin_command"]


class BuiltinCommand(NamedTuple):
    name: str
    help: str
    #: ``"module:function"``: ``function(parser)`` adds the arguments and returns the handler (``args -> int``).
    setup: str
    #: Shown at the end of ``gebench NAME --help``, as written.
    epilog: str = ""


ATC_HELP = "CANN atc's command line: real atc when installed, else gebench's passes, GE dumps and an AIR file"
ATC_EXAMPLES = """examples:
  ASCEND_GE_PY_PASS_PATH=passes gebench atc --model=assets/small_cnn.onnx --framework=5 \\
      --soc_version=Ascend910B1 --output=out/small_cnn
  DUMP_GE_GRAPH=1 DUMP_GRAPH_PATH=dumps gebench atc --model=out/small_cnn.air --framework=1 \\
      --soc_version=Ascend910B1 --output=out/again --gebench_backend=reference"""

BUILTIN_COMMANDS: tuple[BuiltinCommand, ...] = (
    BuiltinCommand(
        "compile", "run custom passes through GE's stages and report what they did", "gebench.cli:_setup_compile",
        """examples:
  gebench compile assets/small_transformer.onnx --passes passes
  gebench compile model.onnx --passes passes --dump-dir dumps --report report.json --verify
  ASCEND_GE_PY_PASS_PATH=passes gebench compile ge_proto_00000000_graph_0_PreRunBegin.txt --stage BeforeInferShape"""),
    BuiltinCommand("atc", ATC_HELP, "gebench.cli.atc:setup_atc", ATC_EXAMPLES),
    BuiltinCommand(
        "pyatc", "ge.pyatc from the shell: CANN's ge.pyatc when installed, else the same as gebench atc",
        "gebench.cli.atc:_setup_pyatc", ATC_EXAMPLES.replace("gebench atc", "gebench pyatc")),
    BuiltinCommand(
        "lab", "open the workbench in JupyterLab on 127.0.0.1 with token authentication",
        "gebench.viz._lab:add_lab_command",
        """examples:
  gebench lab                                   # the quickstart notebook, in a browser when there is one
  gebench lab notebooks/02_debug_a_pattern.ipynb --no-browser --port 8890"""),
    BuiltinCommand(
        "sweep", "run pass sets over a model corpus on Dask (local cluster by default)",
        "gebench.cli.sweep:_setup_sweep",
        """examples:
  gebench sweep models/ --passes passes --out sweep_out
  gebench sweep models/ --passes passes --verify --baseline old_sweep"""),
    BuiltinCommand(
        "sweep-diff", "compare two sweep folders; exit 1 on a regression", "gebench.cli.sweep:_setup_diff",
        """examples:
  gebench sweep-diff old_sweep new_sweep"""),
    BuiltinCommand(
        "compare", "compare a real machine's fusion_result.json (and a GE dump) with gebench's prediction for the "
                   "same model and passes", "gebench.cli.compare:setup_compare",
        """examples:
  gebench compare --fusion-result fusion_result.json model.onnx --passes passes/
  gebench compare --fusion-result fusion_result.json model.onnx --passes passes/ \\
      --dump ge_proto_00000001_graph_0_RunCustomPassBeforeInfershape.txt

exit codes: 0 no difference, 1 a count or site differs, 2 a bad input"""),
)


def builtin_command(name: str) -> BuiltinCommand:
    """The built-in command ``name`` (KeyError when there is none)."""
    for command in BUILTIN_COMMANDS:
        if command.name == name:
            return command
    raise KeyError(name)
