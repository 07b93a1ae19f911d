"""Custom op declarations: JSON files, the GEBENCH_CUSTOM_OPS variable and the errors for bad files."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gebench import ir, ops
from gebench.ir import DataType
from gebench.ops import _catalogue

ADD_CUSTOM = {
    "AddCustom": {
        "inputs": [{"name": "x", "kind": "required", "dtypes": "TensorType({DT_FLOAT, DT_FLOAT16})"},
                   {"name": "y", "kind": "required"}],
        "outputs": [{"name": "z", "kind": "required"}],
        "attrs": [{"name": "alpha", "type": "Float", "required": False, "default": "1.0f"},
                  {"name": "mode", "type": "String", "default": "\"fast\""},
                  {"name": "flags", "type": "ListInt", "default": [1, 2]},
                  {"name": "out_type", "type": "Type", "default": "DT_FLOAT16"},
                  {"name": "k", "type": "Int", "required": True}],
        "dtypes": "TensorType({DT_FLOAT})",
        "source": {"repo": "example/ops", "path": "add_custom_proto.h"},
    },
    "MultiOut": {"inputs": ["a", {"name": "rest", "kind": "dynamic"}],
                 "outputs": [{"name": "parts", "kind": "dynamic"}]},
}


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    # start from no custom ops and put back whatever other tests had declared
    saved = _catalogue._snapshot()
    monkeypatch.delenv(ops.ENV_CUSTOM_OPS, raising=False)
    ops.clear_custom_ops()
    yield
    _catalogue._restore(saved)


def _write(tmp_path, content, name="ops.json"):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def test_load_custom_ops_declares_schemas(tmp_path):
    path = _write(tmp_path, ADD_CUSTOM)
    assert ops.load_custom_ops(path) == ["AddCustom", "MultiOut"]
    assert ops.custom_op_types() == ["AddCustom", "MultiOut"]
    s = ops.require_schema("AddCustom")
    assert s.es_module == "custom" and s.is_custom
    assert s.source_repo == "example/ops" and s.source_path == "add_custom_proto.h"
    assert [(i.name, i.kind, i.dtypes) for i in s.inputs] == [
        ("x", "required", "TensorType({DT_FLOAT, DT_FLOAT16})"), ("y", "required", "TensorType({DT_FLOAT})")]
    assert [o.name for o in s.outputs] == ["z"]
    attrs = {a.name: a for a in s.attrs}
    assert attrs["alpha"].default == 1.0 and not attrs["alpha"].required
    assert attrs["mode"].default == "fast"
    assert attrs["flags"].default == [1, 2]
    assert attrs["out_type"].default is DataType.DT_FLOAT16
    assert attrs["k"].required and attrs["k"].default is None
    assert "AddCustom" in ops.all_schemas()
    multi = ops.require_schema("MultiOut")
    assert [(i.name, i.kind) for i in multi.inputs] == [("a", "required"), ("rest", "dynamic")]
    assert multi.source_repo == "custom"


def test_make_node_builds_custom_ops(tmp_path):
    ops.load_custom_ops(_write(tmp_path, ADD_CUSTOM))
    g = ir.Graph("g")
    n = ops.make_node(g, "AddCustom", attrs={"k": 2})
    assert n.input_names == ["x", "y"] and n.output_names == ["z"] and n.attrs == {"k": 2}
    m = ops.make_node(g, "MultiOut", dynamic_inputs={"rest": 2}, dynamic_outputs={"parts": 3})
    assert m.input_names == ["a", "rest0", "rest1"] and m.output_names == ["parts0", "parts1", "parts2"]


def test_loading_again_is_harmless_but_a_different_redeclaration_fails(tmp_path):
    path = _write(tmp_path, ADD_CUSTOM)
    ops.load_custom_ops(path)
    ops.load_custom_ops(_write(tmp_path, ADD_CUSTOM, "copy.json"))
    changed = json.loads(json.dumps(ADD_CUSTOM))
    changed["AddCustom"]["outputs"] = [{"name": "out"}]
    other = _write(tmp_path, changed, "other.json")
    with pytest.raises(ops.CustomOpError, match=r"other\.json.*'AddCustom'.*already declared differently.*ops\.json"):
        ops.load_custom_ops(other)
    assert ops.require_schema("AddCustom").outputs[0].name == "z"


@pytest.mark.parametrize(("content", "pattern"), [
    ("{not json", r"bad\.json:1:2: not valid JSON"),
    ([1, 2], "top level must be a JSON object"),
    ({"Relu": {"inputs": ["x"], "outputs": ["y"]}}, "'Relu' has the name of a GE catalogue op"),
    ({"Bad Name": {"inputs": [], "outputs": []}}, "'Bad Name': an op type must be an identifier"),
    ({"Op": {"outputs": []}}, "'Op': missing field 'inputs'"),
    ({"Op": {"inputs": [], "outputs": [], "atrs": []}}, r"'Op': unknown field\(s\) \['atrs'\]"),
    ({"Op": {"inputs": [{"name": "x", "kind": "maybe"}], "outputs": []}}, "inputs\\[0\\] 'x': kind 'maybe'"),
    ({"Op": {"inputs": ["x", "x"], "outputs": []}}, "duplicate name 'x'"),
    ({"Op": {"inputs": [], "outputs": [], "attrs": [{"name": "a", "type": "Nope"}]}}, "attr 'a': type 'Nope'"),
    ({"Op": {"inputs": [], "outputs": [], "attrs": [{"name": "a", "type": "Bool", "default": "perhaps"}]}},
     "attr 'a': default 'perhaps' is not a Bool"),
    ({"Op": {"inputs": [], "outputs": [], "attrs": [{"name": "a", "type": "Int", "default": 1.5}]}},
     "attr 'a': default 1.5 is not a Int"),
    ({"Op": {"inputs": [], "outputs": [], "attrs": [{"name": "a", "type": "Int", "required": False}]}},
     "optional but has no 'default'"),
    ({"Op": {"inputs": [{"name": "a", "kind": "dynamic"}, {"name": "b", "kind": "dynamic"}], "outputs": []}},
     "at most one dynamic"),
])
def test_bad_files_name_file_op_and_field(tmp_path, content, pattern):
    path = _write(tmp_path, content, "bad.json")
    with pytest.raises(ops.CustomOpError, match=pattern) as info:
        ops.load_custom_ops(path)
    assert "bad.json" in str(info.value)
    assert ops.custom_op_types() == []  # a bad file declares nothing


def test_bad_file_declares_nothing_even_after_good_entries(tmp_path):
    content = {"GoodOp": {"inputs": ["x"], "outputs": ["y"]}, "BadOp": {"inputs": 3, "outputs": []}}
    with pytest.raises(ops.CustomOpError, match="'BadOp': field 'inputs' must be a list"):
        ops.load_custom_ops(_write(tmp_path, content))
    assert ops.get_schema("GoodOp") is None


def test_missing_file(tmp_path):
    with pytest.raises(ops.CustomOpError, match=r"nope\.json: cannot read custom op file"):
        ops.load_custom_ops(tmp_path / "nope.json")


def test_env_var_is_read_on_first_access(tmp_path, monkeypatch):
    a = _write(tmp_path, {"EnvOpA": {"inputs": ["x"], "outputs": ["y"]}}, "a.json")
    b = _write(tmp_path, {"EnvOpB": {"inputs": ["x"], "outputs": ["y"]}}, "b.json")
    monkeypatch.setenv(ops.ENV_CUSTOM_OPS, f"{a}{os.pathsep}{b}")
    ops.clear_custom_ops()
    assert ops.get_schema("EnvOpB").es_module == "custom"
    assert ops.custom_op_types() == ["EnvOpA", "EnvOpB"]


def test_env_var_bad_file_is_reported_with_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv(ops.ENV_CUSTOM_OPS, str(_write(tmp_path, "[]", "env_bad.json")))
    ops.clear_custom_ops()
    with pytest.raises(ops.CustomOpError, match=r"env_bad\.json \(from \$GEBENCH_CUSTOM_OPS\)"):
        ops.get_schema("Relu")


def test_env_var_in_a_fresh_process(tmp_path):
    path = _write(tmp_path, {"FreshOp": {"inputs": ["x"], "outputs": ["y"]}})
    env = dict(os.environ, **{ops.ENV_CUSTOM_OPS: str(path)})
    code = "from gebench import ops; print(ops.require_schema('FreshOp').es_module, ops.custom_op_types())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "custom ['FreshOp']"


def test_clear_custom_ops_forgets_declarations(tmp_path):
    ops.load_custom_ops(_write(tmp_path, ADD_CUSTOM))
    ops.clear_custom_ops()
    assert ops.get_schema("AddCustom") is None and ops.custom_op_types() == []
