"""``ge.error``: GE's Python exception type. GE's pass, graph and ES APIs do not raise it."""

from __future__ import annotations

__all__ = ["GeError"]


class GeError(RuntimeError):
    """A failed GE API call: ``error_message`` (what went wrong), ``api_name`` (which call), ``context`` (extra
    details, for example the graph or node)."""

    def __init__(self, error_message: str, api_name: str = "", context: str = "") -> None:
        self.error_message = error_message
        self.api_name = api_name
        self.context = context
        where = f"{api_name}: " if api_name else ""
        extra = f" ({context})" if context else ""
        super().__init__(f"{where}{error_message}{extra}")
