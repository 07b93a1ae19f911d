"""The layers of ``docs/architecture.md`` hold: imports run one way, top to bottom.

``ge`` (the facade), ``api``, ``cli``, ``viz``, ``debug``, ``sweep`` and ``compare`` sit on top of the core
``fusion`` and of ``exec`` and ``io`` beside it (``exec`` may import ``io``, nothing else of the three imports
another), which sit on top of ``ops`` and ``ir``. Every import counts, also one inside a function and one spelled as
a string for ``importlib.import_module``/``__import__``: the core reaches the layers above only through the
protocols it declares (``fusion.plugins.api.PassApi``, ``fusion.run_tools.RunTools``), which ``import gebench``
fills, and ``api`` reads ``io``'s readers (``gebench.io.FILE_LOADERS``) rather than ``io`` registering them.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "gebench"

#: The top layer: nothing in the core, in exec and io or below them may import it.
TOP = ("gebench.ge", "gebench.api", "gebench.cli", "gebench.viz", "gebench.debug", "gebench.sweep",
       "gebench.compare", "ge")
#: Packages above the core (the top layer, and exec and io beside the core): the core does not import them.
UPPER = (*TOP, "gebench.exec", "gebench.io")
#: lower package -> what it must not import
FORBIDDEN = {
    "gebench.fusion": UPPER,
    "gebench.exec": (*TOP, "gebench.fusion"),
    "gebench.io": (*TOP, "gebench.fusion", "gebench.exec"),
    "gebench.ops": (*UPPER, "gebench.fusion"),
    "gebench.ir": (*UPPER, "gebench.fusion", "gebench.ops"),
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, name: str | None = None) -> list[tuple[int, str]]:
    """(line, module) for every import in ``path`` (the module ``name``, by default its name in gebench):
    statements anywhere (module level or in a function, relative ones resolved, ``from m import x`` also as
    ``m.x``) and string arguments of ``importlib.import_module`` / ``__import__``."""
    name = _module_name(path) if name is None else name
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            out.append((node.lineno, module))
            out.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__"):
                target = node.args[0].value
                if target.startswith(".") and len(node.args) > 1:  # import_module(".x", __name__)
                    target = package + target
                out.append((node.lineno, target))
    return out


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def _violations(lower: str, forbidden: tuple[str, ...]) -> list[str]:
    found = []
    for path in sorted((PKG / lower.split(".", 1)[1]).rglob("*.py")):
        for line, module in _imports(path):
            for banned in forbidden:
                if _within(module, banned):
                    found.append(f"{path.relative_to(PKG.parent)}:{line} imports {module} ({banned} is above "
                                 f"{lower})")
    return found


@pytest.mark.parametrize("lower", sorted(FORBIDDEN))
def test_lower_layers_do_not_import_upper_ones(lower: str) -> None:
    assert _violations(lower, FORBIDDEN[lower]) == []


def test_the_checker_sees_lazy_relative_and_string_imports(tmp_path: Path) -> None:
    sample = tmp_path / "probe.py"
    sample.write_text("def f():\n    from gebench.debug import replay\n    import importlib\n"
                      "    importlib.import_module('gebench.exec.equivalence')\n    from ..ge import passes\n"
                      "    from . import ledger\n",
                      encoding="utf-8")
    found = {(line, m) for line, m in _imports(sample, "gebench.fusion.probe") if any(_within(m, u) for u in UPPER)}
    assert {line for line, _ in found} == {2, 4, 5}
    assert (5, "gebench.ge.passes") in found and (4, "gebench.exec.equivalence") in found


def test_pass_plugin_modules_import_only_those_listed_before_them() -> None:
    """``fusion/plugins``: one module per concern, in the order its docstring lists them (no cycles)."""
    order = ["descriptor", "registry", "session", "api", "scan", "load", "changes", "watch", "reload"]
    for i, name in enumerate(order):
        later = {f"gebench.fusion.plugins.{n}" for n in order[i + 1:]}
        path = PKG / "fusion" / "plugins" / f"{name}.py"
        tree = ast.parse(path.read_text(encoding="utf-8"))
        type_checking = [n for n in ast.walk(tree) if isinstance(n, ast.If)
                         and getattr(n.test, "id", "") == "TYPE_CHECKING"]
        hinted = {id(s) for block in type_checking for s in ast.walk(block)}
        bad = [m for line, m in _imports(path) if any(_within(m, x) for x in later)
               and not any(getattr(s, "lineno", None) == line and id(s) in hinted for s in ast.walk(tree))]
        assert bad == [], f"fusion/plugins/{name}.py imports {bad}, listed after it"


def test_import_gebench_loads_no_layer_until_asked() -> None:
    """``import gebench`` wires the protocols without importing the facade's pass API, the runtime or numpy."""
    code = ("import sys, gebench\n"
            "loaded = [m for m in ('gebench.ge.passes', 'gebench.fusion.runtime', 'gebench.exec', 'gebench.debug',"
            " 'numpy') if m in sys.modules]\n"
            "print(','.join(loaded))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == ""


def test_the_facade_provides_the_core_protocols() -> None:
    import gebench  # noqa: F401 - the composition root
    from gebench.fusion.plugins import api, descriptor, registry
    from gebench.fusion.run_tools import run_tools
    from gebench.fusion.runtime import STAGE_ORDER
    from gebench.ge.graph import Graph
    from gebench.ge.passes import registry as ge_registry
    from gebench.ge.passes._native import MatchResult

    provided = api.pass_api()
    assert [s.value for s in provided.stages] == list(STAGE_ORDER)
    assert provided.graph_type is Graph and provided.match_result_type is MatchResult
    assert callable(run_tools().graph_after_rewrite)
    # ge.passes adapts GE's names onto the core's objects: the same classes, the same global registry
    assert ge_registry.PassDescriptor is descriptor.PassDescriptor
    assert ge_registry.PassRegistry is registry.PassRegistry
    assert ge_registry.global_registry() is registry.global_registry()


def test_a_slot_makes_its_implementation_once_and_says_when_nothing_fills_it() -> None:
    import threading

    from gebench.fusion._provided import NotProvidedError, Provided

    slot: Provided[object] = Provided("probe")
    assert not slot.is_provided
    with pytest.raises(NotProvidedError, match="probe"):
        slot.get()
    made: list[object] = []

    def factory() -> object:
        made.append(object())
        return made[-1]

    slot.provide(factory)
    got: list[object] = []
    threads = [threading.Thread(target=lambda: got.append(slot.get())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 1 and all(g is made[0] for g in got)


def test_io_imports_no_layer_above_it_and_api_reads_its_readers(tmp_path: Path, monkeypatch) -> None:
    """``import gebench.io`` loads nothing of ``api``, the facade, the core or the layers above beyond what
    ``import gebench`` (the composition root) loads; ``gebench.load`` finds io's readers in
    ``gebench.io.FILE_LOADERS`` by itself, and a loader registered with ``gebench.register_loader`` replaces one."""
    code = ("import sys, gebench\n"
            "before = set(sys.modules)\n"
            "import gebench.io\n"
            "above = ('gebench.api', 'gebench.ge', 'gebench.fusion', 'gebench.exec', 'gebench.cli', 'gebench.viz',"
            " 'gebench.debug', 'gebench.sweep', 'gebench.compare', 'ge')\n"
            "print(','.join(sorted(m for m in set(sys.modules) - before if m.split('.')[0] == 'ge'"
            " or any(m == a or m.startswith(a + '.') for a in above))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == ""

    import gebench
    from gebench import api, io, ir

    assert set(io.FILE_LOADERS) == {".onnx", ".air", ".pbtxt", ".txt"}
    model = PKG.parent / "assets" / "add_zero.onnx"
    assert gebench.load(model).find_node_by_name("add_zero").type == "Add"  # io's ONNX reader
    monkeypatch.setitem(api._LOADERS, ".onnx", lambda path: ir.parse_text("graph mine\n"))
    assert gebench.load(model).name == "mine"  # a registered loader wins over io's
    monkeypatch.undo()
    assert gebench.load(model).name != "mine"


def test_ges_stage_and_dump_names_have_one_home() -> None:
    """``fusion/stages.py`` holds GE's stage and dump-point names; the runtime re-exports them, and exec (beside the
    core, so it cannot import them) keeps an equal copy."""
    from gebench.exec import equivalence
    from gebench.fusion import runtime, stages

    assert (runtime.STAGE_ORDER, runtime.DUMP_SUFFIXES, runtime.PRE_RUN_SUFFIX) == (
        stages.STAGE_ORDER, stages.DUMP_SUFFIXES, stages.PRE_RUN_SUFFIX)
    assert runtime.DUMP_SUFFIXES is stages.DUMP_SUFFIXES
    assert tuple(stages.DUMP_SUFFIXES) == stages.STAGE_ORDER
    assert equivalence._STAGE_ORDER == stages.DUMP_ORDER
    names = {"other": 0, "RunCustomPassAfterOriginGraphOptimize": 1, "PreRunBegin": 2,
             "RunCustomPassBeforeInfershape": 3}
    assert list(stages.in_dump_order(names)) == ["PreRunBegin", "RunCustomPassBeforeInfershape",
                                                 "RunCustomPassAfterOriginGraphOptimize", "other"]
    assert [m for _, m in _imports(PKG / "fusion" / "stages.py") if m.startswith("gebench")] == []
