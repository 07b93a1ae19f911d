"""Errors raised by the op catalogue and shape inference."""

from __future__ import annotations

__all__ = ["OpsError", "UnknownOpError", "CustomOpError", "InferenceError"]


class OpsError(Exception):
    """Base class of gebench.ops errors."""


class UnknownOpError(OpsError, LookupError):
    """An op type is neither in the catalogue nor declared as a custom op."""

    def __init__(self, op_type: str) -> None:
        self.op_type = op_type
        super().__init__(
            f"unknown op type {op_type!r}: it is not in gebench's GE op catalogue and no custom op of that name is "
            "declared; declare it in a JSON file and load it with gebench.ops.load_custom_ops(path) "
            "(or list the file in the GEBENCH_CUSTOM_OPS environment variable)"
        )

    def __str__(self) -> str:  # LookupError would otherwise quote the message
        return str(self.args[0])


class CustomOpError(OpsError, ValueError):
    """A custom op declaration file is unreadable or declares an op wrongly."""


class InferenceError(OpsError):
    """Shape/dtype inference cannot give a node consistent outputs (the message names the node and the rule)."""

    def __init__(self, message: str, *, node_name: str = "", op_type: str = "") -> None:
        self.node_name = node_name
        self.op_type = op_type
        super().__init__(message)
