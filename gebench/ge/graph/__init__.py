"""``ge.graph``: GE's graph, node, tensor and enum types over gebench's IR (spec §2.3).

Exactly GE's ``__all__``: ``Graph, Node, Operator, DataType, Format, Placement, Shape, Tensor, TensorDesc,
DumpFormat``. Submodules: ``types``, ``graph``, ``node``, ``tensor``, ``tensor_desc``, ``operator``.
"""

from .graph import DumpFormat, Graph
from .node import Node
from .operator import Operator
from .tensor import Tensor
from .tensor_desc import Shape, TensorDesc
from .types import DataType, Format, Placement

__all__ = ["Graph", "Node", "Operator", "DataType", "Format", "Placement", "Shape", "Tensor", "TensorDesc",
           "DumpFormat"]
