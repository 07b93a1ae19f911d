"""``python -m gebench.cli``: the same as the ``gebench`` command."""

from gebench.cli import run

run()
