"""Write the golden outputs of the bundled models, example passes and notebooks (``tests/golden/``).

``tests/test_golden_outputs.py`` runs this script again with the current code into a temporary folder and
compares every file byte for byte with the committed ones: graphs, ledgers and GE dumps must not change when
only gebench's internals do (speed work, refactors).

Usage::

    python scripts/gen_golden_outputs.py --out tests/golden          # regenerate the committed files
    python scripts/gen_golden_outputs.py --out /tmp/x --raw          # every file as is, nothing hashed

When to regenerate: only for an intended change of what gebench outputs (a GE fidelity fix, a new dump
field, a changed example pass, model or notebook pass), in the same commit as that change, and say why in the
commit message. Never regenerate to make a failing comparison pass: a difference after a change meant to
keep behaviour is a bug in that change.

The committed files were made from commit e11a530 (the code before the snapshot-journal, copy-on-write,
import/dump, inference and matcher speed work) with the one intended output change made since applied on top:
418ffd8 (ledger records of a pass that keeps a default hook name the pass class, ``<ROOT>/passes/x.py:13``, not
gebench's ``ge/passes/base.py``). Its two conflicts with e11a530: in ``gebench/fusion/runtime.py`` keep
e11a530's backup copy in ``_run_fusion_base_pass`` with 418ffd8's ``_hook_source(type(instance), "run")``; in
``gebench/ge/graph/node.py`` keep e11a530's setters and call 418ffd8's ``_note_change(node, what)`` in each just
before it changes the node::

    git worktree add /tmp/gebench_base e11a530
    cd /tmp/gebench_base && git cherry-pick -n 418ffd8      # then resolve the two conflicts as said
    PYTHONPATH=/tmp/gebench_base python <checkout>/scripts/gen_golden_outputs.py --root <checkout> \
        --out <checkout>/tests/golden
    cd <checkout> && git worktree remove --force /tmp/gebench_base

The script logs which gebench it imported (``gebench from ...``): check it is the worktree's.

Cases (one folder each):

* ``model_<stem>``: each ``assets/*.onnx`` compiled with the example passes of ``passes/`` (what
  ``notebooks/01_quickstart.ipynb`` runs on ``small_transformer.onnx``);
* ``nb02_*`` .. ``nb05_*``: the other notebooks' compiles, with their pass files (copied here verbatim from
  the notebooks' cells; keep them in step when a notebook's pass changes);
* ``nb06_*``: what ``notebooks/06_sweep.ipynb`` compiles besides the bundled models: onnx's "light" models
  (from the installed onnx package) with the example passes, and ``small_transformer`` with the notebook's
  edit of ``remove_identity_pass.py``; these keep only ``model.sha256``, the graph, snapshots and report.

Files of a case:

* ``model.sha256``: the input model file's sha256 (an input that changed explains every other difference);
* ``graph.gir``: ``ir.to_text(run.ir_graph)``; ``snapshot_<n>_<GE dump name>.gir``: each of
  ``run.ir_snapshots`` in the IR text form;
* ``report.json``: ``run.report()`` (status, passes, per-pass results, summary, snapshot sizes and the whole
  ledger including near misses), as ``gebench compile --report`` writes it;
* ``cli.txt``: the exit code and standard output of ``gebench compile MODEL --passes P --dump-dir D
  --report R``; ``cli_report.json``: its report; ``dumps/``: the GE dump files it wrote (ge_proto and ge_onnx,
  GE's default formats and level); ``readable/``: the ge_readable dumps of the same snapshots;
* ``from_loaded_graph/``: the same compile of ``gebench.load(model)`` (a graph object, compiled on a copy, as
  notebooks 01 and 03 do), with ``input_after_compile.gir``, the loaded graph after that compile (it must not
  change; a built graph's case has that file at its top);
* ``staged/``: the ``RunCustomPassBeforeInfershape`` snapshot compiled again with the later stages only (the
  workbench's re-run from a cached snapshot), with ``source_after_compile.gir``, that snapshot afterwards;
* ``after_all/``: the first compile's graph and snapshots read again after all of the above;
* ``nb05_*`` also reads its ge_proto dumps back (``loaded_<GE dump name>.gir``) and compiles the first one, as
  the notebook does (``from_dump/``).

Normalised (the only nondeterministic parts; everything else is written as gebench produced it):

* absolute paths: the checkout (``<ROOT>``), the gebench package directory (``<GEBENCH>``) and the
  temporary working folder of the run (``<WORK>``) are replaced by these placeholders;
* line numbers in gebench's own files (``<GEBENCH>/ge/passes/base.py:<LINE>``, where a pass keeps a default
  hook): they move with any edit of gebench; the file named is kept;
* the hash in loaded pass modules' names (``_ge_py_pass_<stem>_<abs(hash(path))>``, salted per process)
  becomes ``_ge_py_pass_<stem>_<HASH>``;
* object addresses in reprs (``0x7f...``) become ``0x<ADDR>``.

No timings are written. The run sets no ``DUMP_*``/``ASCEND_GE_PY_PASS_PATH`` variables (they are removed),
and the script always runs with ``PYTHONHASHSEED=0`` (it re-executes itself with it), in a fresh process:
no earlier work in the process can shift a counter or a set order.

Storage: a file of at most ``--max-inline`` bytes (default 16 KiB) is kept as is; a larger one is kept
gzip-compressed (``<name>.gz``, still compared on its uncompressed bytes) when that is at most
``--max-inline`` bytes, else only its sha256; a file equal to an earlier one of its case is stored once.
``MANIFEST.json`` of each case lists every file with its size and sha256, so each file is compared in full
either way; the stored copies give the diff of a failure.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import io
import json
import logging
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_log = logging.getLogger("gen_golden_outputs")

#: The checkout this script belongs to (models in assets/, example passes in passes/).
DEFAULT_ROOT = Path(__file__).resolve().parents[1]
#: Files above this many bytes are stored gzip-compressed, or as a sha256 only.
DEFAULT_MAX_INLINE = 16 * 1024
MANIFEST = "MANIFEST.json"
#: ``PYTHONHASHSEED`` of every generation (the script re-executes itself with it when it differs).
HASH_SEED = "0"
#: Environment variables that change what a compile or a dump writes; removed for the run.
_ENV_REMOVED = ("ASCEND_GE_PY_PASS_PATH", "DUMP_GE_GRAPH", "DUMP_GRAPH_FORMAT", "DUMP_GRAPH_LEVEL",
                "DUMP_GRAPH_PATH", "NPU_COLLECT_PATH")

# ------------------------------------------------------------------------------------------ notebook passes
# verbatim from the notebooks' cells (notebooks/02..05); see the module docstring

NB02_FUSE_MATMUL_ADD = '''from ge.es.all import GEMM, MatMul
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="FuseMatMulAdd", stage=PassStage.BEFORE_INFER_SHAPE)
class FuseMatMulAdd(PatternFusionPass):
    @pattern
    def matmul_add(self, inputs):
        a, b, c = inputs[:3]
        return MatMul(a, b) + c

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        a, b, c = inputs[:3]
        return GEMM(a, b, c, 1.0, 1.0)
'''

NB03_SPLIT_GROUPED_CONV = '''from ge.es import GraphBuilder
from ge.es.all import Conv2D, ConcatV2, Split
from ge.passes import DecomposePass, PassStage, infer_shape, register_decompose_pass


@register_decompose_pass(name="SplitGroupedConv", stage=PassStage.AFTER_INFER_SHAPE, op_types=["Conv2D"])
class SplitGroupedConv(DecomposePass):
    def meet_requirements(self, node):
        return node.get_attr("groups") != 1 and node.get_attr("data_format") == "NCHW"

    def replacement(self, node):
        groups = node.get_attr("groups")
        builder = GraphBuilder("replacement")
        x, w, bias = builder.create_inputs(3)
        xs = Split(1, x, groups, num_split=groups)
        ws = Split(0, w, groups, num_split=groups)
        bs = Split(0, bias, groups, num_split=groups)
        convs = [Conv2D(xs[i], ws[i], bs[i], None, strides=node.get_attr("strides"), pads=node.get_attr("pads"),
                        dilations=node.get_attr("dilations"), groups=1, data_format="NCHW")
                 for i in range(groups)]
        graph = builder.build_and_reset([ConcatV2(convs, 1, N=groups)])
        infer_shape(graph, node)
        return graph
'''

NB04_REMOVE_ADD_ZERO = '''from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="RemoveAddZero", stage=PassStage.BEFORE_INFER_SHAPE)
class RemoveAddZero(PatternFusionPass):
    # 1. the pattern: any tensor (inputs[0]) plus a constant. `+ 0` builds an Add whose second input is a
    #    Const; by default only the op types are compared, not the constant\'s value.
    @pattern
    def add_zero(self, inputs):
        return inputs[0] + 0

    # 2. meet_requirements: look at what matched and say yes only when the constant is all zeros.
    def meet_requirements(self, match_result):
        for node in match_result.get_matched_nodes():
            if node.type == "Const":
                data = node.get_attr("value").data
                values = data if isinstance(data, list) else [data]
                return all(v == 0 for v in values)
        return False

    # 3. the replacement: a graph with the same inputs and outputs as the pattern; here it passes the
    #    input straight through, so the Add disappears.
    def replacement(self, inputs):
        return inputs[0]
'''

NB05_FUSE_BATCH_MATMUL_ADD = '''from ge.es.all import BatchMatMulV2, GEMM
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="FuseBatchMatMulV2Add", stage=PassStage.BEFORE_INFER_SHAPE)
class FuseBatchMatMulV2Add(PatternFusionPass):
    @pattern
    def matmul_add(self, inputs):
        a, b, c = inputs[:3]
        return BatchMatMulV2(a, b) + c

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        a, b, c = inputs[:3]
        return GEMM(a, b, c, 1.0, 1.0)
'''


def _nb02_fixed() -> str:
    """notebooks/02: the pass after the fix (MatMul -> BatchMatMulV2), as the notebook edits it."""
    return (NB02_FUSE_MATMUL_ADD.replace("import GEMM, MatMul", "import GEMM, BatchMatMulV2")
            .replace("MatMul(a, b) + c", "BatchMatMulV2(a, b) + c"))


def _nb04_relu_zero() -> str:
    """notebooks/04: the boundary-violation variant of RemoveAddZero, derived as the notebook derives it."""
    text = (NB04_REMOVE_ADD_ZERO.replace("RemoveAddZero", "RemoveReluAddZero")
            .replace("return inputs[0] + 0", "return Relu(inputs[0]) + 0")
            .replace("return inputs[0]\n", "return Relu(inputs[0])\n"))
    return "from ge.es.all import Relu\n" + text


def _nb04_escape_graph() -> Any:
    """notebooks/04: a Relu whose output leaves the would-be match (``[r + 0, Sigmoid(r)]``)."""
    from ge.es.all import Relu, Sigmoid
    from ge.es.graph_builder import GraphBuilder

    b = GraphBuilder("escape")
    x = b.create_input(0, shape=[2, 8])
    r = Relu(x)
    return b.build_and_reset([r + 0, Sigmoid(r)])


# ------------------------------------------------------------------------------------------ normalisation
_MODULE_HASH = re.compile(r"(_ge_py_pass_[A-Za-z0-9_]*?)_\d+\b")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")
_GEBENCH_LINE = re.compile(r"(<GEBENCH>/[^\s\"':]+\.py):\d+")


class Normaliser:
    """Replaces the nondeterministic parts of an output text (see the module docstring)."""

    def __init__(self, root: Path, work: Path) -> None:
        import gebench

        places = {
            "<GEBENCH>": Path(gebench.__file__).resolve().parent,
            "<ROOT>": root.resolve(),
            "<WORK>": work.resolve(),
        }
        pairs: list[tuple[str, str]] = []
        for token, path in places.items():
            for form in {str(path), os.path.realpath(path), os.path.abspath(path)}:
                pairs.append((form, token))
        # longest first: the work folder or the package may lie inside the checkout
        self._pairs = sorted(set(pairs), key=lambda p: len(p[0]), reverse=True)

    def text(self, text: str) -> str:
        for path, token in self._pairs:
            text = text.replace(path, token)
        text = _GEBENCH_LINE.sub(r"\1:<LINE>", text)
        text = _MODULE_HASH.sub(r"\1_<HASH>", text)
        return _ADDRESS.sub("0x<ADDR>", text)


# ------------------------------------------------------------------------------------------ cases
@dataclass
class Case:
    """One golden folder: ``model`` (a path or a callable making a graph) compiled with ``passes``."""

    name: str
    model: Path | Callable[[], Any]
    passes: list[Path] | None = None
    #: pass files to write into a fresh folder of the work dir: file name -> source
    pass_files: dict[str, str] | None = None
    #: also read the ge_proto dumps back and compile the first one (notebooks/05)
    dump_round_trip: bool = False
    #: every output; False: only the compile's graph, snapshots and report (models from elsewhere)
    full: bool = True


def cases(root: Path) -> list[Case]:
    """The golden cases for the checkout at ``root``."""
    assets = root / "assets"
    out = [Case(f"model_{p.stem}", p, passes=[root / "passes"]) for p in sorted(assets.glob("*.onnx"))]
    out += [
        Case("nb02_matmul_add_near_miss", assets / "matmul_add.onnx",
             pass_files={"fuse_matmul_add.py": NB02_FUSE_MATMUL_ADD}),
        Case("nb02_matmul_add_fixed", assets / "matmul_add.onnx",
             pass_files={"fuse_matmul_add.py": _nb02_fixed()}),
        Case("nb03_grouped_conv_decompose", assets / "grouped_conv.onnx",
             pass_files={"split_grouped_conv.py": NB03_SPLIT_GROUPED_CONV}),
        Case("nb04_add_zero", assets / "add_zero.onnx", pass_files={"remove_add_zero.py": NB04_REMOVE_ADD_ZERO}),
        Case("nb04_matmul_add_rejected", assets / "matmul_add.onnx",
             pass_files={"remove_add_zero.py": NB04_REMOVE_ADD_ZERO}),
        Case("nb04_boundary_violation", _nb04_escape_graph,
             pass_files={"remove_relu_add_zero.py": _nb04_relu_zero()}),
        Case("nb05_ge_dumps", assets / "matmul_add.onnx", pass_files={"fuse.py": NB05_FUSE_BATCH_MATMUL_ADD},
             dump_round_trip=True),
    ]
    # notebooks/06: the sweep's other models (onnx's bundled "light" CNNs), and small_transformer with the
    # edited copy of the example passes
    edited = {p.name: p.read_text(encoding="utf-8") for p in sorted((root / "passes").glob("*.py"))}
    edited["remove_identity_pass.py"] = edited["remove_identity_pass.py"].replace(
        "        for node in identities:", "        for node in identities[1:]:")
    out.append(Case("nb06_small_transformer_edited_passes", assets / "small_transformer.onnx", pass_files=edited,
                    full=False))
    out += [Case(f"nb06_{p.stem}", p, passes=[root / "passes"], full=False) for p in light_models()]
    return out


def light_models() -> list[Path]:
    """onnx's bundled "light" models (AlexNet, ResNet-50, DenseNet-121, ...) that notebooks/06 sweeps."""
    import importlib.util

    spec = importlib.util.find_spec("onnx")  # its files only: importing onnx is gebench.io's business
    if spec is None or spec.origin is None:
        return []
    return sorted((Path(spec.origin).parent / "backend" / "test" / "data" / "light").glob("*.onnx"))


def _snapshot_files(run: Any) -> Iterator[tuple[str, Any]]:
    for i, (suffix, graph) in enumerate(run.ir_snapshots.items()):
        yield f"snapshot_{i}_{suffix}.gir", graph


def _report_text(report: dict[str, Any]) -> str:
    report = {k: v for k, v in report.items() if k != "timing"}  # times differ from run to run
    return json.dumps(report, indent=1, default=str, sort_keys=False) + "\n"


def _cli_report_text(text: str) -> str:
    """The CLI's report (``json.dumps(indent=1)``) without its timing table."""
    report = json.loads(text)
    report.pop("timing", None)
    return json.dumps(report, indent=1, default=str)


def _compile_outputs(run: Any, put: Callable[[str, str], None], prefix: str = "") -> None:
    from gebench import ir

    put(f"{prefix}graph.gir", ir.to_text(run.ir_graph))
    for name, graph in _snapshot_files(run):
        put(f"{prefix}{name}", ir.to_text(graph))
    put(f"{prefix}report.json", _report_text(run.report()))


def _run_cli(argv: list[str]) -> tuple[int, str]:
    """``gebench`` in this process: (exit code, standard output). Standard error is left alone."""
    from gebench import cli

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli.main(argv)
    return code, buf.getvalue()


def run_case(case: Case, work: Path, put: Callable[[str, str], None]) -> None:
    """Produce every output file of ``case`` through ``put(relative name, text)``."""
    import gebench
    from gebench import ir
    from gebench.fusion.runtime import DUMP_SUFFIXES, STAGE_ORDER
    from gebench.io import load_ge_dump, write_dumps

    passes = list(case.passes or [])
    if case.pass_files:
        pass_dir = work / "passes"
        pass_dir.mkdir()
        for name, text in case.pass_files.items():
            (pass_dir / name).write_text(text, encoding="utf-8")
        passes.append(pass_dir)
    model = case.model() if callable(case.model) else case.model
    if isinstance(model, Path):  # the input itself: a changed model file explains every other difference
        put("model.sha256", f"{hashlib.sha256(model.read_bytes()).hexdigest()}  {model.name}\n")
    run = gebench.compile(model, passes=passes)
    _compile_outputs(run, put)
    if not case.full:
        return
    if not isinstance(model, Path):  # the caller's graph object: compile works on a copy
        put("input_after_compile.gir", ir.to_text(gebench.load(model).ir))
    readable = work / "readable"
    write_dumps(run.ir_snapshots, readable, formats=("readable",))
    for path in sorted(readable.iterdir()):
        put(f"readable/{path.name}", path.read_text(encoding="utf-8"))

    if isinstance(model, Path):
        dump_dir, report = work / "dumps", work / "cli_report.json"
        code, stdout = _run_cli(["compile", str(model), "--passes", os.pathsep.join(map(str, passes)),
                                 "--dump-dir", str(dump_dir), "--report", str(report)])
        put("cli.txt", f"exit code {code}\n{stdout}")
        put("cli_report.json", _cli_report_text(report.read_text(encoding="utf-8")))
        for path in sorted(dump_dir.iterdir()):
            put(f"dumps/{path.name}", path.read_text(encoding="utf-8"))
        # what notebooks 01 and 03 do: load first, compile the graph object (a copy; the loaded graph stays)
        loaded = gebench.load(model)
        _compile_outputs(gebench.compile(loaded, passes=passes), put, prefix="from_loaded_graph/")
        put("from_loaded_graph/input_after_compile.gir", ir.to_text(loaded.ir))

    # the workbench's re-run of later stages: compile a snapshot with the stages after it
    source = run.ir_snapshots.get(DUMP_SUFFIXES[STAGE_ORDER[0]])
    if source is not None:
        staged = gebench.compile(source, passes=passes, stages=list(STAGE_ORDER[1:]))
        _compile_outputs(staged, put, prefix="staged/")
        put("staged/source_after_compile.gir", ir.to_text(source))
    # the first run's graphs, read again after everything above
    put("after_all/graph.gir", ir.to_text(run.ir_graph))
    for name, graph in _snapshot_files(run):
        put(f"after_all/{name}", ir.to_text(graph))

    if case.dump_round_trip:
        protos = sorted((work / "dumps").glob("ge_proto_*_graph_*_*.txt"))
        for path in protos:
            stage = re.match(r"ge_proto_\d+_graph_\d+_(.+)\.txt", path.name)
            assert stage is not None, path.name
            put(f"loaded_{stage.group(1)}.gir", ir.to_text(load_ge_dump(path)))
        _compile_outputs(gebench.compile(protos[0], passes=passes), put, prefix="from_dump/")


# ------------------------------------------------------------------------------------------ storage
def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def store_case(files: dict[str, bytes], folder: Path, *, max_inline: int | None) -> None:
    """Write ``files`` into ``folder`` with ``MANIFEST.json``; ``max_inline`` None keeps every file as is.

    A file whose bytes equal an earlier file's (in the order they were made) is not stored again: its manifest
    entry names that file (``"same_as"``).
    """
    manifest: dict[str, dict[str, Any]] = {}
    first_by_hash: dict[str, str] = {}
    for name in files:
        data = files[name]
        digest = _sha256(data)
        entry: dict[str, Any] = {"size": len(data), "sha256": digest}
        manifest[name] = entry
        if digest in first_by_hash:
            entry["stored"] = "same_as"
            entry["same_as"] = first_by_hash[digest]
            continue
        first_by_hash[digest] = name
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if max_inline is None or len(data) <= max_inline:
            target.write_bytes(data)
            entry["stored"] = "file"
            continue
        packed = gzip.compress(data, compresslevel=9, mtime=0)
        if len(packed) <= max_inline:
            target.with_name(target.name + ".gz").write_bytes(packed)
            entry["stored"] = "gzip"
        else:
            entry["stored"] = "sha256"
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def read_manifest(folder: Path) -> dict[str, dict[str, Any]]:
    """The ``MANIFEST.json`` of a case folder: file name -> size, sha256 and how it is stored."""
    return json.loads((folder / MANIFEST).read_text(encoding="utf-8"))


def stored_bytes(folder: Path, name: str, manifest: dict[str, dict[str, Any]]) -> bytes | None:
    """The stored content of file ``name`` of a case folder (None when only its sha256 is kept)."""
    entry = manifest[name]
    how = entry.get("stored")
    if how == "same_as":
        return stored_bytes(folder, entry["same_as"], manifest)
    if how == "file":
        return (folder / name).read_bytes()
    if how == "gzip":
        return gzip.decompress((folder / (name + ".gz")).read_bytes())
    return None


def generate(out: Path, root: Path = DEFAULT_ROOT, *, max_inline: int | None = DEFAULT_MAX_INLINE,
             only: list[str] | None = None) -> list[str]:
    """Write every case's folder under ``out`` (replacing those folders); returns the case names."""
    for var in _ENV_REMOVED:
        os.environ.pop(var, None)
    import gebench

    _log.info("gebench from %s", gebench.__file__)
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for case in cases(root):
        if only and case.name not in only:
            continue
        files: dict[str, bytes] = {}
        with tempfile.TemporaryDirectory(prefix="gebench-golden-") as tmp:
            work = Path(tmp)
            norm = Normaliser(root, work)

            def put(name: str, text: str, _files: dict[str, bytes] = files, _norm: Normaliser = norm) -> None:
                if name in _files:
                    raise ValueError(f"output {name!r} written twice")
                _files[name] = _norm.text(text).encode("utf-8")

            run_case(case, work, put)
        folder = out / case.name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        store_case(files, folder, max_inline=max_inline)
        names.append(case.name)
        _log.info("%s: %d files, %d bytes", case.name, len(files), sum(map(len, files.values())))
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the case folders (tests/golden)")
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT,
                        help="checkout whose assets/ and passes/ are compiled (default: this script's)")
    parser.add_argument("--max-inline", type=int, default=DEFAULT_MAX_INLINE,
                        help="bytes above which a file is stored gzip-compressed or as a sha256 only")
    parser.add_argument("--raw", action="store_true", help="store every file as is")
    parser.add_argument("--case", action="append", default=None, help="only this case (repeatable)")
    args = parser.parse_args(argv)
    if argv is None and os.environ.get("PYTHONHASHSEED") != HASH_SEED:
        # set-iteration order of strings must be the same in every run: start again with the seed fixed
        env = {**os.environ, "PYTHONHASHSEED": HASH_SEED}
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    _log.setLevel(logging.INFO)
    generate(args.out, args.root.resolve(), max_inline=None if args.raw else args.max_inline, only=args.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
