"""gebench's GE op catalogue: op schemas, custom op declarations, node creation and shape/dtype inference.

Public surface::

    get_schema(op_type) -> OpSchema | None        require_schema(op_type) -> OpSchema (UnknownOpError)
    all_schemas() -> dict[str, OpSchema]          builtin_op_types() / custom_op_types() -> list[str]
    load_custom_ops(path) -> list[str]            clear_custom_ops(); env GEBENCH_CUSTOM_OPS=path[:path...]
    make_node(graph, op_type, ...) -> ir.Node     with_defaults(schema, attrs) / missing_required_attrs(...)
    infer_node(graph, node)                       infer_graph(graph)          inferable_op_types()

The built-in schemas come from ``data/ge_ops.json``, generated from ``scripts/spec/ge-ops.json`` (the project's copy of the GE op fact sheet) by
``scripts/gen_op_catalogue.py`` (``--check`` tells whether the file is current).

``OpSchema.es_module`` (which ``ge.es.<module>`` holds the op's function; every op is also in ``ge.es.all``):
ops declared in hicann/ops-math go to ``math`` and those in hicann/ops-nn to ``nn``. Ops taken from hicann/ge
test stubs follow their family: the legacy ``…D`` forms go where their non-D op goes (all ``math``), ``MatMul``
goes to ``math``, and ``Data``/``Const``/``NetOutput``/``PartitionedCall`` get ``""`` (``ge.es.all`` only).
Where the GE Python samples need an op in a given module (ge-python-api.md §4: ``ge.es.math`` provides ConcatV2,
Split, Concat, Identity, TensorMove, GEMM, Add, MatMul; ``ge.es.nn`` provides Relu, BatchMatMulV2, Conv2D) that
placement wins: ``GEMM`` (declared in ops-nn) is in ``math``. ``TensorMove``, which the samples import but
ge-ops.json does not list, is added with confidence ``"supplement"``. Declared custom ops are in ``custom``.
Details: :mod:`gebench.ops._generate`.
"""

from ._catalogue import (
    ENV_CUSTOM_OPS,
    all_schemas,
    builtin_op_types,
    clear_custom_ops,
    custom_op_types,
    get_schema,
    load_custom_ops,
    require_schema,
)
from ._infer import InferContext, infer_graph, infer_node, inferable_op_types, register_infer
from ._make import anchor_names, make_node, missing_required_attrs, with_defaults
from ._schema import AttrDef, InputDef, OpSchema, OutputDef
from .errors import CustomOpError, InferenceError, OpsError, UnknownOpError

__all__ = [
    "ENV_CUSTOM_OPS",
    "AttrDef",
    "CustomOpError",
    "InferContext",
    "InferenceError",
    "InputDef",
    "OpSchema",
    "OpsError",
    "OutputDef",
    "UnknownOpError",
    "all_schemas",
    "anchor_names",
    "builtin_op_types",
    "clear_custom_ops",
    "custom_op_types",
    "get_schema",
    "infer_graph",
    "infer_node",
    "inferable_op_types",
    "load_custom_ops",
    "make_node",
    "missing_required_attrs",
    "register_infer",
    "require_schema",
    "with_defaults",
]
