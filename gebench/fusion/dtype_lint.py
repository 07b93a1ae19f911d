"""The "pattern ignores dtype" lint: a match whose tensors have other dtypes than the pattern was built with.

GE's pattern matcher compares op types (and, when enabled, const values and IR attrs), never tensor dtypes: a
pattern built from ``create_input(0, data_type=DT_FLOAT16)`` also matches int4 weights, and its replacement is
then applied to tensors it was never written for (the trap that fused w4a4 weights in a known vLLM-Ascend bug).
gebench accepts such a match exactly as GE does and writes a ``pattern_dtype_mismatch`` LINT record naming the
pass, the pattern, the target node, its output port and both dtypes.

Only pattern inputs (Data wildcards, ``create_input(..., data_type=...)``) that *state* a dtype are compared: GE's
default tensor desc is ``DT_FLOAT`` (``create_input``'s default), so an input of ``DT_FLOAT`` or ``DT_UNDEFINED``
says nothing and is never compared (a pattern written for ``DT_FLOAT`` on purpose cannot be told apart from one that
states nothing). Const and op nodes of a pattern are not compared: the builder picks their descs itself (a literal
in ``x + 0`` makes a ``DT_INT64`` Const, op outputs keep the default), so they state nothing the author chose.
A target tensor whose dtype is ``DT_UNDEFINED`` (not known yet) is not a mismatch either.

Cost: :func:`stated_dtypes` is O(pattern) once per pattern; :func:`check_match` is O(stated descs) per match and
the runtime calls it only for patterns with stated descs, so the common pattern costs nothing per match.
"""

from __future__ import annotations

from typing import Any

from gebench import ir

__all__ = ["RULE", "check_match", "stated_dtypes"]

#: The lint's rule name (``record.detail["rule"]``).
RULE = "pattern_dtype_mismatch"

_UNSTATED = frozenset({ir.DataType.DT_FLOAT, ir.DataType.DT_UNDEFINED})


def stated_dtypes(pattern: Any) -> tuple[tuple[int, str, int, Any], ...]:
    """``(pattern node id, pattern node name, 0, dtype)`` for every Data wildcard of ``pattern`` (a validated
    :class:`~gebench.fusion.PatternGraph`) whose desc states a dtype."""
    out = []
    for pid in pattern.data_ids:
        pnode = pattern.nodes[pid]
        outputs = pnode.node.outputs
        if outputs and outputs[0].dtype not in _UNSTATED:
            out.append((pid, pnode.name, 0, outputs[0].dtype))
    return tuple(out)


def check_match(recorder: Any, match: Any, stated: tuple[tuple[int, str, int, Any], ...]) -> int:
    """Lint every tensor of ``match`` whose dtype differs from the stated one; returns the number of lints written.

    A Data wildcard's tensor is its bound producer's output. One lint per
    (pattern, target node, port) and recorder (a pass on one graph), so a pattern re-matching the same tensor after
    a rewrite does not repeat it. ``recorder`` is the runtime's ``_Recorder`` (``lint``, ``linted``,
    ``pattern_name``, ``pattern_source``, ``desc.pass_name``).
    """
    written = 0
    bindings = match.bindings
    kinds = match.pattern.nodes
    for pid, pname, pport, expected in stated:
        bound = bindings.get(pid)
        if bound is None:
            continue
        node, bport = bound
        port = (bport or 0) if kinds[pid].kind == "data" else pport
        if port >= len(node.outputs):
            continue
        actual = node.outputs[port].dtype
        if actual == expected or actual == ir.DataType.DT_UNDEFINED:
            continue
        key = (RULE, f"{recorder.pattern_name}\0{node.id}\0{port}")
        if key in recorder.linted:
            continue
        recorder.linted.add(key)
        expected_name = getattr(expected, "name", str(expected))
        actual_name = getattr(actual, "name", str(actual))
        recorder.lint(
            RULE,
            f"pass {recorder.desc.pass_name}: pattern {recorder.pattern_name!r} node {pname!r} was built for "
            f"{expected_name} but matched output {port} of node {node.name!r} ({node.op_type}), which is "
            f"{actual_name}: GE's matcher ignores dtypes, so the replacement is applied to tensors it was not written "
            "for; check the dtype in meet_requirements if the pattern is meant for one dtype",
            source=recorder.pattern_source, nodes=[node],
            detail={"pattern": recorder.pattern_name, "pattern_node": pname, "node": node.name, "port": port,
                    "pattern_dtype": expected_name, "target_dtype": actual_name})
        written += 1
    return written
