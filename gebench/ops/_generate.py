"""Normalisation of ``ge-ops.json`` (the shared op fact sheet) into the package's own catalogue data.

Used by ``scripts/gen_op_catalogue.py`` (which writes ``gebench/ops/data/ge_ops.json``) and by the test that checks
the data file is current. The output is plain JSON: ordered inputs/outputs with their kinds and dtype text, attrs
with type, ``required`` and the default both as written in the prototype (``default_literal``) and converted to a
JSON value (``default``), subgraph slots, source repo/path/commit, confidence, category and the ``ge.es`` module.

es_module rule (which ``ge.es.<module>`` an op's function lives in; every op is also in ``ge.es.all``):

1. An op declared in ``hicann/ops-math`` goes to ``math``; one declared in ``hicann/ops-nn`` goes to ``nn``.
2. Ops taken from ``hicann/ge`` test stubs (not in the ops snapshots, ge-ops.md §4.1):
   the legacy ``…D`` forms go where their non-D op goes (TransposeD → Transpose, ConcatV2D → ConcatV2,
   TileD → Tile, ReduceSumD → ReduceSum, SliceD → Slice, StridedSliceD → StridedSlice: all ``math``);
   ``MatMul`` goes to ``math``; the graph-structure ops ``Data``, ``Const``, ``NetOutput``, ``PartitionedCall``
   get ``""`` (only in ``ge.es.all``).
3. Placements the GE Python samples depend on override rule 1 (ge-python-api.md §4: ``ge.es.math`` must provide
   ConcatV2, Split, Concat, Identity, TensorMove, GEMM, Add, MatMul; ``ge.es.nn`` must provide Relu, BatchMatMulV2,
   Conv2D). ``GEMM`` (declared in ops-nn) and ``TensorMove`` (see below) go to ``math`` this way.

Ops the samples need that ``ge-ops.json`` does not list are added from :data:`SUPPLEMENT` with confidence
``supplement``: ``TensorMove`` (one input ``x``, one output ``y``, no attrs; imported from ``ge.es.math`` by
sample #8).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from ._literals import ATTR_TYPES, parse_literal, to_json_value

__all__ = ["normalize_spec", "render", "FORMAT_VERSION", "SUPPLEMENT", "es_module_for"]

FORMAT_VERSION = 1

_REPO_MODULE = {"hicann/ops-math": "math", "hicann/ops-nn": "nn"}
_STUB_MODULE = {
    "TransposeD": "math", "ConcatV2D": "math", "TileD": "math", "ReduceSumD": "math", "SliceD": "math",
    "StridedSliceD": "math", "MatMul": "math",
    "Data": "", "Const": "", "NetOutput": "", "PartitionedCall": "",
}
_SAMPLE_OVERRIDES = {"GEMM": "math", "TensorMove": "math"}

#: Entries (in ge-ops.json's format) for ops the Python samples import but ge-ops.json does not list.
SUPPLEMENT: dict[str, dict[str, Any]] = {
    "TensorMove": {
        "category": "io_and_structure",
        "inputs": [{"name": "x", "kind": "required", "dtypes": "TensorType::BasicType()"}],
        "outputs": [{"name": "y", "kind": "required", "dtypes": "TensorType::BasicType()"}],
        "attrs": [],
        "subgraphs": [],
        # Not read from a prototype: the source is left empty rather than guessed.
        "source": {"repo": "", "path": "", "commit": ""},
        "confidence": "supplement",
    },
}


def es_module_for(op_type: str, repo: str) -> str:
    """The ``ge.es`` module of a catalogue op by the rule in this module's docstring.

    Raises:
        ValueError: the op comes from an unknown repo and has no explicit placement.
    """
    if op_type in _SAMPLE_OVERRIDES:
        return _SAMPLE_OVERRIDES[op_type]
    if repo in _REPO_MODULE:
        return _REPO_MODULE[repo]
    if op_type in _STUB_MODULE:
        return _STUB_MODULE[op_type]
    raise ValueError(f"op {op_type!r} comes from {repo!r}, which has no ge.es module rule; "
                     "add it to the placement tables in gebench/ops/_generate.py")


def _normalize_op(op_type: str, entry: dict[str, Any]) -> dict[str, Any]:
    attrs = []
    for a in entry.get("attrs", []):
        if a["type"] not in ATTR_TYPES:
            raise ValueError(f"op {op_type!r} attr {a['name']!r}: unknown attr type {a['type']!r}")
        item: dict[str, Any] = {"name": a["name"], "type": a["type"], "required": bool(a["required"])}
        if not a["required"]:
            literal = a.get("default", "")
            item["default_literal"] = literal
            item["default"] = to_json_value(a["type"], parse_literal(a["type"], literal))
        else:
            item["default_literal"] = None
            item["default"] = None
        attrs.append(item)
    source = entry.get("source", {})
    repo = source.get("repo", "")
    return {
        "inputs": [{"name": i["name"], "kind": i["kind"], "dtypes": i.get("dtypes", "")} for i in entry["inputs"]],
        "outputs": [{"name": o["name"], "kind": o["kind"], "dtypes": o.get("dtypes", "")} for o in entry["outputs"]],
        "attrs": attrs,
        "subgraphs": [{"name": s["name"], "kind": s.get("kind", "static")} for s in entry.get("subgraphs", [])],
        "source": {"repo": repo, "path": source.get("path", ""), "commit": source.get("commit", "")},
        "confidence": entry.get("confidence", ""),
        "category": entry.get("category", ""),
        "es_module": es_module_for(op_type, repo),
    }


def normalize_spec(spec_text: str) -> dict[str, Any]:
    """Turn the text of ``ge-ops.json`` into the catalogue data (a JSON-ready dict). O(size of the spec).

    Raises:
        ValueError: an attr type is unknown, a default literal is unreadable, or an op has no module rule.
        KeyError / json.JSONDecodeError: the spec is not in the expected shape.
    """
    spec = json.loads(spec_text)
    ops: dict[str, Any] = {}
    for op_type, entry in spec["ge_ops"].items():
        ops[op_type] = _normalize_op(op_type, entry)
    for op_type, entry in SUPPLEMENT.items():
        if op_type not in ops:
            ops[op_type] = _normalize_op(op_type, entry)
    return {
        "format_version": FORMAT_VERSION,
        "generated_from": {
            "spec": "ge-ops.json",
            "sha256": hashlib.sha256(spec_text.encode("utf-8")).hexdigest(),
            "sources": spec.get("meta", {}).get("sources", {}),
        },
        "ops": ops,
    }


def render(data: dict[str, Any]) -> str:
    """The exact text written to the data file (stable key order, one trailing newline)."""
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"
