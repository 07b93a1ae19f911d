"""Backends that turn a compiled graph into something runnable.

* ``reference`` (default): gebench itself. The graph runs on the numpy reference executor
  (:func:`gebench.exec.execute`); ``build`` writes the graph as an AIR file, since there is no device model to make.
* ``ascend``: CANN's ``atc`` compiler, found on ``PATH`` or under ``ASCEND_PATH`` (also ``ASCEND_HOME_PATH`` and
  ``ASCEND_TOOLKIT_HOME``, which CANN's ``set_env.sh`` exports). Either the finished graph is exported as AIR and
  compiled with ``atc --framework=1``, or the original model is handed to ``atc`` with ``ASCEND_GE_PY_PASS_PATH``
  set to the same pass files, so the real GE applies the same passes.

Without CANN, :class:`CannNotFoundError` says what was looked for and how to install it.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gebench import ir

__all__ = [
    "BACKENDS",
    "build_from_args",
    "AscendBackend",
    "BackendError",
    "BuildResult",
    "CannNotFoundError",
    "ReferenceBackend",
    "atc_search_paths",
    "cann_missing_message",
    "find_atc",
    "get_backend",
    "run_atc",
    "FRAMEWORKS",
]

_log = logging.getLogger(__name__)

#: atc's ``--framework`` values.
FRAMEWORKS = {0: "caffe", 1: "mindspore (AIR)", 3: "tensorflow", 5: "onnx"}
#: Environment variables that may point at a CANN install, in the order they are tried.
_CANN_ROOT_VARS = ("ASCEND_PATH", "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")
#: Where ``atc`` sits below a CANN root in the layouts CANN has used.
_ATC_RELATIVE = ("bin/atc", "compiler/bin/atc", "latest/compiler/bin/atc", "atc/bin/atc", "latest/bin/atc",
                 "ascend-toolkit/latest/compiler/bin/atc", "ascend-toolkit/latest/bin/atc")


class BackendError(RuntimeError):
    """A backend could not build; the message says which step, with what command, and the tool's output."""


class CannNotFoundError(BackendError):
    """CANN's ``atc`` is not installed where gebench looks; the message lists the places tried."""


@dataclasses.dataclass(frozen=True)
class BuildResult:
    """What a backend build produced.

    Attributes:
        backend: ``"reference"`` or ``"ascend"``.
        outputs: files written (AIR, and the ``.om`` that atc made when it made one).
        command: the atc command line run (None for the reference backend).
        returncode: atc's exit code (0 for the reference backend).
        log: atc's standard output and error.
    """

    backend: str
    outputs: list[Path]
    command: list[str] | None = None
    returncode: int = 0
    log: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def atc_search_paths(env: Mapping[str, str] | None = None) -> list[Path]:
    """The candidate ``atc`` locations under the CANN root variables, in search order (``PATH`` comes first and
    is searched separately)."""
    env = os.environ if env is None else env
    out = []
    for var in _CANN_ROOT_VARS:
        root = env.get(var)
        if root:
            out.extend(Path(root) / rel for rel in _ATC_RELATIVE)
    return out


def find_atc(env: Mapping[str, str] | None = None) -> Path | None:
    """CANN's ``atc``: first on ``PATH``, then under ``ASCEND_PATH``/``ASCEND_HOME_PATH``/``ASCEND_TOOLKIT_HOME``.

    Cheap (a few ``stat`` calls); returns None when there is none.
    """
    env = os.environ if env is None else env
    found = shutil.which("atc", path=env.get("PATH", os.defpath))
    if found:
        return Path(found)
    for candidate in atc_search_paths(env):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def cann_missing_message(env: Mapping[str, str] | None = None) -> str:
    """The explanation shown when the ascend backend has no ``atc`` to run."""
    env = os.environ if env is None else env
    roots = [f"{v}={env[v]}" for v in _CANN_ROOT_VARS if env.get(v)]
    where = "PATH" + (" and " + ", ".join(roots) if roots else " (ASCEND_PATH is not set)")
    return (f"the ascend backend needs CANN's atc, which was not found on {where}. Install the CANN toolkit and run "
            "'source <cann install>/set_env.sh' (or set ASCEND_PATH to the install root), or use the reference "
            "backend, which needs no CANN.")


class ReferenceBackend:
    """gebench's own backend: the numpy reference executor; ``build`` writes the graph as AIR."""

    name = "reference"

    def available(self, env: Mapping[str, str] | None = None) -> bool:  # noqa: ARG002 - same signature as ascend
        return True

    def build(self, graph: ir.Graph, *, output: str | os.PathLike[str], **_: Any) -> BuildResult:
        """Write ``<output>.air`` (``output`` may already end in ``.air``).

        Raises:
            gebench.io.GeDumpError: the graph holds an attr GE cannot store, or the file cannot be written.
        """
        from gebench.io import save_air

        path = save_air(graph, _air_path(output))
        return BuildResult(self.name, [path])

    def execute(self, graph: ir.Graph, inputs: Any = None, **kwargs: Any) -> Any:
        """Run ``graph`` on the reference executor (see :func:`gebench.exec.execute`)."""
        from gebench.exec import execute

        return execute(graph, inputs, **kwargs)


class AscendBackend:
    """CANN's ``atc`` (offline model compiler). ``build`` needs ``atc``; nothing here runs without it."""

    name = "ascend"

    def available(self, env: Mapping[str, str] | None = None) -> bool:
        return find_atc(env) is not None

    def build(
        self,
        graph: ir.Graph | None,
        *,
        output: str | os.PathLike[str],
        soc_version: str,
        source_model: str | os.PathLike[str] | None = None,
        framework: int | None = None,
        pass_path: str | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> BuildResult:
        """Compile with atc.

        With ``source_model`` None, ``graph`` is exported to ``<output>.air`` and compiled with
        ``atc --model=<air> --framework=1``. With ``source_model`` (an ONNX file by default, ``framework=5``),
        atc compiles that model itself with ``ASCEND_GE_PY_PASS_PATH=pass_path``, so GE runs the same passes.
        atc writes ``<output>.om``.

        Raises:
            CannNotFoundError: no atc (the message says where it was looked for).
            BackendError: atc could not be started or timed out. A non-zero exit is not raised: it is
                ``BuildResult.returncode`` with atc's log.
        """
        env = dict(os.environ if env is None else env)
        atc = find_atc(env)
        if atc is None:
            raise CannNotFoundError(cann_missing_message(env))
        if not soc_version:
            raise BackendError("atc needs --soc_version (for example Ascend910B1); pass soc_version=...")
        outputs: list[Path] = []
        if source_model is None:
            if graph is None:
                raise BackendError("AscendBackend.build: give a graph to export or a source_model for atc")
            from gebench.io import save_air

            model = save_air(graph, _air_path(output))
            outputs.append(model)
            framework = 1
        else:
            model = Path(source_model)
            framework = 5 if framework is None else framework
            if pass_path is not None:
                env["ASCEND_GE_PY_PASS_PATH"] = pass_path
        command = [str(atc), f"--model={model}", f"--framework={framework}", f"--soc_version={soc_version}",
                   f"--output={_strip_om(output)}", *extra_args]
        result = run_atc(command, env=env, timeout=timeout)
        om = Path(_strip_om(output) + ".om")
        if om.is_file():
            outputs.append(om)
        return BuildResult(self.name, outputs, command, result.returncode, result.stdout + result.stderr)


def run_atc(command: Sequence[str], *, env: Mapping[str, str] | None = None,
            timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """Run an atc command line, capturing its output.

    Raises:
        BackendError: atc could not be started or did not finish within ``timeout`` seconds.
    """
    _log.info("running %s", " ".join(command))
    try:
        return subprocess.run(list(command), env=dict(env) if env is not None else None, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except OSError as exc:
        raise BackendError(f"cannot start {command[0]}: {exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise BackendError(f"{command[0]} did not finish within {timeout} s") from exc


def _air_path(output: str | os.PathLike[str]) -> Path:
    text = os.fspath(output)
    return Path(text if text.endswith(".air") else _strip_om(text) + ".air")


def _strip_om(output: str | os.PathLike[str]) -> str:
    text = os.fspath(output)
    for ext in (".om", ".air"):
        if text.endswith(ext):
            return text[: -len(ext)]
    return text


#: Backends by name.
BACKENDS: dict[str, type] = {"reference": ReferenceBackend, "ascend": AscendBackend}


def get_backend(name: str = "reference") -> ReferenceBackend | AscendBackend:
    """A backend by name.

    Raises:
        ValueError: an unknown name (the message lists the known ones).
    """
    try:
        return BACKENDS[name]()
    except KeyError:
        raise ValueError(f"unknown backend {name!r}; choose one of {sorted(BACKENDS)}") from None


def build_from_args(args: Any, graph: ir.Graph, *, model_path: str | os.PathLike[str] | None = None,
                    pass_path: str | None = None) -> BuildResult | None:
    """Run the backend chosen by the flags of ``gebench compile`` (``gebench.cli._backend_args``) on the compiled ``graph``.

    Returns None when no ``--output`` was given with the reference backend (nothing to write).

    Raises:
        CannNotFoundError: ``--backend ascend`` without CANN.
        BackendError: a missing ``--soc-version``/``--output`` for ascend, or atc could not start.
    """
    backend = get_backend(args.backend)
    if isinstance(backend, ReferenceBackend):
        return None if args.output is None else backend.build(graph, output=args.output)
    if args.output is None or args.soc_version is None:
        raise BackendError("--backend ascend needs --soc-version and --output")
    if args.atc_on_model:
        if model_path is None:
            raise BackendError("--atc-on-model needs the original model file")
        return backend.build(None, output=args.output, soc_version=args.soc_version, source_model=model_path,
                             framework=1 if os.fspath(model_path).endswith(".air") else 5, pass_path=pass_path)
    return backend.build(graph, output=args.output, soc_version=args.soc_version)
