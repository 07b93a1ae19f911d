"""gebench's GE-compatible facade: ``ge.graph``, ``ge.es`` (and ``ge.passes``) over gebench's IR and catalogue.

Pass files import it as the top-level package ``ge`` once :func:`install` has put the import hook in place
(``import gebench`` does that). Like GE's own ``ge/__init__.py`` this module imports none of its subpackages:
``import ge.graph``, ``import ge.es.math`` and so on load them on demand.
"""

from ._hook import install, is_installed, uninstall

__all__ = ["install", "is_installed", "uninstall"]
