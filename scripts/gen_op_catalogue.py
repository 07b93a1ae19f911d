#!/usr/bin/env python3
"""Regenerate gebench's op catalogue data file from the GE op fact sheet kept in ``scripts/spec/ge-ops.json``.

Usage:
    python scripts/gen_op_catalogue.py            # write gebench/ops/data/ge_ops.json
    python scripts/gen_op_catalogue.py --check    # exit 1 if the data file is not current
    python scripts/gen_op_catalogue.py --spec PATH/ge-ops.json

The spec defaults to ``scripts/spec/ge-ops.json``, the project's copy of the GE op fact sheet (replace that copy
when the fact sheet changes, then run this script). The normalisation itself lives in ``gebench.ops._generate`` so
the test suite can regenerate in memory.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SPEC = REPO / "scripts" / "spec" / "ge-ops.json"
DATA_FILE = REPO / "gebench" / "ops" / "data" / "ge_ops.json"

sys.path.insert(0, str(REPO))

from gebench.ops._generate import normalize_spec, render  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", type=Path, default=DEFAULT_SPEC, help=f"path to ge-ops.json (default {DEFAULT_SPEC})")
    parser.add_argument("--out", type=Path, default=DATA_FILE, help="data file to write or check")
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if the data file is stale")
    args = parser.parse_args(argv)
    if not args.spec.is_file():
        sys.stderr.write(f"error: spec file {args.spec} not found; pass --spec PATH/ge-ops.json\n")
        return 2
    text = render(normalize_spec(args.spec.read_text(encoding="utf-8")))
    current = args.out.read_text(encoding="utf-8") if args.out.is_file() else None
    if args.check:
        if current != text:
            sys.stderr.write(f"{args.out} is stale; run: python scripts/gen_op_catalogue.py\n")
            return 1
        sys.stdout.write(f"{args.out} is current\n")
        return 0
    if current == text:
        sys.stdout.write(f"{args.out} already current\n")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    sys.stdout.write(f"wrote {args.out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
