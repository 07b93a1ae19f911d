"""``ge.passes``: GE's Python fusion-pass API, implemented by gebench (spec §1.1, §2.1).

Only ``pattern`` is imported eagerly; every other public name is resolved lazily on first access
(PEP 562) and then cached in the module globals, as GE does.
"""

from .pattern import pattern

__all__ = [
    "DecomposePass",
    "FuseCheckResult",
    "FusionBasePass",
    "MatchResult",
    "NodeIo",
    "PassStage",
    "PassContext",
    "Pattern",
    "PatternMatcherConfig",
    "PatternMatcherConfigBuilder",
    "PatternFusionPass",
    "SubgraphInput",
    "SubgraphOutput",
    "SubgraphBoundary",
    "SubgraphRewriter",
    "can_fuse",
    "clear_registered_passes",
    "create_pattern",
    "create_replacement",
    "get_registered_pass_by_descriptor_key",
    "get_registered_pass_dicts",
    "get_registered_passes",
    "infer_shape",
    "pattern",
    "register_decompose_pass",
    "register_fusion_pass",
    "report_fuse",
]

_LAZY = {
    "DecomposePass": ".base",
    "FusionBasePass": ".base",
    "PassStage": ".base",
    "PatternFusionPass": ".base",
    "infer_shape": ".base",
    "MatchResult": ".base",
    "PassContext": ".base",
    "Pattern": ".base",
    "PatternMatcherConfig": ".base",
    "PatternMatcherConfigBuilder": ".base",
    "SubgraphInput": ".base",
    "SubgraphOutput": ".base",
    "SubgraphBoundary": ".base",
    "SubgraphRewriter": ".base",
    "NodeIo": ".pattern",
    "create_pattern": ".pattern",
    "create_replacement": ".replacement",
    "FuseCheckResult": ".fuse_inspector",
    "can_fuse": ".fuse_inspector",
    "report_fuse": ".fuse_inspector",
    "clear_registered_passes": ".registry",
    "get_registered_pass_by_descriptor_key": ".registry",
    "get_registered_pass_dicts": ".registry",
    "get_registered_passes": ".registry",
    "register_decompose_pass": ".registry",
    "register_fusion_pass": ".registry",
}


def __getattr__(name: str) -> object:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {'ge.passes'!r} has no attribute {name!r}")  # GE's module name
    import importlib

    value = getattr(importlib.import_module(module_name, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
