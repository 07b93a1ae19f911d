"""What changed in a pass file: content digests and per-pass fingerprints, for hot reload.

A digest (SHA-256 of every source file of a load item) says whether to re-execute an item; a fingerprint per
pass (its class source plus the file's module-level code, stage, kind and op types) says whether a pass that
is still there behaves differently afterwards.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from .descriptor import PassDescriptor
from .scan import LoadItem

__all__ = ["files_of", "fingerprints", "stat"]


def files_of(item: LoadItem) -> list[Path]:
    """The source files of ``item``: the file, or every ``.py`` under the package (sorted, no caches)."""
    if item.kind == "file":
        return [item.path]
    return sorted(p for p in item.path.rglob("*.py") if "__pycache__" not in p.parts)


def stat(item: LoadItem) -> tuple[str, float]:
    """(SHA-256 of the item's source files, newest mtime); unreadable files count as empty. O(bytes of source)."""
    h = hashlib.sha256()
    newest = 0.0
    for f in files_of(item):
        try:
            data = f.read_bytes()
            newest = max(newest, f.stat().st_mtime)
        except OSError:
            data = b""
        h.update(str(f).encode())
        h.update(data)
    return h.hexdigest(), newest


def fingerprints(item: LoadItem, descriptors: list[PassDescriptor]) -> dict[str, str]:
    """Per pass name: a hash of its class source plus the file's module-level code (so helper edits count).
    Files that cannot be read or parsed contribute nothing."""
    out: dict[str, str] = {}
    sources: dict[str, tuple[str, str]] = {}
    for f in files_of(item):
        try:
            text = f.read_text(encoding="utf-8")
            tree = ast.parse(text)
        except (OSError, SyntaxError, ValueError):
            continue
        lines = text.splitlines(keepends=True)
        class_ranges: list[tuple[int, int, str]] = []
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                class_ranges.append((start, node.end_lineno or node.lineno, node.name))
        module_level = "\n".join(line.rstrip() for i, line in enumerate(lines, 1)
                                  if line.strip() and not any(s <= i <= e for s, e, _ in class_ranges))
        for s, e, name in class_ranges:
            sources[name] = ("".join(lines[s - 1:e]), module_level)
    for d in descriptors:
        cls_src, mod_src = sources.get(d.class_name, ("", ""))
        h = hashlib.sha256()
        for part in (cls_src, mod_src, str(getattr(d.stage, "value", d.stage)), d.kind, ",".join(d.op_types)):
            h.update(part.encode())
            h.update(b"\0")
        out[d.pass_name] = h.hexdigest()
    return out
