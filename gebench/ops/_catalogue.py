"""The op catalogue: built-in GE op schemas (lazily read from ``data/ge_ops.json``) plus declared custom ops.

Custom op files are JSON objects mapping an op type to an entry shaped like a ``ge_ops`` entry of
``ge-ops.json``::

    {"AddCustom": {"inputs": [{"name": "x", "kind": "required"}, {"name": "y", "kind": "required"}],
                   "outputs": [{"name": "z", "kind": "required"}],
                   "attrs": [{"name": "alpha", "type": "Float", "required": false, "default": "1.0"}],
                   "dtypes": "TensorType({DT_FLOAT, DT_FLOAT16})",
                   "source": {"repo": "my/ops", "path": "add_custom_proto.h"}}}

``inputs``/``outputs`` items may also be plain names (then required). ``attrs`` defaults may be REG_OP literals
(``"false"``, ``"{1, 1}"``, ``"\\"NHWC\\""``) or JSON values (``false``, ``[1, 1]``, ``"NHWC"``); ``required``
defaults to "no ``default`` given". ``dtypes`` (optional) is one constraint text for every input/output without
its own, or an object mapping input/output names to texts. Files listed in the environment variable
``GEBENCH_CUSTOM_OPS`` (``os.pathsep``-separated) are loaded on the first catalogue access.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from importlib import resources
from pathlib import Path
from typing import Any

from ._literals import ATTR_TYPES, LiteralError, from_json_value, parse_literal
from ._schema import AttrDef, InputDef, OpSchema, OutputDef
from .errors import CustomOpError, UnknownOpError

__all__ = [
    "ENV_CUSTOM_OPS",
    "get_schema",
    "require_schema",
    "all_schemas",
    "builtin_op_types",
    "load_custom_ops",
    "custom_op_types",
    "clear_custom_ops",
    "schema_from_entry",
]

_log = logging.getLogger(__name__)

#: Environment variable listing custom op files, separated by ``os.pathsep`` (``:`` on POSIX).
ENV_CUSTOM_OPS = "GEBENCH_CUSTOM_OPS"

_DATA_FILE = "ge_ops.json"
_OP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_ENTRY_KEYS = {"inputs", "outputs", "attrs", "dtypes", "source", "subgraphs", "category", "confidence", "notes",
               "also_declared_in", "duplicates_identical", "es_module"}


def schema_from_entry(op_type: str, entry: dict[str, Any]) -> OpSchema:
    """Build an :class:`OpSchema` from one normalised data-file entry (see ``gebench.ops._generate``)."""
    attrs = tuple(
        AttrDef(a["name"], a["type"], bool(a["required"]),
                None if a["required"] else from_json_value(a["type"], a.get("default")),
                a.get("default_literal"))
        for a in entry["attrs"]
    )
    source = entry.get("source", {})
    return OpSchema(
        op_type=op_type,
        inputs=tuple(InputDef(i["name"], i["kind"], i.get("dtypes", "")) for i in entry["inputs"]),
        outputs=tuple(OutputDef(o["name"], o["kind"], o.get("dtypes", "")) for o in entry["outputs"]),
        attrs=attrs,
        subgraphs=tuple(s["name"] for s in entry.get("subgraphs", [])),
        source_repo=source.get("repo", ""),
        es_module=entry.get("es_module", ""),
        source_path=source.get("path", ""),
        confidence=entry.get("confidence", ""),
        category=entry.get("category", ""),
    )


class _Registry:
    """Holds the built-in schemas (read once) and the custom ones; guarded by a lock for the lazy load."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.builtin: dict[str, OpSchema] | None = None
        self.custom: dict[str, OpSchema] = {}
        self.custom_origin: dict[str, str] = {}
        self.merged: dict[str, OpSchema] | None = None
        self.env_loaded = False
        self.generation = 0  # grows whenever the custom declarations change

    def ensure(self) -> dict[str, OpSchema]:
        with self.lock:
            if self.builtin is None:
                self.builtin = _read_builtin()
            if not self.env_loaded:
                self.env_loaded = True
                for path in _env_paths():
                    self.add_file(Path(path), via_env=True)
            if self.merged is None:
                self.merged = {**self.builtin, **self.custom}
            return self.merged

    def add_file(self, path: Path, *, via_env: bool = False) -> list[str]:
        assert self.builtin is not None
        declared = _read_custom_file(path, via_env=via_env)
        where = f"{path}" + (f" (from ${ENV_CUSTOM_OPS})" if via_env else "")
        for op_type, schema in declared.items():
            if op_type in self.builtin:
                raise CustomOpError(f"{where}: custom op {op_type!r} has the name of a GE catalogue op; "
                                    "rename the custom op (catalogue ops cannot be redeclared)")
            old = self.custom.get(op_type)
            if old is not None and old != schema:
                raise CustomOpError(f"{where}: custom op {op_type!r} is already declared differently in "
                                    f"{self.custom_origin[op_type]}; keep one declaration")
        for op_type, schema in declared.items():
            self.custom[op_type] = schema
            self.custom_origin.setdefault(op_type, str(path))
        self.merged = None
        self.generation += 1
        _log.debug("loaded %d custom op(s) from %s", len(declared), where)
        return list(declared)


_REG = _Registry()


def _read_builtin() -> dict[str, OpSchema]:
    text = resources.files("gebench.ops").joinpath("data", _DATA_FILE).read_text(encoding="utf-8")
    data = json.loads(text)
    return {op: schema_from_entry(op, entry) for op, entry in data["ops"].items()}


def _env_paths() -> list[str]:
    raw = os.environ.get(ENV_CUSTOM_OPS, "")
    return [p for p in raw.split(os.pathsep) if p.strip()]


def catalogue_generation() -> int:
    """A number that grows whenever custom-op declarations change (loaded, cleared, restored). O(1)."""
    return _REG.generation


def get_schema(op_type: str) -> OpSchema | None:
    """The schema of ``op_type`` (catalogue op or declared custom op), or None.

    The first call reads the catalogue data file and the files in ``GEBENCH_CUSTOM_OPS``; later calls are one dict
    lookup.

    Raises:
        CustomOpError: only on the first call, when a file listed in ``GEBENCH_CUSTOM_OPS`` is invalid.
    """
    merged = _REG.merged
    if merged is None or not _REG.env_loaded:
        merged = _REG.ensure()
    return merged.get(op_type)


def is_builtin_schema(schema: OpSchema) -> bool:
    """Whether ``schema`` is the catalogue's own schema of its op. The catalogue is read once and custom ops
    cannot take a catalogue op's name, so such a schema stays the op's schema for the whole process."""
    builtin = _REG.builtin
    return builtin is not None and builtin.get(schema.op_type) is schema


def require_schema(op_type: str) -> OpSchema:
    """Like :func:`get_schema` but raises :class:`UnknownOpError` (naming the op and the fix) when absent."""
    schema = get_schema(op_type)
    if schema is None:
        raise UnknownOpError(op_type)
    return schema


def all_schemas() -> dict[str, OpSchema]:
    """Every known schema by op type (a new dict; catalogue ops first, then custom ops in declaration order)."""
    return dict(_REG.ensure())


def builtin_op_types() -> list[str]:
    """The catalogue's op types (custom ops excluded), in data-file order."""
    _REG.ensure()
    assert _REG.builtin is not None
    return list(_REG.builtin)


def custom_op_types() -> list[str]:
    """The declared custom op types, in declaration order."""
    _REG.ensure()
    return list(_REG.custom)


def load_custom_ops(path: str | os.PathLike[str]) -> list[str]:
    """Declare the custom ops in JSON file ``path``; returns their op types in file order.

    The whole file is checked before anything is declared, so a bad file declares nothing. Loading a file again,
    or another file with identical declarations, is harmless.

    Raises:
        CustomOpError: the file is missing or not JSON, an entry is malformed (message names file, op and field),
            an op has a catalogue op's name, or an op is already declared differently.
    """
    with _REG.lock:
        _REG.ensure()
        return _REG.add_file(Path(path))


def clear_custom_ops() -> None:
    """Forget every declared custom op; ``GEBENCH_CUSTOM_OPS`` is read again on the next catalogue access."""
    with _REG.lock:
        _REG.custom.clear()
        _REG.custom_origin.clear()
        _REG.merged = None
        _REG.generation += 1
        _REG.env_loaded = False


def _snapshot() -> tuple[dict[str, OpSchema], dict[str, str], bool]:
    """The custom-op state, for tests that must leave it as they found it (see :func:`_restore`)."""
    with _REG.lock:
        return dict(_REG.custom), dict(_REG.custom_origin), _REG.env_loaded


def _restore(state: tuple[dict[str, OpSchema], dict[str, str], bool]) -> None:
    with _REG.lock:
        custom, origin, env_loaded = state
        _REG.custom, _REG.custom_origin, _REG.env_loaded = dict(custom), dict(origin), env_loaded
        _REG.merged = None
        _REG.generation += 1


# ---------------------------------------------------------------------------------------------- custom files
def _read_custom_file(path: Path, *, via_env: bool) -> dict[str, OpSchema]:
    where = f"{path}" + (f" (from ${ENV_CUSTOM_OPS})" if via_env else "")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CustomOpError(f"{where}: cannot read custom op file ({exc.strerror or exc}); check the path") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise CustomOpError(f"{where}:{line}: not UTF-8 text ({exc.reason}); a custom op file is JSON") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CustomOpError(f"{where}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict):
        raise CustomOpError(f"{where}: the top level must be a JSON object mapping op type to its declaration, "
                            f"got {type(data).__name__}")
    out: dict[str, OpSchema] = {}
    for op_type, entry in data.items():
        out[op_type] = _custom_schema(op_type, entry, where)
    return out


def _custom_schema(op_type: str, entry: Any, where: str) -> OpSchema:
    def fail(msg: str) -> CustomOpError:
        return CustomOpError(f"{where}: custom op {op_type!r}: {msg}")

    if not _OP_NAME.match(op_type):
        raise fail("an op type must be an identifier (letters, digits, underscore)")
    if not isinstance(entry, dict):
        raise fail(f"the declaration must be a JSON object, got {type(entry).__name__}")
    unknown = sorted(set(entry) - _ENTRY_KEYS)
    if unknown:
        raise fail(f"unknown field(s) {unknown}; allowed: inputs, outputs, attrs, dtypes, source, subgraphs")
    for key in ("inputs", "outputs"):
        if key not in entry:
            raise fail(f"missing field {key!r} (a list, possibly empty)")
        if not isinstance(entry[key], list):
            raise fail(f"field {key!r} must be a list")
    dtypes = entry.get("dtypes", "")
    if not isinstance(dtypes, (str, dict)) or isinstance(dtypes, dict) and not all(
            isinstance(v, str) for v in dtypes.values()):
        raise fail("field 'dtypes' must be a string or an object mapping input/output names to strings")

    def dtype_for(item: dict[str, Any], name: str) -> str:
        if isinstance(item.get("dtypes"), str):
            return item["dtypes"]
        if isinstance(dtypes, dict):
            return dtypes.get(name, "")
        return dtypes

    def io_items(key: str, kinds: dict[str, str]) -> list[tuple[str, str, str]]:
        items, seen = [], set()
        for pos, item in enumerate(entry[key]):
            if isinstance(item, str):
                item = {"name": item}
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
                raise fail(f"{key}[{pos}] must be a name or an object with a non-empty 'name'")
            name = item["name"]
            if name in seen:
                raise fail(f"{key}[{pos}]: duplicate name {name!r}")
            seen.add(name)
            kind = item.get("kind", "required")
            if not isinstance(kind, str) or kind not in kinds:
                raise fail(f"{key}[{pos}] {name!r}: kind {kind!r} is not one of {sorted(kinds)}")
            if "dtypes" in item and not isinstance(item["dtypes"], str):
                raise fail(f"{key}[{pos}] {name!r}: 'dtypes' must be a string like \"TensorType({{DT_FLOAT}})\"")
            items.append((name, kinds[kind], dtype_for(item, name)))
        return items

    inputs = io_items("inputs", {"required": "required", "optional": "optional", "dynamic": "dynamic"})
    outputs = io_items("outputs", {"required": "required", "static": "required", "dynamic": "dynamic"})
    for what, items in (("inputs", inputs), ("outputs", outputs)):
        if sum(1 for _, kind, _ in items if kind == "dynamic") > 1:
            raise fail(f"at most one dynamic entry is supported in {what}")

    attrs_raw = entry.get("attrs", [])
    if not isinstance(attrs_raw, list):
        raise fail("field 'attrs' must be a list")
    attrs: list[AttrDef] = []
    seen_attrs: set[str] = set()
    for pos, a in enumerate(attrs_raw):
        if not isinstance(a, dict) or not isinstance(a.get("name"), str) or not a["name"]:
            raise fail(f"attrs[{pos}] must be an object with a non-empty 'name'")
        name = a["name"]
        if name in seen_attrs:
            raise fail(f"attrs[{pos}]: duplicate attr {name!r}")
        seen_attrs.add(name)
        atype = a.get("type")
        if not isinstance(atype, str) or atype not in ATTR_TYPES:
            raise fail(f"attr {name!r}: type {atype!r} is not one of {sorted(ATTR_TYPES)}")
        required = a.get("required", "default" not in a)
        if not isinstance(required, bool):
            raise fail(f"attr {name!r}: 'required' must be true or false")
        if required:
            attrs.append(AttrDef(name, atype, True, None, None))
            continue
        if "default" not in a:
            raise fail(f"attr {name!r} is optional but has no 'default'")
        try:
            default, literal = _custom_default(atype, a["default"])
        except (LiteralError, ValueError, TypeError) as exc:
            raise fail(f"attr {name!r}: default {a['default']!r} is not a {atype}: {exc}") from None
        attrs.append(AttrDef(name, atype, False, default, literal))

    subgraphs = entry.get("subgraphs", [])
    if not isinstance(subgraphs, list):
        raise fail("field 'subgraphs' must be a list")
    sub_names = []
    for pos, s in enumerate(subgraphs):
        name = s.get("name") if isinstance(s, dict) else s
        if not isinstance(name, str) or not name:
            raise fail(f"subgraphs[{pos}] must be a subgraph name or an object with a non-empty 'name', got {s!r}")
        if name in sub_names:
            raise fail(f"subgraphs[{pos}]: duplicate subgraph {name!r}")
        sub_names.append(name)
    category = entry.get("category", "custom")
    if not isinstance(category, str):
        raise fail("field 'category' must be a string")
    source = entry.get("source", "")
    if isinstance(source, dict):
        repo, spath = source.get("repo", ""), source.get("path", "")
        if not isinstance(repo, str) or not isinstance(spath, str):
            raise fail("field 'source' must be a string or an object with string 'repo' and 'path'")
    elif isinstance(source, str):
        repo, spath = source, ""
    else:
        raise fail("field 'source' must be a string or an object with 'repo' and 'path'")
    return OpSchema(
        op_type=op_type,
        inputs=tuple(InputDef(n, k, d) for n, k, d in inputs),  # type: ignore[arg-type]
        outputs=tuple(OutputDef(n, k, d) for n, k, d in outputs),  # type: ignore[arg-type]
        attrs=tuple(attrs),
        subgraphs=tuple(sub_names),
        source_repo=repo or "custom",
        es_module="custom",
        source_path=spath,
        confidence="custom",
        category=category,
    )


def _custom_default(atype: str, raw: Any) -> tuple[Any, str | None]:
    """Accept a REG_OP literal string or a JSON value; returns (python value, literal or None)."""
    if isinstance(raw, str) and atype != "String":
        return parse_literal(atype, raw), raw
    if atype == "String":
        if not isinstance(raw, str):
            raise TypeError("expected a string")
        if len(raw) >= 2 and raw[0] == raw[-1] == '"':
            return parse_literal("String", raw), raw
        return raw, None
    if atype in _JSON_SCALARS:
        return _json_scalar(atype, raw), None
    if atype.startswith("List"):
        if not isinstance(raw, list):
            raise TypeError("expected a JSON list")
        item_type = atype[4:]
        if item_type in _JSON_SCALARS:
            return [_json_scalar(item_type, v, pos) for pos, v in enumerate(raw)], None
        if atype == "ListListInt":
            if not all(isinstance(row, list) for row in raw):
                raise TypeError("expected a JSON list of lists of integers")
            return [[_json_scalar("Int", v, pos) for pos, v in enumerate(row)] for row in raw], None
        if atype == "ListNamedAttrs":
            if not all(isinstance(v, dict) for v in raw):
                raise TypeError("expected a JSON list of objects")
            return [dict(v) for v in raw], None
        if atype == "ListTensor":
            return [from_json_value("Tensor", v) for v in raw], None
        return from_json_value(atype, raw), None
    if atype == "NamedAttrs" and not isinstance(raw, dict):
        raise TypeError("expected a JSON object")
    if atype == "Bytes" and not isinstance(raw, str):
        raise TypeError("expected a JSON string")
    if atype == "Type" and (isinstance(raw, bool) or not isinstance(raw, (str, int))):
        raise TypeError("expected a data type name like \"DT_FLOAT\"")
    return from_json_value(atype, raw), None


_JSON_SCALARS: dict[str, Any] = {"Int": int, "Float": (int, float), "Bool": bool, "String": str}


def _json_scalar(atype: str, value: Any, pos: int | None = None) -> Any:
    """``value`` checked as a JSON value of scalar attr type ``atype`` (``pos``: its place in a list).

    Raises:
        TypeError: ``value`` has another type (``true`` is not an int, ``1`` is not a bool).
    """
    if isinstance(value, bool) and atype != "Bool" or not isinstance(value, _JSON_SCALARS[atype]):
        where = f"item {pos} is {value!r}: " if pos is not None else ""
        raise TypeError(f"{where}expected a JSON {'number' if atype == 'Float' else atype.lower()}")
    return float(value) if atype == "Float" else value
