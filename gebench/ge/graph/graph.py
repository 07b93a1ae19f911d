"""``Graph`` of the ``ge.graph`` facade (spec §2.3.1): a view of one :class:`gebench.ir.Graph`."""

from __future__ import annotations

import enum
import itertools
import logging
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from gebench import ir
from gebench._atomic import write_text_atomically

from ._attr import _AttrValue
from .node import Node, _check_int, _check_str, _got

__all__ = ["Graph", "DumpFormat"]

_log = logging.getLogger(__name__)


class DumpFormat(enum.Enum):
    """Formats of :meth:`Graph.dump_to_file` / :meth:`Graph.dump_to_stream`."""

    kOnnx = 0
    kTxt = 1
    kReadable = 2


def _io_dump(kind: str, level: int) -> Callable[[ir.Graph], str]:
    """A renderer using gebench.io's dump writer (imported on first use: it needs onnx/protobuf)."""

    def render(graph: ir.Graph) -> str:
        from gebench.io.ge_dump import dump_text

        return dump_text(graph, kind, level)

    return render


def _io_save_air(graph: ir.Graph, path: str) -> None:
    from gebench.io.air import save_air

    save_air(graph, path)


def _io_load_air(path: str) -> ir.Graph:
    from gebench.io.air import load_air

    return load_air(path)


# Renderers turn an ir.Graph into dump text. As in GE, kOnnx through this API is written at level 3 (no descs)
# and kTxt without Const data (level 2); kReadable is gebench's one-line-per-node text form.
_RENDERERS: dict[DumpFormat, Callable[[ir.Graph], str]] = {
    DumpFormat.kReadable: lambda g: ir.to_text(g),
    DumpFormat.kTxt: _io_dump("ge_proto", 2),
    DumpFormat.kOnnx: _io_dump("onnx", 3),
}
_AIR_IO: dict[str, Callable[..., Any]] = {"save": _io_save_air, "load": _io_load_air}
_FILE_PREFIX = {DumpFormat.kOnnx: ("ge_onnx", ".pbtxt"), DumpFormat.kTxt: ("ge_proto", ".txt"),
                DumpFormat.kReadable: ("ge_readable", ".txt")}
_DUMP_COUNTERS = {fmt: itertools.count() for fmt in DumpFormat}
_DUMP_LOCK = threading.Lock()


def register_dump_renderer(fmt: DumpFormat, render: Callable[[ir.Graph], str]) -> None:
    """Make ``dump_to_stream``/``dump_to_file`` render ``fmt`` with ``render(ir_graph) -> str`` (replacing the
    default: gebench.io's ge_proto/ge_onnx writers, and the IR text form for ``kReadable``)."""
    _RENDERERS[fmt] = render


def register_air_io(save: Callable[[ir.Graph, str], None], load: Callable[[str], ir.Graph]) -> None:
    """Make ``save_to_air``/``load_from_air`` use ``save(ir_graph, path)`` and ``load(path) -> ir.Graph`` instead of
    gebench.io's AIR writer and reader."""
    _AIR_IO["save"] = save
    _AIR_IO["load"] = load


def _no_copy(obj: object, deep: bool = False) -> NoReturn:
    raise RuntimeError(f"{type(obj).__name__} does not support {'deepcopy' if deep else 'copy'}")


_FORMAT_CHOICES = "Format must be in [DumpFormat.kOnnx, DumpFormat.kTxt, DumpFormat.kReadable]"


class Graph:
    """A GE graph: nodes, data and control edges, attrs and subgraphs.

    ``Graph(name="graph")`` makes an empty owning graph. Graphs handed to a pass's ``run`` are borrowed views of
    the live graph. ``str(graph)`` is ``dump_to_stream(DumpFormat.kReadable)``.

    Beyond GE's API, :attr:`ir` is gebench's own IR graph behind the view (``docs/ir.md``): the one name by which
    every graph gebench hands out (``gebench.load``, ``Run.graph``, ``Run.snapshots``, ``Workbench.graph``)
    reaches the IR.

    Raises:
        TypeError: ``name`` is not a str.
    """

    def __init__(self, name: str = "graph") -> None:
        _check_str(name, "Graph name must be a string")
        self._ir = ir.Graph(name)
        self._owns = True
        self._handle: object | None = True

    @classmethod
    def _wrap(cls, ir_graph: ir.Graph, *, owns: bool = False) -> Graph:
        """A facade over ``ir_graph`` itself (a borrowed view unless ``owns``)."""
        obj = cls.__new__(cls)
        obj._ir = ir_graph
        obj._owns = owns
        obj._handle = True
        return obj

    def _invalidate(self) -> None:
        """Mark this graph consumed (its ownership moved, for example into a ``Pattern``)."""
        self._handle = None

    def _live(self) -> ir.Graph:
        if self._handle is None:
            raise RuntimeError(f"graph {self._ir.name!r} is no longer valid: it was consumed "
                               "(for example by create_pattern or a graph builder); build a new graph")
        return self._ir

    def _root(self) -> ir.Graph:
        g = self._live()
        while g.parent_graph is not None:
            g = g.parent_graph
        return g

    def _own_node(self, node: Any, what: str, failure: str = "") -> ir.Node:
        """The IR node of ``node`` (``what`` names the argument). Raises ``TypeError`` (GE's "<what> must be a
        Node") and ``RuntimeError`` starting with ``failure`` (GE's message) for a node of another graph."""
        if not isinstance(node, Node):
            raise TypeError(f"{what} must be a Node" + _got(node))
        g = self._live()
        if node._ir_node not in g:
            raise RuntimeError(f"{failure}: " * bool(failure) + f"{what} {node._ir_node.name!r} is not a node of "
                               f"graph {g.name!r}")
        return node._ir_node

    # -- identity and nodes
    @property
    def name(self) -> str:
        return self._live().name

    @property
    def ir(self) -> ir.Graph:
        """The :class:`gebench.ir.Graph` this view shows (not part of GE's API; read-only, O(1)).

        It is the graph itself, not a copy: an edit through it is an edit of this graph (edit a node in place only
        after ``graph.ir.touch(node)``, as ``docs/ir.md`` asks).

        Raises:
            RuntimeError: the graph was consumed (for example by ``create_pattern``).
        """
        return self._live()

    def get_direct_nodes(self) -> list[Node]:
        """The nodes of this graph (not of its subgraphs), in topological order."""
        return [Node._wrap(n) for n in self._live().nodes()]

    def get_all_nodes(self) -> list[Node]:
        """Every node, depth first: each node is followed by the nodes of the subgraphs it owns. O(n log n)."""
        root = self._root()
        out: list[Node] = []
        seen: set[str] = set()

        def visit(g: ir.Graph) -> None:
            for n in g.nodes():
                out.append(Node._wrap(n))
                for sub_name in n.subgraph_names:
                    sub = root.subgraphs.get(sub_name)
                    if sub is not None and sub_name not in seen:
                        seen.add(sub_name)
                        visit(sub)

        visit(self._live())
        return out

    def find_node_by_name(self, name: str) -> Node:
        """The node called ``name`` (this graph first, then its subgraphs).

        Raises:
            TypeError: ``name`` is not a str.
            RuntimeError: there is no such node (never returns None).
        """
        _check_str(name, "name must be a string")
        g = self._live()
        found = g.find(name)
        if found is None:
            for n in self.get_all_nodes():
                if n.name == name:
                    return n
            raise RuntimeError(f"Failed to find Node name {name}: graph {g.name!r} has no node of that name")
        return Node._wrap(found)

    # -- attrs
    def get_attr(self, key: str) -> Any:
        """Graph attr ``key`` (marshalled as for nodes). Raises TypeError / RuntimeError when absent."""
        _check_str(key, "Attribute key must be a string")
        g = self._live()
        if key not in g.attrs:
            raise RuntimeError(f"Failed to get attribute '{key}' from Graph {g.name}: the graph has no such attr")
        return _AttrValue.from_ir(g.attrs[key], f"attr {key!r} of graph {g.name!r}")

    def set_attr(self, key: str, value: Any) -> None:
        """Set graph attr ``key``. Raises TypeError (key) / ValueError (value kind)."""
        _check_str(key, "Attribute key must be a string")
        g = self._live()
        g.attrs[key] = _AttrValue.to_ir(value, f"attr {key!r} of graph {g.name!r}")

    # -- mutation
    def remove_node(self, node: Node) -> None:
        """Disconnect ``node`` from everything and remove it.

        Raises:
            TypeError: ``node`` is not a Node.
            RuntimeError: ``node`` is not in this graph.
        """
        failure = f"Failed to remove Node {node.name} from Graph {self.name}" if isinstance(node, Node) else ""
        n = self._own_node(node, "node", failure)
        self._live().remove_node(n)

    def _edge_args(self, src: Any, src_port: Any, dst: Any, dst_port: Any,
                   failure: Callable[[], str]) -> tuple[ir.Node, int, ir.Node, int]:
        """Arguments checked in GE's order (source node, its port, destination node, its port); ``failure()``
        is GE's message for an edge that cannot be changed."""
        if not isinstance(src, Node):
            raise TypeError("src_node must be a Node" + _got(src))
        _check_int(src_port, "src_port_index must be an integer")
        if not isinstance(dst, Node):
            raise TypeError("dst_node must be a Node" + _got(dst))
        _check_int(dst_port, "dst_port_index must be an integer")
        return (self._own_node(src, "src_node", failure()), src_port, self._own_node(dst, "dst_node", failure()),
                dst_port)

    def add_data_edge(self, src: Node, src_port: int, dst: Node, dst_port: int) -> None:
        """Connect output ``src_port`` of ``src`` to input ``dst_port`` of ``dst``.

        Raises:
            TypeError: a node is not a Node or a port not an int.
            RuntimeError: a port does not exist, the input is already fed, or the edge would close a cycle.
        """
        def failure() -> str:
            return (f"Failed to add DataEdge from Node {src.name}, Port Index {src_port} to Node {dst.name}, "
                    f"Port Index {dst_port}")

        s, sp, d, dp = self._edge_args(src, src_port, dst, dst_port, failure)
        try:
            self._live().add_edge(s, sp, d, dp)
        except ir.GraphError as exc:
            raise RuntimeError(f"{failure()}: {exc}") from exc

    def add_control_edge(self, src: Node, dst: Node) -> None:
        """Add a control edge ``src -> dst``. Raises TypeError / RuntimeError as :meth:`add_data_edge`."""
        if not isinstance(src, Node):
            raise TypeError("src_node must be a Node" + _got(src))
        if not isinstance(dst, Node):
            raise TypeError("dst_node must be a Node" + _got(dst))
        failure = f"Failed to add Control from Node {src.name} to Node {dst.name}"
        s = self._own_node(src, "src_node", failure)
        d = self._own_node(dst, "dst_node", failure)
        try:
            self._live().add_control_edge(s, d)
        except ir.GraphError as exc:
            raise RuntimeError(f"{failure}: {exc}") from exc

    def remove_edge(self, src: Node, src_port: int, dst: Node, dst_port: int) -> None:
        """Remove a data edge, or the control edge ``src -> dst`` when both ports are ``-1``.

        Raises:
            TypeError: a node is not a Node or a port not an int.
            RuntimeError: there is no such edge.
        """
        def failure() -> str:
            return (f"Failed to remove Edge from Node {src.name}, Port Index {src_port} to Node {dst.name}, "
                    f"Port Index {dst_port}")

        s, sp, d, dp = self._edge_args(src, src_port, dst, dst_port, failure)
        g = self._live()
        try:
            if sp == ir.CONTROL_PORT and dp == ir.CONTROL_PORT:
                g.remove_control_edge(s, d)
            else:
                g.remove_edge(s, sp, d, dp)
        except ir.GraphError as exc:
            raise RuntimeError(f"{failure()}: {exc}") from exc

    # -- subgraphs
    def get_all_subgraphs(self) -> list[Graph]:
        """Every subgraph of the root graph, as borrowed views, in name order."""
        root = self._root()
        return [Graph._wrap(root.subgraphs[k]) for k in sorted(root.subgraphs)]

    def get_subgraph(self, name: str) -> Graph | None:
        """The subgraph called ``name`` or None."""
        _check_str(name, "name must be a string")
        sub = self._root().subgraphs.get(name)
        return None if sub is None else Graph._wrap(sub)

    def add_subgraph(self, subgraph: Graph) -> None:
        """Attach ``subgraph`` to the root graph. Raises TypeError / RuntimeError (name taken)."""
        if not isinstance(subgraph, Graph):
            raise TypeError("subgraph must be a Graph" + _got(subgraph))
        try:
            self._root().add_subgraph(subgraph._live())
        except ir.GraphError as exc:
            raise RuntimeError(f"Failed to add subgraph '{subgraph.name}' to graph '{self.name}': {exc}") from exc
        subgraph._owns = False

    def remove_subgraph(self, name: str) -> None:
        """Detach the subgraph called ``name``. Raises TypeError / RuntimeError (absent)."""
        _check_str(name, "name must be a string")
        try:
            self._root().remove_subgraph(name)
        except ir.GraphError as exc:
            raise RuntimeError(f"Failed to remove subgraph '{name}' from graph '{self.name}': {exc}") from exc

    # -- dumps and files
    def dump_to_stream(self, format: DumpFormat = DumpFormat.kReadable) -> str:
        """The graph rendered in ``format``.

        Raises:
            TypeError: ``format`` is not a DumpFormat.
            RuntimeError: the format needs a writer that is not available.
        """
        if not isinstance(format, DumpFormat):
            raise TypeError(_FORMAT_CHOICES + _got(format))
        render = _RENDERERS[format]
        failure = f"Failed to dump graph: {self.name} to stream"
        try:
            return render(self._live())
        except ImportError as exc:
            raise RuntimeError(f"{failure}: {format.name} dumps need gebench.io, which cannot be imported: "
                               f"{exc}") from exc
        except ValueError as exc:  # gebench.io's GeDumpError: a value GE cannot store
            raise RuntimeError(f"{failure}: {format.name}: {exc}") from exc

    def dump_to_file(self, format: DumpFormat = DumpFormat.kReadable, suffix: str = "") -> None:
        """Write the graph as GE names its dumps: ``<dir>/ge_<kind>_<IDX8>_graph_0_<suffix>.<ext>``.

        ``<dir>`` follows GE: ``$NPU_COLLECT_PATH/extra-info/graph/<pid>_0/``,
        ``$DUMP_GRAPH_PATH/pid_<pid>_deviceid_0/``, ``$ASCEND_WORK_PATH/`` or the current directory.

        Raises:
            TypeError: ``format`` is not a DumpFormat or ``suffix`` not a str.
            RuntimeError: the file cannot be written or the format has no writer.
        """
        _check_str(suffix, "Suffix must be a string")
        if not isinstance(format, DumpFormat):
            raise TypeError(_FORMAT_CHOICES + _got(format))
        failure = f"Failed to dump graph: {self.name} to file format {format} with suffix {suffix}"
        try:
            text = self.dump_to_stream(format)
        except RuntimeError as exc:
            raise RuntimeError(f"{failure}: {exc}") from exc
        prefix, ext = _FILE_PREFIX[format]
        with _DUMP_LOCK:
            index = next(_DUMP_COUNTERS[format])
        clean = re.sub(r'[/\\:*?"<>|]', "_", suffix)
        path = _dump_dir() / f"{prefix}_{index:08d}_graph_0_{clean}{ext}"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_text_atomically(path, text)  # other processes may dump into the same folder
        except OSError as exc:
            raise RuntimeError(f"{failure}: cannot write {path}: {exc}") from exc

    def save_to_air(self, file_path: str) -> None:
        """Write the graph as an AIR file (binary GE ModelDef).

        Raises:
            TypeError: ``file_path`` is not a str.
            RuntimeError: writing fails or no AIR writer is available.
        """
        _check_str(file_path, "file_path must be a string")
        save = _air("save")
        try:
            save(self._live(), file_path)
        except (OSError, ValueError, ImportError) as exc:
            raise RuntimeError(f"Failed to save graph to AIR format: graph {self.name!r} to {file_path}: {exc}") \
                from exc

    def load_from_air(self, file_path: str) -> None:
        """Replace this graph's content with the graph in AIR file ``file_path``.

        Raises:
            TypeError: ``file_path`` is not a str.
            RuntimeError: reading fails or no AIR reader is available.
        """
        _check_str(file_path, "file_path must be a string")
        load = _air("load")
        try:
            self._ir = load(file_path)
        except (OSError, ValueError, ImportError) as exc:
            raise RuntimeError(f"Failed to load graph from AIR format: {file_path}: {exc}") from exc
        self._handle = True

    # -- python protocol
    def __str__(self) -> str:
        return self.dump_to_stream(DumpFormat.kReadable)

    def __repr__(self) -> str:
        g = self._ir
        return f"<Graph {g.name!r}: {len(g)} nodes{'' if self._handle else ', consumed'}>"

    def __copy__(self) -> NoReturn:
        _no_copy(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> NoReturn:
        _no_copy(self, deep=True)


def _air(kind: str) -> Callable[..., Any]:
    return _AIR_IO[kind]


def _dump_dir() -> Path:
    pid = os.getpid()
    if os.environ.get("NPU_COLLECT_PATH"):
        return Path(os.environ["NPU_COLLECT_PATH"]) / "extra-info" / "graph" / f"{pid}_0"
    if os.environ.get("DUMP_GRAPH_PATH"):
        return Path(os.environ["DUMP_GRAPH_PATH"]) / f"pid_{pid}_deviceid_0"
    if os.environ.get("ASCEND_WORK_PATH"):
        return Path(os.environ["ASCEND_WORK_PATH"])
    return Path(".")
