"""Op schemas: the ordered inputs, outputs, attributes and subgraph slots of one GE op type."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Literal

from gebench.ir import TensorValue

__all__ = ["InputDef", "OutputDef", "AttrDef", "OpSchema"]

InputKind = Literal["required", "optional", "dynamic"]
OutputKind = Literal["required", "dynamic"]


@dataclasses.dataclass(frozen=True)
class InputDef:
    """One IR input: ``kind`` is ``"required"``, ``"optional"`` or ``"dynamic"``; ``dtypes`` is the prototype's
    type-constraint text (for example ``"TensorType({DT_FLOAT, DT_FLOAT16})"``)."""

    name: str
    kind: InputKind
    dtypes: str = ""


@dataclasses.dataclass(frozen=True)
class OutputDef:
    """One IR output: ``kind`` is ``"required"`` or ``"dynamic"``."""

    name: str
    kind: OutputKind
    dtypes: str = ""


@dataclasses.dataclass(frozen=True)
class AttrDef:
    """One IR attribute.

    ``default`` is already a Python value (``False``, ``1``, ``1e-4``, ``"NHWC"``, ``[1, 1, 1, 1]``, a
    :class:`~gebench.ir.DataType` member, an empty :class:`~gebench.ir.TensorValue`), or ``None`` when the attr
    is required. Treat it as read-only; :meth:`default_copy` returns a private copy. ``default_literal`` is the
    default as written in the prototype (``None`` when required).
    """

    name: str
    type: str
    required: bool
    default: Any = None
    default_literal: str | None = None

    def default_copy(self) -> Any:
        """A copy of ``default`` that the caller may mutate."""
        if isinstance(self.default, TensorValue):
            return self.default.copy()
        return copy.deepcopy(self.default)


@dataclasses.dataclass(frozen=True)
class OpSchema:
    """The prototype of one op type.

    Anchor order of a node is the order of ``inputs`` / ``outputs``, with each dynamic entry expanded to its
    instances (``x0``, ``x1``, ...). ``es_module`` is ``"math"``, ``"nn"``, ``"custom"`` or ``""`` (only in
    ``ge.es.all``); see :mod:`gebench.ops._generate` for the rule.
    """

    op_type: str
    inputs: tuple[InputDef, ...]
    outputs: tuple[OutputDef, ...]
    attrs: tuple[AttrDef, ...]
    subgraphs: tuple[str, ...] = ()
    source_repo: str = ""
    es_module: str = ""
    source_path: str = ""
    confidence: str = ""
    category: str = ""

    def input(self, name: str) -> InputDef | None:
        """The input called ``name`` or None. O(inputs)."""
        return next((i for i in self.inputs if i.name == name), None)

    def output(self, name: str) -> OutputDef | None:
        """The output called ``name`` or None. O(outputs)."""
        return next((o for o in self.outputs if o.name == name), None)

    def attr(self, name: str) -> AttrDef | None:
        """The attr called ``name`` or None. O(attrs)."""
        return next((a for a in self.attrs if a.name == name), None)

    @property
    def is_custom(self) -> bool:
        return self.es_module == "custom"

    @property
    def has_dynamic_inputs(self) -> bool:
        return any(i.kind == "dynamic" for i in self.inputs)

    @property
    def has_dynamic_outputs(self) -> bool:
        return any(o.kind == "dynamic" for o in self.outputs)

    def required_attrs(self) -> tuple[AttrDef, ...]:
        return tuple(a for a in self.attrs if a.required)

    def input_layout(self, num_anchors: int) -> dict[str, list[int]]:
        """Map each IR input name to the anchor indices it occupies on a node with ``num_anchors`` inputs.

        A dynamic input takes whatever anchors the static ones leave; when a node has fewer anchors than the
        static inputs need (trailing optional inputs dropped, as some dumps do) the missing ones map to ``[]``.
        O(inputs).

        Raises:
            ValueError: the op has more than one dynamic input, so the split is ambiguous.
        """
        return _layout([(i.name, i.kind == "dynamic") for i in self.inputs], num_anchors, self.op_type, "input")

    def output_layout(self, num_anchors: int) -> dict[str, list[int]]:
        """Like :meth:`input_layout` for outputs."""
        return _layout([(o.name, o.kind == "dynamic") for o in self.outputs], num_anchors, self.op_type, "output")


def _layout(defs: list[tuple[str, bool]], n: int, op_type: str, what: str) -> dict[str, list[int]]:
    dynamic = [name for name, dyn in defs if dyn]
    if len(dynamic) > 1:
        raise ValueError(f"op {op_type!r} has several dynamic {what}s {dynamic}; anchor split is ambiguous")
    n_static = len(defs) - len(dynamic)
    n_dyn = max(0, n - n_static)
    out: dict[str, list[int]] = {}
    idx = 0
    for name, dyn in defs:
        count = n_dyn if dyn else 1
        out[name] = [i for i in range(idx, idx + count) if i < n]
        idx += count
    return out
