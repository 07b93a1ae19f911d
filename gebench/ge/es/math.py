"""``ge.es.math``: ES op functions for ops of the math ops repository (plus the placements GE's samples rely on: GEMM, MatMul, TensorMove).

One function per op type, generated from the catalogue by :mod:`gebench.ge.es._opgen` on first access, plus an
``<Op>Output`` class per multi-output op. Like GE's generated plugin modules it also carries the helper names
``GraphBuilder, TensorHolder, Graph, Tensor, DataType, Format, List, Optional, Union`` (star imports bring them).
"""

from typing import List, Optional, Union  # noqa: F401, UP035  (part of the module's public names, as in GE)

from gebench.ge.graph import Graph, Tensor  # noqa: F401
from gebench.ge.graph.types import DataType, Format  # noqa: F401

from ._opgen import install_plugin
from .graph_builder import GraphBuilder  # noqa: F401
from .tensor_holder import TensorHolder  # noqa: F401

_HELPERS = ("GraphBuilder", "TensorHolder", "Graph", "Tensor", "DataType", "Format", "List", "Optional", "Union")

install_plugin("math", globals())
