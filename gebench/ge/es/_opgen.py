"""ES op functions generated from the op catalogue by GE's rules (spec §1.2).

For each op type a real Python function is compiled from a small generated ``def`` so that its
``inspect.signature`` is exactly the generated one and wrong calls fail the way a generated function fails:

1. IR inputs in IR order, named after the IR input (``in_`` prefix for Python keywords); a dynamic input takes a
   list. An optional input defaults to ``None`` only in the trailing run of optional inputs, and only when
   nothing required follows (no dynamic output counts, no subgraph parameters).
2. An op without inputs takes a leading ``owner_graph_builder``; an op whose inputs are all optional takes an
   extra ``owner_builder`` after them.
3. ``<output>_num`` (a positional int) for each dynamic output.
4. One ``Graph`` parameter per subgraph slot (its ownership moves to the builder).
5. ``*`` then the IR attrs as keyword-only parameters: required ones first (no default), then optional ones with
   their IR default; ``attr_`` prefix when the name clashes with an input name or a keyword.

Numbers and nested lists are turned into Consts only for ops with several inputs or only optional inputs;
single-input ops take a TensorHolder only. The node gets every IR attr (defaults filled) and the anchors of its
schema. Return: a TensorHolder for zero or one static output, a list for one dynamic output, else an
``<Op>Output`` object with one attribute per output (``ref_`` prefix when named like an input, ``out_`` for
keywords).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import keyword
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from gebench import ir, ops
from gebench.ge.graph import Graph, Tensor
from gebench.ge.graph._attr import to_float32
from gebench.ge.graph.types import DataType

from .graph_builder import GraphBuilder
from .tensor_holder import TensorHolder
from .tensor_like import convert_to_tensor_holder, resolve_builder

__all__ = ["op_function", "output_class", "plugin_op_types", "install_plugin", "PLUGINS"]

#: The ES plugin modules gebench provides, in load order.
PLUGINS = ("math", "nn", "all", "custom")

_PY_TYPES = {
    "Int": "int", "Float": "float", "String": "str", "Bool": "bool", "Type": "DataType",
    "ListInt": "List[int]", "ListFloat": "List[float]", "ListBool": "List[bool]", "ListType": "List[DataType]",
    "ListListInt": "List[List[int]]", "ListString": "List[str]", "Tensor": "Tensor",
}


class _EmptyTensorDefault:
    """Signature default of Tensor attrs: a fresh empty tensor on every call."""

    def __repr__(self) -> str:
        return "Tensor()"


_EMPTY_TENSOR = _EmptyTensorDefault()
_CONST_TYPES = frozenset({"Const", "Constant"})


class OpOutputBase:
    """Base of the generated ``<Op>Output`` classes: one attribute per IR output, in IR order."""

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def __init__(self, *values: Any) -> None:
        for name, value in zip(self._fields, values, strict=True):
            setattr(self, name, value)

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f, None)!r}" for f in self._fields)
        return f"{type(self).__name__}({inner})"


@dataclasses.dataclass
class _Plan:
    schema: ops.OpSchema
    inputs: list[str]
    owner: str | None
    counts: list[tuple[str, str]]
    subgraphs: list[tuple[str, str]]
    attrs: list[tuple[str, ops.AttrDef]]
    converts: bool
    returns: str  # "holder" | "list" | "object"
    output_fields: list[tuple[str, str, bool]]  # (python attr, IR output name, dynamic)
    output_cls: type | None = None
    tensor_attrs: tuple[ops.AttrDef, ...] = ()  # the schema's Tensor-typed attrs
    #: one output, no dynamic anchors, subgraphs, output counts or Tensor attrs, and two or more inputs: calls
    #: whose inputs are TensorHolders, floats or absent optionals take :func:`_call_simple`
    simple: bool = False
    #: one output, no dynamic anchors, subgraphs, output counts or Tensor attrs, not a Const: a recording builder
    #: records the node (``GraphBuilder._record_op``) when every input is one of its recorded tensors or absent
    recordable: bool = False

    @property
    def op_type(self) -> str:
        return self.schema.op_type


def _py_name(name: str, taken: set[str], prefix: str) -> str:
    return f"{prefix}{name}" if keyword.iskeyword(name) or name in taken else name


def _plan(schema: ops.OpSchema) -> tuple[_Plan, str, dict[str, Any]]:
    """The call plan, the ``def`` source and its namespace of defaults."""
    inputs = list(schema.inputs)
    input_py = [f"in_{d.name}" if keyword.iskeyword(d.name) else d.name for d in inputs]
    all_optional = bool(inputs) and all(d.kind == "optional" for d in inputs)
    counts = [(f"{o.name}_num", o.name) for o in schema.outputs if o.kind == "dynamic"]
    subgraphs = [(f"in_{s}" if keyword.iskeyword(s) else s, s) for s in schema.subgraphs]
    required_follows = bool(counts or subgraphs)
    trailing = len(inputs)
    while trailing > 0 and inputs[trailing - 1].kind == "optional":
        trailing -= 1

    params: list[str] = []
    ns: dict[str, Any] = {}
    owner = None
    if not inputs:
        owner = "owner_graph_builder"
        params.append(owner)
    for i, py in enumerate(input_py):
        params.append(f"{py}=None" if i >= trailing and not required_follows else py)
    if all_optional:
        owner = "owner_builder"
        params.append(owner if required_follows else f"{owner}=None")
    params.extend(py for py, _ in counts)
    params.extend(py for py, _ in subgraphs)

    taken = set(input_py) | {c for c, _ in counts} | {g for g, _ in subgraphs} | ({owner} if owner else set())
    ordered = [a for a in schema.attrs if a.required] + [a for a in schema.attrs if not a.required]
    attrs = [(_py_name(a.name, taken, "attr_"), a) for a in ordered]
    if attrs:
        params.append("*")
    for k, (py, a) in enumerate(attrs):
        if a.required:
            params.append(py)
        else:
            ns[f"_d{k}"] = _EMPTY_TENSOR if a.type == "Tensor" else a.default_copy()
            params.append(f"{py}=_d{k}")

    outs = list(schema.outputs)
    if len(outs) <= 1 and not (outs and outs[0].kind == "dynamic"):
        returns = "holder"
    elif len(outs) == 1:
        returns = "list"
    else:
        returns = "object"
    in_names = {d.name for d in inputs}
    fields = []
    for o in outs:
        py = f"ref_{o.name}" if o.name in in_names else f"out_{o.name}" if keyword.iskeyword(o.name) else o.name
        fields.append((py, o.name, o.kind == "dynamic"))

    tensor_attrs = tuple(a for a in schema.attrs if a.type == "Tensor")
    converts = len(inputs) > 1 or all_optional
    # an op type "input" could take an input's name (input_<k>), which only the eager path checks
    recordable = (returns == "holder" and not counts and not subgraphs and not tensor_attrs
                  and schema.op_type not in _CONST_TYPES and schema.op_type != "input"
                  and not any(d.kind == "dynamic" for d in inputs))
    simple = converts and recordable
    plan = _Plan(schema, input_py, owner, counts, subgraphs, attrs, converts=converts, returns=returns,
                 output_fields=fields, tensor_attrs=tensor_attrs, simple=simple, recordable=recordable)

    def tup(names: list[str]) -> str:
        return "(" + "".join(f"{n}, " for n in names) + ")"

    source = (f"def _es_op({', '.join(params)}):\n"
              f"    return _call(_plan, {tup(input_py)}, {owner or 'None'}, {tup([c for c, _ in counts])}, "
              f"{tup([s for s, _ in subgraphs])}, {tup([py for py, _ in attrs])})\n")
    return plan, source, ns


def _doc(plan: _Plan, fn: Callable[..., Any]) -> str:
    s = plan.schema
    kinds = {"optional": " (optional)", "dynamic": " (list)", "required": ""}
    ins = ", ".join(f"{d.name}{kinds[d.kind]}" for d in s.inputs) or "none"
    outs = ", ".join(f"{o.name}{' (list)' if o.kind == 'dynamic' else ''}" for o in s.outputs) or "none"
    attrs = "; ".join(
        f"{a.name}: {_PY_TYPES.get(a.type, a.type)}" + (" (required)" if a.required else f" = {a.default!r}")
        for a in s.attrs) or "none"
    ret = {"holder": "TensorHolder", "list": "List[TensorHolder]", "object": f"{s.op_type}Output"}[plan.returns]
    where = f"{s.source_repo} {s.source_path}".strip() or "custom declaration"
    return (f"{s.op_type}{inspect.signature(fn)} -> {ret}\n\n"
            f"Adds a ``{s.op_type}`` node to the inputs' GraphBuilder ({where}).\n\n"
            f"Inputs: {ins}. Outputs: {outs}. Attrs: {attrs}.")


_LOCK = threading.RLock()
_CACHE: dict[str, tuple[ops.OpSchema, Callable[..., Any], _Plan]] = {}


def _entry(op_type: str) -> tuple[ops.OpSchema, Callable[..., Any], _Plan]:
    schema = ops.require_schema(op_type)
    cached = _CACHE.get(op_type)
    if cached is not None and cached[0] is schema:
        return cached
    with _LOCK:
        cached = _CACHE.get(op_type)
        if cached is not None and cached[0] is schema:
            return cached
        plan, source, ns = _plan(schema)
        ns.update({"_call": _call, "_plan": plan})
        exec(compile(source, f"<ge.es op {op_type}>", "exec"), ns)  # noqa: S102 - generated from the schema
        fn = ns["_es_op"]
        # the op type may be any identifier (even a Python keyword): name the function after it afterwards
        code = fn.__code__.replace(co_name=op_type)
        if hasattr(code, "co_qualname"):
            code = code.replace(co_qualname=op_type)
        fn.__code__ = code
        fn.__name__ = fn.__qualname__ = op_type
        fn.__module__ = "ge.es.all"
        fn.__doc__ = _doc(plan, fn)
        if plan.returns == "object":
            names = tuple(py for py, _, _ in plan.output_fields)
            plan.output_cls = type(f"{op_type}Output", (OpOutputBase,), {
                "__slots__": names, "_fields": names, "__module__": "ge.es.all",
                "__doc__": f"Outputs of {op_type}: " + ", ".join(names) + "."})
        _CACHE[op_type] = (schema, fn, plan)
        return _CACHE[op_type]


def op_function(op_type: str) -> Callable[..., Any]:
    """The ES function of ``op_type`` (regenerated if the op's schema changed). Raises ops.UnknownOpError."""
    return _entry(op_type)[1]


def output_class(op_type: str) -> type | None:
    """The ``<Op>Output`` class of a multi-output op, or None."""
    return _entry(op_type)[2].output_cls


# --------------------------------------------------------------------------------------------- calls
def _type_name(value: Any) -> str:
    return type(value).__name__


def _is_intlike(v: Any) -> bool:
    return isinstance(v, (int, np.integer))


def _convert_attr(op: str, py: str, a: ops.AttrDef, v: Any) -> Any:
    t = a.type
    tv = type(v)
    # the common exact types first (no closures built on this path)
    if t == "Bool" and tv is bool:
        return v
    if t == "Int" and tv is int:
        return v
    if t == "String" and tv is str:
        return v
    return _convert_attr_slow(op, py, a, v)


def _convert_attr_slow(op: str, py: str, a: ops.AttrDef, v: Any) -> Any:
    def bad(expected: str) -> TypeError:
        return TypeError(f"{op}(): attr '{py}' must be {expected}, got {v!r} ({_type_name(v)})")

    def seq(check: Callable[[Any], bool], expected: str) -> list[Any]:
        if not isinstance(v, (list, tuple)) or not all(check(x) for x in v):
            raise bad(expected)
        return list(v)

    t = a.type
    if t == "Int":
        if not _is_intlike(v):
            raise bad("an int")
        return int(v)
    if t == "Float":
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise bad("a float")
        return to_float32(v)
    if t == "Bool":
        if not isinstance(v, (bool, int, np.bool_, np.integer)):
            raise bad("a bool")
        return bool(v)
    if t == "String":
        if not isinstance(v, str):
            raise bad("a str")
        return v
    if t == "Type":
        return _data_type(op, py, v)
    if t == "ListInt":
        return [int(x) for x in seq(_is_intlike, "a list of int")]
    if t == "ListFloat":
        return [to_float32(x) for x in seq(
            lambda x: not isinstance(x, bool) and isinstance(x, (int, float, np.integer, np.floating)),
            "a list of float")]
    if t == "ListBool":
        return [bool(x) for x in seq(lambda x: isinstance(x, (bool, int, np.bool_)), "a list of bool")]
    if t == "ListString":
        return seq(lambda x: isinstance(x, str), "a list of str")
    if t == "ListType":
        return [_data_type(op, py, x) for x in seq(lambda x: _is_intlike(x), "a list of DataType")]
    if t == "ListListInt":
        rows = seq(lambda r: isinstance(r, (list, tuple)) and all(_is_intlike(x) for x in r), "a list of lists of int")
        return [[int(x) for x in r] for r in rows]
    if t == "Tensor":
        if v is _EMPTY_TENSOR or isinstance(v, Tensor):
            return v  # ownership is taken once every argument has been checked
        raise bad("a ge.graph.Tensor")
    return copy.deepcopy(v)


def _data_type(op: str, py: str, v: Any) -> DataType:
    if isinstance(v, DataType):
        return v
    if not _is_intlike(v) or isinstance(v, bool):
        raise TypeError(f"{op}(): attr '{py}' must be a DataType, got {v!r} ({_type_name(v)})")
    try:
        return DataType(int(v))
    except ValueError:
        raise ValueError(f"{op}(): attr '{py}' = {v} is not a DataType value") from None


def _convert_attrs(plan: _Plan, attrs: tuple[Any, ...]) -> dict[str, Any]:
    """IR attr name -> checked value for the call's attr arguments, in the schema's order.

    Raises:
        TypeError / ValueError: a value does not fit its attr type (the message names the op and argument).
    """
    op = plan.op_type
    out = {}
    for (py, a), v in zip(plan.attrs, attrs, strict=True):
        out[a.name] = _convert_attr(op, py, a, v)
    return out


def _call_simple(plan: _Plan, inputs: tuple[Any, ...], attrs: tuple[Any, ...]) -> Any:
    """:func:`_call` for a ``plan.simple`` op whose inputs are TensorHolders of one live builder, floats or
    absent optionals (the usual replacement call), with the same attr checks in the same order; None when the
    call needs the general path (which then reports any error). Nothing is created before every check passed."""
    builder = None
    for v in inputs:
        if type(v) is TensorHolder:
            builder = v._builder
            break
    if builder is None or builder._built:
        return None
    for d, v in zip(plan.schema.inputs, inputs, strict=True):
        tv = type(v)
        if tv is TensorHolder:
            if v._builder is not builder:
                return None
        elif tv is not float and (v is not None or d.kind != "optional"):
            return None
    attr_values = _convert_attrs(plan, attrs)
    values = []
    for v in inputs:
        values.append(builder.create_scalar_float(v) if type(v) is float else v)
    if builder._recordable():  # a simple plan is recordable
        return builder._record_op(plan.schema, values, attr_values)
    return TensorHolder._create(builder, builder._add_op_node(plan.schema, values, attr_values, {}, {}), 0)


def _call(plan: _Plan, inputs: tuple[Any, ...], owner: Any, counts: tuple[Any, ...], subs: tuple[Any, ...],
          attrs: tuple[Any, ...]) -> Any:
    if plan.simple and owner is None:
        result = _call_simple(plan, inputs, attrs)
        if result is not None:
            return result
    schema = plan.schema
    op = plan.op_type
    dyn_out: dict[str, int] = {}
    for (py, out), n in zip(plan.counts, counts, strict=True):
        if not isinstance(n, int) or isinstance(n, bool):
            raise TypeError(f"{op}(): argument '{py}' must be an int (how many '{out}' outputs), "
                            f"got {n!r} ({_type_name(n)})")
        if n < 0:
            raise ValueError(f"{op}(): argument '{py}' must be >= 0, got {n}")
        dyn_out[out] = n
    attr_values = _convert_attrs(plan, attrs)
    graphs: dict[str, Graph] = {}
    for (py, slot), g in zip(plan.subgraphs, subs, strict=True):
        if not isinstance(g, Graph):
            raise TypeError(f"{op}(): argument '{py}' must be a Graph, got {_type_name(g)}")
        if g._handle is None or any(g is other for other in graphs.values()):
            raise RuntimeError(f"{op}(): the Graph passed as '{py}' was already given to a builder; "
                               "a graph can be passed only once")
        graphs[slot] = g

    values: list[Any]
    if owner is not None and plan.owner is not None and not isinstance(owner, GraphBuilder):
        raise TypeError(f"{op}(): argument '{plan.owner}' must be a GraphBuilder, got {_type_name(owner)}")
    if not schema.inputs:
        if not isinstance(owner, GraphBuilder):
            raise TypeError(f"{op}(): argument 'owner_graph_builder' must be a GraphBuilder, got {_type_name(owner)}")
        builder = owner
        values = []
    elif plan.converts:
        try:
            builder = resolve_builder(*inputs, owner)
        except ValueError:
            raise ValueError(f"{op}(): cannot tell which GraphBuilder to use: pass at least one TensorHolder "
                             f"among {', '.join(plan.inputs)}" + (f" or '{plan.owner}'" if plan.owner else "")) from None
        if builder._built:
            builder._check_live(f"create a {op} node")
        # a TensorHolder needs no conversion and a float is a scalar DT_FLOAT Const (the common cases, which
        # cannot fail); anything else goes through the checks
        values = []
        for py, d, v in zip(plan.inputs, schema.inputs, inputs, strict=True):
            tv = type(v)
            if tv is TensorHolder and d.kind != "dynamic":
                values.append(v)
            elif tv is float and d.kind != "dynamic":
                values.append(builder.create_scalar_float(v))
            else:
                values.append(_convert_input(op, py, d, v, builder))
    else:
        (py,), (d,), (v,) = plan.inputs, schema.inputs, inputs
        if d.kind == "dynamic":
            if not isinstance(v, (list, tuple)) or not v or not all(isinstance(x, TensorHolder) for x in v):
                raise TypeError(f"{op}(): argument '{py}' must be a non-empty list of TensorHolder, got {v!r}")
            builder = v[0].get_owner_builder()
            values = [list(v)]
        else:
            if not isinstance(v, TensorHolder):
                raise TypeError(f"{op}(): argument '{py}' must be a TensorHolder, got {v!r} ({_type_name(v)})")
            builder = v.get_owner_builder()
            values = [v]
    if builder._built:
        builder._check_live(f"create a {op} node")
    for py, value in zip(plan.inputs, values, strict=True):
        if value is None:
            continue
        if not isinstance(value, list):
            if value._builder is builder:
                continue
            value = [value]
        for th in value:
            if th is not None and th._builder is not builder:
                raise ValueError(f"{op}(): argument '{py}' ({th.name}) belongs to GraphBuilder "
                                 f"{th._builder.name!r}, but this {op} is built in {builder.name!r}; "
                                 "all inputs must come from one builder")
    for a in plan.tensor_attrs:
        if a.name in attr_values:
            v = attr_values[a.name]
            attr_values[a.name] = a.default_copy() if v is _EMPTY_TENSOR else v._take(f"{op}() attr '{a.name}'")
    if plan.recordable and builder._recordable():
        # every input is a TensorHolder of this builder (checked above) or absent: while it records, its
        # tensors are all recorded ones (anything else, a Const made for a number say, ended the recording)
        return builder._record_op(schema, values, attr_values)
    node = builder._add_op_node(schema, values, attr_values, dyn_out, graphs)
    value = attr_values.get("value")
    if op in _CONST_TYPES and isinstance(value, ir.TensorValue) and node.outputs and value.array.size:
        node.outputs[0] = value.desc()  # a Const's output desc is its value's
    return _result(plan, builder, node)


def _convert_input(op: str, py: str, d: ops.InputDef, v: Any, builder: GraphBuilder) -> Any:
    if d.kind == "dynamic":
        if not isinstance(v, (list, tuple)):
            raise TypeError(f"{op}(): argument '{py}' is a dynamic input and must be a list, got {_type_name(v)}")
        out = []
        for i, x in enumerate(v):
            if x is None:
                raise TypeError(f"{op}(): argument '{py}[{i}]' must be a tensor, got None")
            out.append(_convert_one(op, f"{py}[{i}]", x, builder))
        return out
    if v is None:
        if d.kind == "required":
            raise TypeError(f"{op}(): argument '{py}' is a required input; expected a TensorHolder or a number, "
                            "got None")
        return None
    return _convert_one(op, py, v, builder)


def _convert_one(op: str, py: str, v: Any, builder: GraphBuilder) -> TensorHolder:
    try:
        th = convert_to_tensor_holder(v, builder)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{exc} [{op}() argument '{py}']") from None  # GE's message first
    assert th is not None
    return th


def _result(plan: _Plan, builder: GraphBuilder, node: ir.Node) -> Any:
    if plan.returns == "holder":
        return TensorHolder._create(builder, node, 0)
    names = node.output_names

    def holders(out: str, dynamic: bool) -> Any:
        if dynamic:
            return [TensorHolder._create(builder, node, i) for i, n in enumerate(names)
                    if n.startswith(out) and n[len(out):].isdigit()]
        return TensorHolder._create(builder, node, names.index(out))

    if plan.returns == "list":
        return holders(plan.output_fields[0][1], True)
    assert plan.output_cls is not None
    return plan.output_cls(*(holders(out, dyn) for _, out, dyn in plan.output_fields))


# --------------------------------------------------------------------------------------------- plugin modules
def _in_plugin(schema: ops.OpSchema, plugin: str) -> bool:
    return plugin == "all" or schema.es_module == plugin


def plugin_op_types(plugin: str) -> list[str]:
    """Op types whose functions the ES plugin module ``plugin`` provides, in catalogue order."""
    return [op for op, s in ops.all_schemas().items() if _in_plugin(s, plugin)]


def install_plugin(plugin: str, namespace: dict[str, Any]) -> None:
    """Give the plugin module whose globals are ``namespace`` a PEP 562 ``__getattr__``/``__dir__`` that serve
    the op functions and ``<Op>Output`` classes of ``plugin`` from the live catalogue (so custom ops declared
    after import are visible) and a live ``__all__`` (helpers, functions, output classes) for star imports."""
    helpers = [k for k in namespace.get("_HELPERS", ())]

    def names() -> list[str]:
        op_types = plugin_op_types(plugin)
        outputs = [f"{op}Output" for op in op_types if _entry(op)[2].returns == "object"]
        return helpers + op_types + outputs

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            return names()
        schema = ops.get_schema(name)
        if schema is not None and _in_plugin(schema, plugin):
            return op_function(name)
        if name.endswith("Output"):
            base = ops.get_schema(name[: -len("Output")])
            if base is not None and _in_plugin(base, plugin):
                cls = output_class(base.op_type)
                if cls is not None:
                    return cls
        raise AttributeError(f"module 'ge.es.{plugin}' has no attribute {name!r}"
                             + ("" if schema is None else f" ({name} is in ge.es.{schema.es_module or 'all'})"))

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names()))

    namespace["__getattr__"] = __getattr__
    namespace["__dir__"] = __dir__
