"""gebench's graph IR: GE semantics in index tables, with a live networkx view (``Graph.nx_graph``).

Public surface: :class:`Graph` (and :class:`StagedGraph` for builders), :class:`Node`, :class:`TensorDesc`, :class:`TensorValue`,
:class:`DataType`, :class:`Format`, the text form (:func:`to_text`, :func:`parse_text`) and the errors.
"""

from ._coerce import as_graph
from ._collector import collector_paused, full_collections_deferred, promote_young
from ._graph import CONTROL_PORT, Graph, StagedGraph
from ._journal import GraphJournal, first_difference
from ._node import NO_INPUTS, Node
from ._tensor import (
    UNKNOWN_DIM,
    UNKNOWN_RANK,
    TensorDesc,
    TensorValue,
    copy_attrs,
    trusted_desc,
    trusted_value,
)
from ._text import parse_text, to_text
from ._types import DataType, Format, data_type_from_numpy, numpy_dtype
from .errors import CycleError, GraphError, TextFormError

__all__ = [
    "CONTROL_PORT",
    "CycleError",
    "DataType",
    "Format",
    "Graph",
    "GraphError",
    "GraphJournal",
    "NO_INPUTS",
    "Node",
    "StagedGraph",
    "TensorDesc",
    "TensorValue",
    "TextFormError",
    "UNKNOWN_DIM",
    "UNKNOWN_RANK",
    "as_graph",
    "collector_paused",
    "copy_attrs",
    "data_type_from_numpy",
    "first_difference",
    "full_collections_deferred",
    "promote_young",
    "numpy_dtype",
    "parse_text",
    "to_text",
    "trusted_desc",
    "trusted_value",
]
