"""The hook session, under the facade's name: :mod:`gebench.fusion.plugins.session` holds it (the runtime opens
a session while pass code runs; facade code reports to :func:`current`). Re-exported here, the same objects."""

from gebench.fusion.plugins.session import (
    HookSession,
    _current,
    activate,
    caller_location,
    current,
    function_location,
)

__all__ = ["HookSession", "_current", "activate", "caller_location", "current", "function_location"]
