"""The numpy reference executor for :class:`gebench.ir.Graph`.

:func:`execute` runs a graph node by node in topological order. Each op type has a kernel, a plain
numpy function registered with :func:`register_kernel`; the kernels live in ``_kernels_*.py``, one module
per op family. Kernels read GE attributes (with GE's defaults) through :class:`KernelContext`.

Values: every tensor is a ``numpy.ndarray``. DT_BF16 tensors are held as float32 arrays rounded to
bfloat16 precision (numpy has no bfloat16), so a Const stored as raw bf16 bits is decoded on load.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gebench import ir

__all__ = [
    "ExecutionError",
    "Kernel",
    "KernelContext",
    "execute",
    "execute_with_values",
    "graph_inputs",
    "kernel_for",
    "memory_budget",
    "random_input",
    "register_kernel",
    "registered_op_types",
]

_log = logging.getLogger(__name__)

#: A kernel receives the context and one array per input anchor (``None`` for an unfed optional input)
#: and returns one array or a sequence of arrays (one per output anchor).
Kernel = Callable[..., "np.ndarray | Sequence[np.ndarray | None]"]

_KERNELS: dict[str, Kernel] = {}
_REQUIRED = object()
_CONST_TYPES = ("Const", "Constant")


class ExecutionError(RuntimeError):
    """A graph could not be executed: no kernel for an op, a missing attribute, a bad input, or a kernel
    that raised. The message names the graph, the node and its op type."""

    def __init__(self, message: str, *, node_name: str | None = None, op_type: str | None = None) -> None:
        super().__init__(message)
        self.node_name = node_name
        self.op_type = op_type


def register_kernel(op_types: str | Iterable[str]) -> Callable[[Kernel], Kernel]:
    """Decorator registering ``fn`` as the reference kernel of one or more op types.

    A later registration for the same op type replaces the earlier one (so a user can override a kernel
    or add one for a custom op). The kernel is called as ``fn(ctx, *inputs)``.
    """
    names = [op_types] if isinstance(op_types, str) else list(op_types)

    def decorate(fn: Kernel) -> Kernel:
        for name in names:
            _KERNELS[name] = fn
        return fn

    return decorate


def kernel_for(op_type: str) -> Kernel | None:
    """The kernel registered for ``op_type``, or None."""
    return _KERNELS.get(op_type)


def registered_op_types() -> list[str]:
    """Every op type the executor can run, sorted (Data, Const, Constant and NetOutput included)."""
    return sorted({*_KERNELS, "Data", "Const", "Constant", "NetOutput"})


# ---------------------------------------------------------------------------------------- attributes
def _schema_default(op_type: str, name: str) -> Any:
    """The catalogue default of attr ``name`` of ``op_type``, or ``_REQUIRED`` when unknown/required."""
    try:
        from gebench import ops
    except ImportError:  # the catalogue is optional for the executor
        return _REQUIRED
    try:
        schema = ops.get_schema(op_type)
    except Exception:  # noqa: BLE001 - a broken catalogue must not break execution
        return _REQUIRED
    if schema is None:
        return _REQUIRED
    for attr in schema.attrs:
        if attr.name == name and not attr.required and attr.default is not None:
            return attr.default
    return _REQUIRED


class KernelContext:
    """What a kernel may know about the node it runs: attributes, descs, and the executor (for subgraphs)."""

    def __init__(self, node: ir.Node, graph: ir.Graph, executor: _Executor) -> None:
        self.node = node
        self.graph = graph
        self._executor = executor

    @property
    def op_type(self) -> str:
        return self.node.op_type

    @property
    def num_outputs(self) -> int:
        return self.node.num_outputs

    def attr(self, name: str, default: Any = _REQUIRED) -> Any:
        """Attribute ``name`` of the node; else ``default``; else the catalogue default.

        Raises:
            ExecutionError: the attribute is absent and has no default (a required GE attr).
        """
        if name in self.node.attrs:
            return self.node.attrs[name]
        if default is not _REQUIRED:
            return default
        value = _schema_default(self.node.op_type, name)
        if value is _REQUIRED:
            raise self.error(f"required attribute {name!r} is missing; set it on the node")
        return value

    def has_attr(self, name: str) -> bool:
        return name in self.node.attrs

    def input_desc(self, index: int) -> ir.TensorDesc:
        return self.node.inputs[index]

    def output_desc(self, index: int) -> ir.TensorDesc:
        return self.node.outputs[index]

    def input_format(self, index: int) -> str:
        """Format name of input ``index`` without the ``FORMAT_`` prefix (``"ND"`` when absent)."""
        if index >= self.node.num_inputs:
            return "ND"
        return self.node.inputs[index].format.name.removeprefix("FORMAT_")

    def output_dtype(self, index: int, default: Any) -> np.dtype:
        """The numpy dtype declared on output ``index``, or ``default`` when the desc says nothing usable."""
        if index < self.node.num_outputs:
            dt = self.node.outputs[index].dtype
            if dt not in (ir.DataType.DT_UNDEFINED,):
                try:
                    return _value_dtype(dt)
                except ValueError:
                    pass
        return np.dtype(default)

    def run_subgraph(self, name: str, inputs: Sequence[np.ndarray | None], *, index_offset: int = 0) -> list[np.ndarray]:
        """Execute subgraph ``name`` of the root graph, feeding its Data nodes from ``inputs``.

        A subgraph Data node reads parent input ``_parent_node_index`` when it has that attr, else
        ``index + index_offset``.
        """
        return self._executor.run_subgraph(self, name, inputs, index_offset=index_offset)

    def error(self, message: str) -> ExecutionError:
        """An ExecutionError naming this node."""
        return ExecutionError(
            f"graph {self.graph.name!r}, node {self.node.name!r} ({self.node.op_type}): {message}",
            node_name=self.node.name,
            op_type=self.node.op_type,
        )


# ---------------------------------------------------------------------------------------- values
def _value_dtype(dt: ir.DataType) -> np.dtype:
    """The numpy dtype the executor uses for a GE dtype (bf16 -> float32)."""
    if dt == ir.DataType.DT_BF16:
        return np.dtype(np.float32)
    return ir.numpy_dtype(dt)


def round_to_bf16(array: np.ndarray) -> np.ndarray:
    """Round float values to the nearest bfloat16 (ties to even), returned as float32."""
    bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(array), np.float32(np.nan), out).astype(np.float32)


def const_array(value: ir.TensorValue) -> np.ndarray:
    """The array a Const's ``value`` stands for (bf16 bit patterns decoded to float32)."""
    if value.dtype == ir.DataType.DT_BF16:
        return (value.array.astype(np.uint32) << 16).view(np.float32)
    return value.array


#: Environment variable: the most bytes the executor may allocate for inputs (a number, or with a K/M/G suffix).
MEMORY_LIMIT_ENV = "GEBENCH_EXEC_MEMORY_LIMIT"


def _parse_bytes(text: str) -> int:
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(text[-1:], 1)
    number = text[:-1] if scale != 1 else text
    return int(float(number) * scale)


def _available_memory() -> int | None:
    """Bytes of memory available now: MemAvailable, capped by a cgroup v2 limit; None when unknown."""
    available: int | None = None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    available = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (AttributeError, ValueError, OSError):
            available = None
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as fh:
            limit = fh.read().strip()
        with open("/sys/fs/cgroup/memory.current", encoding="ascii") as fh:
            used = int(fh.read().strip())
        if limit != "max":
            room = max(int(limit) - used, 0)
            available = room if available is None else min(available, room)
    except (OSError, ValueError):
        pass
    return available


def memory_budget() -> int | None:
    """The bytes the executor may allocate for the inputs it makes: ``GEBENCH_EXEC_MEMORY_LIMIT`` when set
    (``"2G"``, ``"512M"``, a byte count), else half of the memory available now; None when unknown (no limit).

    Raises:
        ValueError: the environment variable is not a size.
    """
    value = os.environ.get(MEMORY_LIMIT_ENV, "").strip()
    if value:
        try:
            return _parse_bytes(value)
        except ValueError:
            raise ValueError(f"{MEMORY_LIMIT_ENV}={value!r} is not a size; write for example 2G or 512M") from None
    available = _available_memory()
    return None if available is None else available // 2


def format_bytes(n: float) -> str:
    """``n`` bytes as ``"74.5 GiB"``."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"


def check_memory(nbytes: int, what: str, *, budget: int | None = None) -> None:
    """Refuse an allocation of ``nbytes`` (described by ``what``) that does not fit :func:`memory_budget`.

    Raises:
        ExecutionError: naming ``what``, the size and the budget.
    """
    budget = memory_budget() if budget is None else budget
    if budget is not None and nbytes > budget:
        raise ExecutionError(
            f"{what}: needs {format_bytes(nbytes)}, more than the {format_bytes(budget)} the reference executor may "
            f"use on this machine; feed smaller shapes (or set {MEMORY_LIMIT_ENV})")


def _element_count(shape: Sequence[int]) -> int:
    return math.prod(1 if d < 0 else int(d) for d in shape)


def random_input(desc: ir.TensorDesc, rng: np.random.Generator, *, name: str = "") -> np.ndarray:
    """A seeded random array fitting ``desc``: floats ~ N(0, 1), integers in [0, 4), bools uniform.

    Unknown dimensions (-1) are taken as 1. Small non-negative integers keep integer inputs usable as
    indices and counts.

    Raises:
        ExecutionError: the rank is unknown, the dtype has no numpy type, or making the values needs more memory
            than :func:`memory_budget` allows (the message names the input, its shape and the size).
    """
    if ir.UNKNOWN_RANK in desc.shape:
        raise ExecutionError(f"input {name!r} has unknown rank; feed it explicitly")
    shape = tuple(1 if d < 0 else d for d in desc.shape)
    try:
        dtype = _value_dtype(desc.dtype)
    except ValueError as exc:
        raise ExecutionError(f"input {name!r}: {exc}; feed it explicitly") from None
    # the generator makes float64 (or int64) values first, then they are cast
    count = _element_count(shape)
    check_memory(count * (8 + dtype.itemsize), f"making random values for input {name!r} "
                 f"({desc.dtype.name}{list(desc.shape)}, {format_bytes(count * dtype.itemsize)})")
    if dtype.kind == "f":
        arr = rng.standard_normal(shape).astype(dtype)
        return round_to_bf16(arr) if desc.dtype == ir.DataType.DT_BF16 else arr
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind in "iu":
        return rng.integers(0, 4, size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind == "O":
        return np.array([f"s{int(v)}" for v in rng.integers(0, 4, size=int(np.prod(shape)))], dtype=object).reshape(shape)
    raise ExecutionError(f"input {name!r}: cannot make random values of {desc.dtype.name}; feed it explicitly")




def graph_inputs(graph: ir.Graph) -> list[ir.Node]:
    """The Data nodes of ``graph`` ordered by their ``index`` attr (then by position)."""
    data = graph.nodes_of_type("Data")
    return sorted(data, key=lambda n: (int(n.attrs.get("index", 0)), graph.position(n)))


def _data_desc(node: ir.Node) -> ir.TensorDesc:
    if node.outputs and not node.outputs[0].is_placeholder:
        return node.outputs[0]
    if node.inputs and not node.inputs[0].is_placeholder:
        return node.inputs[0]
    return node.outputs[0] if node.outputs else ir.TensorDesc()


def _graph_outputs(graph: ir.Graph) -> list[tuple[ir.Node, int]] | None:
    """The tensors feeding the NetOutput, in port order; None when the graph has no NetOutput."""
    outs = graph.nodes_of_type("NetOutput")
    if not outs:
        return None
    if len(outs) > 1:
        raise ExecutionError(f"graph {graph.name!r} has {len(outs)} NetOutput nodes; expected one")
    net = outs[0]
    result = []
    for port, prod in enumerate(graph.producers(net)):
        if prod is None:
            raise ExecutionError(f"graph {graph.name!r}: input {port} of {net.name!r} (NetOutput) is not connected")
        result.append(prod)
    return result


def _sink_outputs(graph: ir.Graph) -> list[tuple[ir.Node, int]]:
    """Without a NetOutput: every unused output of every node, in topological order."""
    result = []
    for node in graph.nodes():
        if node.op_type in _CONST_TYPES or node.op_type == "Data":
            continue
        for port in range(node.num_outputs):
            if graph.num_uses(node, port) == 0:
                result.append((node, port))
    return result


def _root(graph: ir.Graph) -> ir.Graph:
    while graph.parent_graph is not None:
        graph = graph.parent_graph
    return graph


# ---------------------------------------------------------------------------------------- executor
@dataclass
class _Feed:
    """Arrays for the Data nodes of one graph, keyed by node id."""

    by_id: dict[int, np.ndarray]


class _Executor:
    def __init__(self, root: ir.Graph) -> None:
        self.root = root

    def run(self, graph: ir.Graph, feed: _Feed, wanted: Sequence[tuple[ir.Node, int]],
            keep: Iterable[tuple[int, int]] = ()) -> dict[tuple[int, int], np.ndarray]:
        """Evaluate every node needed for ``wanted`` (plus ``keep``); returns those tensors by (id, port)."""
        targets = {(n.id, p) for n, p in wanted} | set(keep)
        needed = self._needed_nodes(graph, {nid for nid, _ in targets})
        # how many consumers still need each tensor, so memory is released as soon as possible
        remaining: dict[tuple[int, int], int] = {}
        order = [n for n in graph.nodes() if n.id in needed]
        for node in order:
            for prod in graph.producers(node):
                if prod is not None:
                    key = (prod[0].id, prod[1])
                    remaining[key] = remaining.get(key, 0) + 1
        values: dict[tuple[int, int], np.ndarray] = {}
        for node in order:
            args: list[np.ndarray | None] = []
            for prod in graph.producers(node):
                if prod is None:
                    args.append(None)
                    continue
                key = (prod[0].id, prod[1])
                if key not in values:
                    raise ExecutionError(
                        f"graph {graph.name!r}, node {node.name!r} ({node.op_type}): input from "
                        f"{prod[0].name!r}:{prod[1]} was not computed",
                        node_name=node.name, op_type=node.op_type)
                args.append(values[key])
                remaining[key] -= 1
                if remaining[key] == 0 and key not in targets:
                    del values[key]
            if node.op_type == "NetOutput":
                continue
            outs = self._run_node(graph, node, args, feed)
            for port, arr in enumerate(outs):
                key = (node.id, port)
                if remaining.get(key, 0) > 0 or key in targets:
                    values[key] = arr
        return {k: values[k] for k in targets if k in values}

    @staticmethod
    def _needed_nodes(graph: ir.Graph, target_ids: set[int]) -> set[int]:
        seen: set[int] = set()
        stack = list(target_ids)
        while stack:
            nid = stack.pop()
            if nid in seen:
                continue
            seen.add(nid)
            node = graph.node(nid)
            for prod in graph.producers(node):
                if prod is not None and prod[0].id not in seen:
                    stack.append(prod[0].id)
        return seen

    def _run_node(self, graph: ir.Graph, node: ir.Node, args: list[np.ndarray | None], feed: _Feed) -> list[np.ndarray]:
        op = node.op_type
        if op == "Data":
            if node.id not in feed.by_id:
                raise ExecutionError(f"graph {graph.name!r}: Data node {node.name!r} was not fed",
                                     node_name=node.name, op_type=op)
            return [feed.by_id[node.id]]
        if op in _CONST_TYPES:
            value = node.attrs.get("value")
            if not isinstance(value, ir.TensorValue):
                raise ExecutionError(f"graph {graph.name!r}, node {node.name!r} ({op}): attr 'value' holds no tensor",
                                     node_name=node.name, op_type=op)
            return [const_array(value)]
        kernel = _KERNELS.get(op)
        if kernel is None:
            raise ExecutionError(
                f"graph {graph.name!r}, node {node.name!r}: no reference kernel for op type {op!r}; "
                f"register one with gebench.exec.register_kernel({op!r})",
                node_name=node.name, op_type=op)
        ctx = KernelContext(node, graph, self)
        try:
            result = kernel(ctx, *args)
        except ExecutionError:
            raise
        except Exception as exc:  # noqa: BLE001 - re-raised with the node named
            shapes = ", ".join("None" if a is None else f"{a.dtype}{list(a.shape)}" for a in args)
            raise ExecutionError(
                f"graph {graph.name!r}, node {node.name!r} ({op}) with inputs ({shapes}) raised "
                f"{type(exc).__name__}: {exc}", node_name=node.name, op_type=op) from exc
        outs = [np.asarray(result)] if isinstance(result, (np.ndarray, np.generic)) else list(result)
        if len(outs) < node.num_outputs:
            raise ExecutionError(
                f"graph {graph.name!r}, node {node.name!r} ({op}): kernel returned {len(outs)} outputs, "
                f"node has {node.num_outputs}", node_name=node.name, op_type=op)
        return [np.asarray(o) if o is not None else np.zeros((0,), np.float32) for o in outs[: max(node.num_outputs, 1)]]

    def run_subgraph(self, ctx: KernelContext, name: str, inputs: Sequence[np.ndarray | None], *,
                     index_offset: int) -> list[np.ndarray]:
        sub = self.root.subgraphs.get(name)
        if sub is None:
            raise ctx.error(f"subgraph {name!r} does not exist in graph {self.root.name!r}")
        by_id: dict[int, np.ndarray] = {}
        for data in sub.nodes_of_type("Data"):
            if "_parent_node_index" in data.attrs:
                idx = int(data.attrs["_parent_node_index"])
            else:
                idx = int(data.attrs.get("index", 0)) + index_offset
            if not 0 <= idx < len(inputs) or inputs[idx] is None:
                raise ctx.error(f"subgraph {name!r}: Data node {data.name!r} reads parent input {idx}, which is not fed")
            by_id[data.id] = inputs[idx]
        wanted = _graph_outputs(sub)
        if wanted is None:
            wanted = _sink_outputs(sub)
        # a subgraph NetOutput input may name the parent output it fills
        order = list(range(len(wanted)))
        nets = sub.nodes_of_type("NetOutput")
        if nets:
            parent_idx = [nets[0].inputs[i].attrs.get("_parent_node_index", i) for i in range(len(wanted))]
            order = sorted(range(len(wanted)), key=lambda i: int(parent_idx[i]))
        values = self.run(sub, _Feed(by_id), wanted)
        return [values[(wanted[i][0].id, wanted[i][1])] for i in order]


def _shape_fits(desc_shape: Sequence[int], shape: Sequence[int]) -> bool:
    """Whether an array of ``shape`` fits a desc of ``desc_shape`` (-1 dims match anything; -2 any rank)."""
    if ir.UNKNOWN_RANK in desc_shape:
        return True
    return len(desc_shape) == len(shape) and all(d < 0 or d == s for d, s in zip(desc_shape, shape))


def _given_input(graph: ir.Graph, node: ir.Node, desc: ir.TensorDesc, value: Any, check: bool) -> np.ndarray:
    """``value`` as the array of Data ``node``: cast to the desc's dtype, shape checked against the desc."""
    what = f"graph {graph.name!r}: input {node.name!r} (index {node.attrs.get('index', 0)})"
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:
        raise ExecutionError(f"{what}: the value given is not an array: {exc}", node_name=node.name,
                             op_type=node.op_type) from None
    if desc.is_placeholder or desc.dtype == ir.DataType.DT_UNDEFINED:
        return arr
    if check and not _shape_fits(desc.shape, arr.shape):
        raise ExecutionError(f"{what} is {desc.dtype.name}{list(desc.shape)} but an array of shape {list(arr.shape)} "
                             "was given; feed an array of the Data node's shape", node_name=node.name,
                             op_type=node.op_type)
    try:
        want = _value_dtype(desc.dtype)
    except ValueError:
        return arr
    if arr.dtype == want or want.kind == "O" or arr.dtype.kind == "O":
        return arr
    if check and not np.can_cast(arr.dtype, want, casting="same_kind"):
        raise ExecutionError(f"{what} is {desc.dtype.name} but {arr.dtype} values were given, which do not cast to "
                             f"{want} without changing kind; convert them first (numpy.asarray(value, "
                             f"numpy.{want.name}))", node_name=node.name, op_type=node.op_type)
    try:
        return arr.astype(want)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ExecutionError(f"{what} is {desc.dtype.name}; the {arr.dtype} values given cannot be cast to {want}: "
                             f"{exc}", node_name=node.name, op_type=node.op_type) from None


def _build_feed(graph: ir.Graph, inputs: Mapping[str | int, Any] | Sequence[Any] | None, seed: int,
                check: bool = False) -> _Feed:
    data_nodes = graph_inputs(graph)
    by_id: dict[int, np.ndarray] = {}
    given: dict[int, Any] = {}
    if inputs is None:
        pass
    elif isinstance(inputs, Mapping):
        by_name = {n.name: n for n in data_nodes}
        by_index = {int(n.attrs.get("index", 0)): n for n in data_nodes}
        for key, value in inputs.items():
            node = by_index.get(key) if isinstance(key, (int, np.integer)) else by_name.get(key)
            if node is None:
                raise ExecutionError(
                    f"graph {graph.name!r} has no Data node {key!r}; its inputs are "
                    f"{[n.name for n in data_nodes]}")
            given[node.id] = value
    else:
        values = list(inputs)
        if len(values) > len(data_nodes):
            raise ExecutionError(f"graph {graph.name!r} takes {len(data_nodes)} inputs, {len(values)} were given")
        for node, value in zip(data_nodes, values):
            if value is not None:
                given[node.id] = value
    for node in data_nodes:
        desc = _data_desc(node)
        if node.id in given:
            by_id[node.id] = _given_input(graph, node, desc, given[node.id], check)
        else:
            index = int(node.attrs.get("index", 0))
            rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, index])
            by_id[node.id] = random_input(desc, rng, name=node.name)
    return _Feed(by_id)


def execute(graph: Any, inputs: Mapping[str | int, Any] | Sequence[Any] | None = None, *, seed: int = 0,
            check_inputs: bool = True) -> list[np.ndarray]:
    """Run ``graph`` on the numpy reference kernels and return its outputs.

    Args:
        graph: an ``ir.Graph`` (or a ``ge.graph.Graph``).
        inputs: arrays for the Data nodes: a dict keyed by Data node name (or by its ``index`` attr as
            an int), or a list ordered by ``index``. Arrays are cast to the Data desc's dtype. Data nodes
            left out get seeded random values (see :func:`random_input`), from ``seed`` and their index.
        seed: seed for the inputs not given.
        check_inputs: refuse an array whose shape does not fit its Data desc (``-1`` dims match any size) or
            whose dtype would change kind in the cast (floats to an int input, say). False only casts (the
            equivalence checks feed tensors whose descs may predate shape inference).

    Returns:
        The graph outputs in NetOutput port order. A graph without NetOutput returns every unused output
        of every node, in topological order.

    Cost: one kernel call per node needed for the outputs; intermediate tensors are freed after their
    last use.

    Raises:
        ExecutionError: an op has no kernel (message names the node and op type), an attribute is
            missing, an input name is unknown, an input has the wrong shape or a dtype it cannot be cast from
            (message names the input), or a kernel raised.
    """
    g = ir.as_graph(graph)
    feed = _build_feed(g, inputs, seed, check=check_inputs)
    wanted = _graph_outputs(g)
    if wanted is None:
        wanted = _sink_outputs(g)
    values = _Executor(_root(g)).run(g, feed, wanted)
    return [values[(n.id, p)] for n, p in wanted]


def execute_with_values(graph: ir.Graph, feed_by_id: Mapping[int, np.ndarray],
                        tensors: Sequence[tuple[int, int]]) -> dict[tuple[int, int], np.ndarray]:
    """Run ``graph`` with Data arrays keyed by node id and return the tensors ``(node id, port)`` asked for.

    Used by the equivalence checks to read intermediate tensors (rewrite boundaries) in context.
    Data nodes missing from ``feed_by_id`` get seeded random values (seed 0).
    """
    feed = _build_feed(graph, None, 0)
    feed.by_id.update({k: np.asarray(v) for k, v in feed_by_id.items()})
    wanted = [(graph.node(nid), port) for nid, port in tensors]
    return _Executor(_root(graph)).run(graph, feed, wanted)
