"""``gebench atc``: CANN's ``atc`` command line, working on a machine without CANN.

The commands of GE's Python pass guide run unchanged::

    ASCEND_GE_PY_PASS_PATH=my_pass.py DUMP_GE_GRAPH=1 \\
        gebench atc --model=model.onnx --framework=5 --soc_version=Ascend910B1 --output=out/model --log=debug

When CANN's ``atc`` is found (``PATH``, ``ASCEND_PATH``; see :mod:`gebench.exec.backends`) it takes over with the
same arguments and environment. Otherwise gebench does what it can do without a device compiler: it loads the
model (ONNX, ``--framework=5``, or AIR, ``--framework=1``), runs the passes of ``ASCEND_GE_PY_PASS_PATH`` through
GE's stages, writes the dumps ``DUMP_GE_GRAPH``/``DUMP_GRAPH_*`` ask for with GE's file names, and writes the
final graph as ``<output>.air``. No ``.om`` is made then, and the command says so. Like atc it writes GE's fusion
statistics, ``fusion_result.json`` (in the current folder, or ``$ASCEND_WORK_PATH/FE/<pid>/``), as
``--export_compile_stat`` says: ``1`` (default) when the command ends, ``2`` as soon as the compile is done, ``0``
never; ``--fusion_switch_file`` turns passes off as in GE.
``--gebench_backend=reference`` forces the emulation, ``--gebench_backend=ascend`` insists on the real atc.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import logging
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from gebench.cli._commands import ATC_EXAMPLES as _ATC_EXAMPLES
from gebench.cli._commands import ATC_HELP as _ATC_HELP
from gebench.fusion.stages import in_dump_order
from gebench.progress import ProgressCallback, step, terminal_progress

__all__ = ["ATC_FLAGS", "setup_atc", "run_atc_command", "run_pyatc", "pyatc_program_name", "find_real_pyatc",
           "register"]

_log = logging.getLogger(__name__)

#: atc's value flags (``--name=value``), accepted so that any documented atc command line parses. Only
#: ``model``, ``framework``, ``soc_version``, ``output``, ``mode`` and ``log`` change what the emulation does; the
#: others are passed to the real atc and reported as ignored by the emulation.
ATC_FLAGS = (
    "mode", "model", "weight", "om", "framework", "input_format", "input_shape", "input_shape_range",
    "dynamic_batch_size", "dynamic_image_size", "dynamic_dims", "singleop", "output", "output_type",
    "check_report", "json", "soc_version", "core_type", "aicore_num", "virtual_type", "out_nodes",
    "input_fp16_nodes", "insert_op_conf", "op_name_map", "is_input_adjust_hw_layout", "is_output_adjust_hw_layout",
    "external_weight", "compression_optimize_conf", "enable_small_channel", "enable_compress_weight",
    "compress_weight_conf", "sparsity", "buffer_optimize", "precision_mode", "precision_mode_v2", "allow_hf32",
    "keep_dtype", "modify_mixlist", "op_precision_mode", "op_select_implmode", "optypelist_for_implmode",
    "op_bank_path", "op_compiler_cache_mode", "op_compiler_cache_dir", "disable_reuse_memory", "fusion_switch_file",
    "enable_scope_fusion_passes", "enable_single_stream", "ac_parallel_enable", "tiling_schedule_optimize",
    "quant_dumpable", "log", "dump_mode", "debug_dir", "op_debug_level", "op_debug_config", "status_check",
    "host_env_os", "host_env_cpu", "display_model_info", "save_original_model", "shape_generalized_build_mode",
    "oo_level", "optimization_switch", "input_hint_shape", "customize_dtypes", "distributed_cluster_build",
    "cluster_config", "model_relation_config", "enable_graph_parallel", "graph_parallel_option_path",
    "export_compile_stat",
)
_EMULATED = {"model", "framework", "soc_version", "output", "mode", "log", "export_compile_stat", "fusion_switch_file"}
_LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR,
               "null": logging.CRITICAL + 1}
EXIT_FAILED = 1
EXIT_USAGE = 2


def setup_atc(parser: argparse.ArgumentParser) -> Any:
    """Add atc's flags (atc's own spelling, ``--soc_version=...``) to ``parser``; returns the handler."""
    for flag in ATC_FLAGS:
        parser.add_argument(f"--{flag}", dest=f"atc_{flag}", default=None, metavar=flag.upper())
    parser.add_argument("--gebench_backend", choices=("auto", "reference", "ascend"), default="auto",
                        help="auto: the real atc when installed, else gebench's emulation (default); "
                             "reference: always the emulation; ascend: the real atc or an error")
    return lambda args: run_atc_command(args)


def _atc_argv(args: argparse.Namespace) -> list[str]:
    """The command line for the real atc, rebuilt in atc's spelling from the parsed flags."""
    return [f"--{flag}={getattr(args, 'atc_' + flag)}" for flag in ATC_FLAGS
            if getattr(args, "atc_" + flag, None) is not None]


def run_atc_command(args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None,
                    env: Mapping[str, str] | None = None) -> int:
    """Run ``gebench atc`` for parsed ``args``; returns the exit code (0 success, 1 failed compile, 2 usage)."""
    from gebench.exec.backends import cann_missing_message, find_atc, run_atc

    out = out or sys.stdout
    err = err or sys.stderr
    env = os.environ if env is None else env
    level = (args.atc_log or "").lower()
    if level:
        if level not in _LOG_LEVELS:
            print(f"gebench atc: --log={args.atc_log} is not one of {sorted(_LOG_LEVELS)}", file=err)
            return EXIT_USAGE
        logging.basicConfig(level=_LOG_LEVELS[level])
        logging.getLogger("gebench").setLevel(_LOG_LEVELS[level])
    atc = find_atc(env)
    if args.gebench_backend == "ascend" and atc is None:
        print(f"gebench atc: {cann_missing_message(env)}", file=err)
        return EXIT_FAILED
    if atc is not None and args.gebench_backend != "reference":
        result = run_atc([str(atc), *_atc_argv(args)], env=env)
        out.write(result.stdout)
        err.write(result.stderr)
        return result.returncode
    # progress bars on a terminal's stderr, as ``gebench compile`` draws them; ``--log=null`` silences them
    progress = terminal_progress(quiet=level == "null", stream=err)
    try:
        return _emulate(args, out=out, err=err, env=env, progress=progress)
    finally:
        if progress is not None:
            progress.close()


def _emulate(args: argparse.Namespace, *, out: TextIO, err: TextIO, env: Mapping[str, str],
             progress: ProgressCallback | None = None) -> int:
    from gebench import api
    from gebench.cli import format_summary
    from gebench.exec.backends import FRAMEWORKS
    from gebench.io import load_air, load_onnx

    mode = args.atc_mode or "0"
    if mode != "0":
        print(f"gebench atc: --mode={mode} needs CANN's atc; gebench emulates only --mode=0 (build a model)",
              file=err)
        return EXIT_USAGE
    missing = [f"--{f}" for f in ("model", "framework", "output", "soc_version") if getattr(args, "atc_" + f) is None]
    if missing:
        print(f"gebench atc: missing {', '.join(missing)} (atc needs them to build a model)", file=err)
        return EXIT_USAGE
    try:
        framework = int(args.atc_framework)
    except ValueError:
        framework = -1
    if framework not in (1, 5):
        known = ", ".join(f"{k}={v}" for k, v in FRAMEWORKS.items())
        print(f"gebench atc: --framework={args.atc_framework} is not emulated; gebench reads 5 (onnx) and 1 (AIR) "
              f"({known})", file=err)
        return EXIT_USAGE
    stat = args.atc_export_compile_stat or "1"
    if stat not in ("0", "1", "2"):
        print(f"gebench atc: --export_compile_stat={stat} is not 0, 1 or 2 (0: no fusion_result.json, 1: write it "
              "when atc ends, 2: as soon as the compile is done)", file=err)
        return EXIT_USAGE
    ignored = [f"--{f}" for f in ATC_FLAGS if f not in _EMULATED and getattr(args, "atc_" + f) is not None]
    if ignored:
        print(f"gebench atc: ignoring {', '.join(ignored)} (only the real atc uses them)", file=err)
    model = Path(args.atc_model)
    air_path = _output_air(args.atc_output)
    if air_path.is_dir() or not _writable_folder(air_path.parent):
        print(f"gebench atc: --output={args.atc_output}: cannot write {air_path} there (not a writable folder); "
              "choose another --output", file=err)
        return EXIT_USAGE
    try:
        with step(progress, f"load {model.name}"):
            graph = load_onnx(model) if framework == 5 else load_air(model)
    except (OSError, ValueError) as exc:
        print(f"gebench atc: cannot read --model={model}: {exc}", file=err)
        return EXIT_USAGE
    stat_path = _remove_fusion_result(env, err)
    run = api.compile(graph, passes=None, copy=False, options={"ge.socVersion": args.atc_soc_version},
                      fusion_switch=_fusion_switch(args.atc_fusion_switch_file, err), progress=progress)
    print(format_summary(run), file=out)
    if stat == "2":
        _write_fusion_result(run, stat_path, out, err)
    code = _after_compile(run, air_path, out=out, err=err, env=env, progress=progress)
    if stat == "1":
        _write_fusion_result(run, stat_path, out, err)
    return code


def _remove_fusion_result(env: Mapping[str, str], err: TextIO) -> Path:
    """Where this compile's ``fusion_result.json`` goes; an earlier file there is removed, as GE does."""
    from gebench.fusion.statistics import fusion_result_path

    path = fusion_result_path(env)
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:
        print(f"gebench atc: cannot remove the earlier {path} ({exc.strerror or exc})", file=err)
    return path


def _write_fusion_result(run: Any, path: Path, out: TextIO, err: TextIO) -> None:
    """Write GE's fusion statistics of ``run`` (nothing when no pass matched, as GE); a failure is reported only."""
    from gebench.fusion.statistics import write_fusion_result

    try:
        written = write_fusion_result(run.fusion_result(), path)
    except OSError as exc:
        print(f"gebench atc: cannot write {path} ({exc.strerror or exc}); the fusion statistics are lost", file=err)
        return
    if written is not None:
        print(f"  fusion result: {written}", file=out)


def _fusion_switch(path: str | None, err: TextIO) -> Any:
    """``--fusion_switch_file``: its parsed content; GE ignores a file it cannot read, with a warning."""
    if not path:
        return None
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        print(f"gebench atc: --fusion_switch_file={path} cannot be read as JSON ({exc}); ignored, every pass "
              "stays on (as in GE)", file=err)
        return None
    if not isinstance(data, dict):
        print(f"gebench atc: --fusion_switch_file={path} is not a JSON object; ignored, every pass stays on (as in "
              "GE)", file=err)
        return None
    return data


def _after_compile(run: Any, air_path: Path, *, out: TextIO, err: TextIO, env: Mapping[str, str],
                   progress: ProgressCallback | None) -> int:
    """Dumps and the AIR file of a compiled ``run``; returns the exit code."""
    from gebench.io import GeDumpError, save_air, write_dumps_from_env
    from gebench.io.ge_dump import dump_settings_from_env

    settings = dump_settings_from_env(env)
    try:
        with step(progress, "dump"):
            written = write_dumps_from_env(in_dump_order(run.ir_snapshots), settings=settings)
        for path in written:
            print(f"  dump: {path}", file=out)
        if run.status != "SUCCESS":
            print("gebench atc: ATC run failed (the passes failed the compile, as GE would); no model written",
                  file=err)
            return EXIT_FAILED
        with step(progress, "save AIR"):
            air = save_air(run.ir_graph, air_path)
    except GeDumpError as exc:
        print(f"gebench atc: {exc}", file=err)
        # a file that cannot be written is a bad path (2); a graph GE cannot store fails the build (1)
        return EXIT_USAGE if isinstance(exc.__cause__, OSError) else EXIT_FAILED
    print(f"  model: {air} (AIR for atc --framework=1; no .om is made without CANN's atc)", file=out)
    print("gebench atc: ATC run success (passes applied by gebench)", file=out)
    return 0


def _writable_folder(folder: Path) -> bool:
    """Whether ``folder`` is (or can be made) a writable directory."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK | os.X_OK)


def _output_air(output: str) -> Path:
    for ext in (".om", ".air"):
        if output.endswith(ext):
            output = output[: -len(ext)]
    return Path(output + ".air")


def pyatc_program_name(argv0: str | None) -> str:
    """The program name ``ge.pyatc`` shows: ``<python> -m ge.pyatc`` when started as ``python -m`` (``argv0`` is a
    ``__main__.py``), else ``argv0`` itself (``pyatc`` when there is none)."""
    if not argv0:
        return "pyatc"
    if os.path.basename(argv0) == "__main__.py":
        return f"{sys.executable} -m ge.pyatc"
    return argv0


def find_real_pyatc() -> str | None:
    """Where CANN's own ``ge.pyatc`` is, when a real CANN ``ge`` package is installed; else None.

    Only the path is searched (gebench's ``ge`` alias is never consulted), so gebench's facade is never taken for
    the real one. A real ``ge`` already imported into this process counts as well.
    """
    loaded = sys.modules.get("ge")
    if loaded is not None and getattr(loaded, "__name__", None) != "gebench.ge":
        locations = list(getattr(loaded, "__path__", []) or [])
    else:
        spec = importlib.machinery.PathFinder.find_spec("ge")
        if spec is None or spec.submodule_search_locations is None:
            return None
        locations = list(spec.submodule_search_locations)
    ours = str(Path(__file__).resolve().parents[1] / "ge")
    locations = [loc for loc in locations if str(Path(loc).resolve()) != ours]
    found = importlib.machinery.PathFinder.find_spec("ge.pyatc", locations) if locations else None
    return None if found is None else str(found.origin)


def run_pyatc(argv: list[str], *, prog: str = "pyatc") -> int:
    """``ge.pyatc`` / ``gebench pyatc``: atc's command line ``argv`` run in a Python process; returns atc's exit code.

    With CANN's own ``ge.pyatc`` installed, that one runs (in a fresh interpreter, so it gets CANN's ``ge`` and not
    gebench's); otherwise ``gebench atc`` does (which itself hands over to CANN's ``atc`` program when there is
    one). ``ASCEND_GE_PY_PASS_PATH`` and ``DUMP_GE_GRAPH`` work as with ``atc``.
    """
    real = find_real_pyatc()
    if real is not None:
        _log.info("CANN's ge.pyatc found at %s; running it", real)
        return subprocess.call([sys.executable, "-m", "ge.pyatc", *argv])
    parser = argparse.ArgumentParser(
        prog=prog, description="ATC's command line in Python: " + _ATC_HELP,
        epilog=_ATC_EXAMPLES.replace("gebench atc", prog), formatter_class=argparse.RawDescriptionHelpFormatter)
    handler = setup_atc(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2), already printed by argparse
        return int(exc.code or 0)
    return int(handler(args))


def _setup_pyatc(parser: argparse.ArgumentParser) -> Any:
    handler = setup_atc(parser)

    def run(args: argparse.Namespace) -> int:
        if find_real_pyatc() is not None:
            return run_pyatc(_atc_argv(args))
        return int(handler(args))

    return run


def register() -> None:
    """Add ``atc`` and ``pyatc`` to the ``gebench`` command line (:mod:`gebench.cli` registers them when imported;
    this puts them back after a plugin replaced them)."""
    from gebench.cli import _register_builtins

    _register_builtins("atc", "pyatc")
