"""The op catalogue: data file currency, schema details, ge.es module placement, literals and make_node."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gebench import ir, ops
from gebench.ir import DataType, TensorDesc, TensorValue
from gebench.ops._generate import normalize_spec, render
from gebench.ops._literals import LiteralError, parse_literal

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "scripts" / "spec" / "ge-ops.json"  # the project's copy of the GE op fact sheet
DATA = REPO / "gebench" / "ops" / "data" / "ge_ops.json"


def _spec_text() -> str:
    if not SPEC.is_file():
        pytest.fail(f"the op spec {SPEC} is missing from the checkout (the catalogue data file is generated "
                    "from it)")
    return SPEC.read_text(encoding="utf-8")


def test_data_file_is_current():
    expected = render(normalize_spec(_spec_text()))
    assert DATA.read_text(encoding="utf-8") == expected, (
        "gebench/ops/data/ge_ops.json is stale; run: python scripts/gen_op_catalogue.py")


def test_generator_check_mode_detects_staleness(tmp_path):
    _spec_text()
    script = REPO / "scripts" / "gen_op_catalogue.py"
    ok = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    stale = tmp_path / "ge_ops.json"
    stale.write_text(DATA.read_text(encoding="utf-8").replace('"Relu"', '"ReluX"', 1), encoding="utf-8")
    bad = subprocess.run([sys.executable, str(script), "--check", "--out", str(stale)], capture_output=True, text=True)
    assert bad.returncode == 1
    assert "stale" in bad.stderr


def test_every_spec_op_is_in_the_catalogue_with_its_io_order():
    spec = json.loads(_spec_text())["ge_ops"]
    schemas = ops.all_schemas()
    for op_type, entry in spec.items():
        schema = schemas[op_type]
        assert [(i.name, i.kind) for i in schema.inputs] == [(i["name"], i["kind"]) for i in entry["inputs"]]
        assert [(o.name, o.kind) for o in schema.outputs] == [(o["name"], o["kind"]) for o in entry["outputs"]]
        assert [(a.name, a.type, a.required) for a in schema.attrs] == [
            (a["name"], a["type"], a["required"]) for a in entry["attrs"]]
        assert schema.source_repo == entry["source"]["repo"]
        for a in schema.attrs:
            assert (a.default is None) == a.required


def test_matmul_schema():
    s = ops.require_schema("MatMul")
    assert [(i.name, i.kind) for i in s.inputs] == [("x1", "required"), ("x2", "required"), ("bias", "optional")]
    assert [(a.name, a.type, a.default) for a in s.attrs] == [("transpose_x1", "Bool", False),
                                                             ("transpose_x2", "Bool", False)]
    assert s.outputs[0].name == "y" and s.es_module == "math" and s.source_repo == "hicann/ge"


def test_conv2d_schema():
    s = ops.require_schema("Conv2D")
    assert [(i.name, i.kind) for i in s.inputs] == [
        ("x", "required"), ("filter", "required"), ("bias", "optional"), ("offset_w", "optional")]
    attrs = {a.name: a for a in s.attrs}
    assert attrs["strides"].required and attrs["strides"].default is None
    assert attrs["pads"].required
    assert attrs["dilations"].default == [1, 1, 1, 1] and attrs["dilations"].default_literal == "{1, 1, 1, 1}"
    assert attrs["groups"].default == 1
    assert attrs["data_format"].default == "NHWC"
    assert attrs["offset_x"].default == 0
    assert [a.name for a in s.attrs] == ["strides", "pads", "dilations", "groups", "data_format", "offset_x"]
    assert s.es_module == "nn"


def test_split_and_concat_v2_schema():
    split = ops.require_schema("Split")
    assert [(i.name, i.kind) for i in split.inputs] == [("split_dim", "required"), ("x", "required")]
    assert [(o.name, o.kind) for o in split.outputs] == [("y", "dynamic")]
    assert split.attr("num_split").required
    concat = ops.require_schema("ConcatV2")
    assert [(i.name, i.kind) for i in concat.inputs] == [("x", "dynamic"), ("concat_dim", "required")]
    assert concat.attr("N").default == 1 and not concat.attr("N").required
    concat1 = ops.require_schema("Concat")
    assert [i.name for i in concat1.inputs] == ["concat_dim", "x"]


def test_gemm_and_batch_matmul_v2_schema():
    gemm = ops.require_schema("GEMM")
    assert [(i.name, i.kind) for i in gemm.inputs] == [(n, "required") for n in ("a", "b", "c", "alpha", "beta")]
    assert [(a.name, a.default) for a in gemm.attrs] == [("transpose_a", False), ("transpose_b", False)]
    bmm = ops.require_schema("BatchMatMulV2")
    assert [(i.name, i.kind) for i in bmm.inputs] == [
        ("x1", "required"), ("x2", "required"), ("bias", "optional"), ("offset_w", "optional")]
    assert [(a.name, a.default) for a in bmm.attrs] == [("adj_x1", False), ("adj_x2", False), ("offset_x", 0)]


def test_converted_defaults_of_other_types():
    assert ops.require_schema("Shape").attr("dtype").default == int(DataType.DT_INT32)
    assert ops.require_schema("ArgMaxV2").attr("dtype").default is DataType.DT_INT64
    assert ops.require_schema("LayerNorm").attr("epsilon").default == pytest.approx(1e-7)
    assert ops.require_schema("BatchNorm").attr("epsilon").default == pytest.approx(1e-4)
    assert ops.require_schema("MatMulV3").attr("opImplMode").default == 1
    assert ops.require_schema("SoftmaxV2").attr("axes").default == [-1]
    assert ops.require_schema("Squeeze").attr("axis").default == []
    assert ops.require_schema("ResizeNearestNeighborV2").attr("scales").default == [0.0, 0.0]
    value = ops.require_schema("Const").attr("value").default
    assert isinstance(value, TensorValue) and value.array.size == 0
    assert ops.require_schema("PartitionedCall").subgraphs == ("f",)
    assert ops.require_schema("If").subgraphs == ("then_branch", "else_branch")


def test_defaults_are_private_copies():
    dil = ops.require_schema("Conv2D").attr("dilations")
    copy = dil.default_copy()
    copy.append(9)
    assert dil.default == [1, 1, 1, 1]


@pytest.mark.parametrize(("attr_type", "text", "value"), [
    ("Bool", "false", False), ("Bool", "true", True), ("Int", "0x1", 1), ("Int", "-1", -1),
    ("Int", "DT_INT32", 3), ("Float", "0.0000001f", 1e-7), ("Float", "1e-4f", 1e-4), ("Float", "1.0", 1.0),
    ("String", '"NHWC"', "NHWC"), ("String", '""', ""), ("ListInt", "{1, 1, 1, 1}", [1, 1, 1, 1]),
    ("ListInt", "{}", []), ("ListFloat", "{0.0f, 0.5f}", [0.0, 0.5]), ("Type", "DT_FLOAT", DataType.DT_FLOAT),
    ("ListListInt", "{{1, 2}, {3}}", [[1, 2], [3]]), ("ListBool", "{true, false}", [True, False]),
])
def test_literal_parsing(attr_type, text, value):
    assert parse_literal(attr_type, text) == value


@pytest.mark.parametrize(("attr_type", "text"), [("Bool", "maybe"), ("Int", "1.5"), ("String", "NHWC"),
                                                  ("ListInt", "1, 2"), ("Type", "DT_NOPE")])
def test_bad_literals_raise(attr_type, text):
    with pytest.raises(LiteralError, match="literal"):
        parse_literal(attr_type, text)


def test_es_module_placement_required_by_the_samples():
    schemas = ops.all_schemas()
    for op in ("ConcatV2", "Split", "Concat", "Identity", "TensorMove", "GEMM", "Add", "MatMul"):
        assert schemas[op].es_module == "math", op
    for op in ("Relu", "BatchMatMulV2", "Conv2D"):
        assert schemas[op].es_module == "nn", op
    assert schemas["Const"].es_module == "" and schemas["Data"].es_module == ""
    # rule 1: the ops repo decides
    assert schemas["Reshape"].es_module == "math" and schemas["LayerNorm"].es_module == "nn"
    # rule 2: legacy D forms follow their non-D op
    assert schemas["TransposeD"].es_module == schemas["Transpose"].es_module == "math"
    assert all(s.es_module in ("math", "nn", "") for s in schemas.values() if not s.is_custom)


def test_unknown_op():
    assert ops.get_schema("NoSuchOp") is None
    with pytest.raises(ops.UnknownOpError, match="'NoSuchOp'.*load_custom_ops") as info:
        ops.require_schema("NoSuchOp")
    assert info.value.op_type == "NoSuchOp"
    assert isinstance(info.value, LookupError)


def test_make_node_follows_the_schema():
    g = ir.Graph("g")
    mm = ops.make_node(g, "MatMulV2", attrs={"transpose_x1": True})
    assert mm.op_type == "MatMulV2" and mm.name == "MatMulV2_0"
    assert mm.input_names == ["x1", "x2", "bias", "offset_w"] and mm.output_names == ["y"]
    assert not mm.inputs[0].is_placeholder and not mm.inputs[1].is_placeholder
    assert mm.inputs[2].is_placeholder and mm.inputs[3].is_placeholder
    assert mm.inputs[2] == TensorDesc.placeholder()
    assert mm.attrs == {"transpose_x1": True}  # defaults are not added silently
    g.verify()


def test_make_node_expands_dynamic_anchors():
    g = ir.Graph("g")
    c = ops.make_node(g, "ConcatV2", name="cat", dynamic_inputs={"x": 3}, attrs={"N": 3})
    assert c.name == "cat" and c.input_names == ["x0", "x1", "x2", "concat_dim"]
    s = ops.make_node(g, "Split", dynamic_outputs={"y": 2}, attrs={"num_split": 2})
    assert s.input_names == ["split_dim", "x"] and s.output_names == ["y0", "y1"]
    empty = ops.make_node(g, "Concat")
    assert empty.input_names == ["concat_dim"]
    with pytest.raises(ValueError, match="no dynamic input 'concat_dim'"):
        ops.make_node(g, "ConcatV2", dynamic_inputs={"concat_dim": 2})
    with pytest.raises(ValueError, match=">= 0"):
        ops.make_node(g, "ConcatV2", dynamic_inputs={"x": -1})
    with pytest.raises(ops.UnknownOpError):
        ops.make_node(g, "NoSuchOp")


def test_with_defaults():
    s = ops.require_schema("Conv2D")
    attrs = ops.with_defaults(s, {"strides": [1, 1, 2, 2], "data_format": "NCHW"})
    assert attrs == {"strides": [1, 1, 2, 2], "dilations": [1, 1, 1, 1], "groups": 1, "data_format": "NCHW",
                     "offset_x": 0}
    assert ops.missing_required_attrs(s, attrs) == ["pads"]


def test_input_layout_with_dynamic_and_missing_optionals():
    s = ops.require_schema("ConcatV2")
    assert s.input_layout(4) == {"x": [0, 1, 2], "concat_dim": [3]}
    mm = ops.require_schema("MatMulV2")
    assert mm.input_layout(2) == {"x1": [0], "x2": [1], "bias": [], "offset_w": []}


def test_get_schema_is_fast_after_first_load():
    import timeit

    ops.get_schema("MatMul")
    per_call = timeit.timeit(lambda: ops.get_schema("MatMul"), number=20000) / 20000
    assert per_call < 2e-5  # a dict lookup; generous for a loaded CI machine


def test_public_surface_matches_all():
    assert sorted(ops.__all__) == sorted(set(ops.__all__))
    for name in ops.__all__:
        assert getattr(ops, name) is not None, name
    public = {n for n in dir(ops) if not n.startswith("_")} - {"errors"}
    assert public == set(ops.__all__)
