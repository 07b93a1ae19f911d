"""What the engine knows about one registered pass class: :class:`PassDescriptor` and the pass kinds.

The facade's decorators (``ge.passes.register_fusion_pass`` / ``register_decompose_pass``) make descriptors;
the loaders, pass sets and the stage runtime read them. Nothing here depends on the facade: ``stage`` is
whatever the decorator was given (GE's ``PassStage``, a ``str`` enum whose ``.value`` is the stage name).
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = ["PASS_KINDS", "PASS_KIND_DECOMPOSE", "PASS_KIND_FUSION_BASE", "PASS_KIND_PATTERN_FUSION",
           "PassDescriptor"]

PASS_KIND_FUSION_BASE = "fusion_base"
PASS_KIND_PATTERN_FUSION = "pattern_fusion"
PASS_KIND_DECOMPOSE = "decompose"
#: Every kind GE's C++ side accepts.
PASS_KINDS = (PASS_KIND_FUSION_BASE, PASS_KIND_PATTERN_FUSION, PASS_KIND_DECOMPOSE)


@dataclasses.dataclass(frozen=True)
class PassDescriptor:
    """What the engine knows about one registered pass class (immutable).

    Attributes:
        descriptor_key: ``module:class:pass name``, unique within a registry.
        pass_name: the registered name, unique within a registry.
        stage: the stage object given at registration (not checked here; the runtime checks it).
        kind: one of :data:`PASS_KINDS` (not checked here either).
        cls: the pass class; the runtime instantiates it with no arguments.
        op_types: for decompose passes, the op types it decomposes.
    """

    descriptor_key: str
    pass_name: str
    module_name: str
    class_name: str
    stage: Any
    kind: str
    cls: type
    op_types: list[str] = dataclasses.field(default_factory=list)

    def to_bridge_dict(self) -> dict[str, Any]:
        """The dict handed to the C++ side (no ``cls``).

        Raises:
            AttributeError: the stage has no ``.value`` (is not a ``PassStage``), as in GE.
        """
        return {
            "descriptor_key": self.descriptor_key,
            "pass_name": self.pass_name,
            "module_name": self.module_name,
            "class_name": self.class_name,
            "stage": self.stage.value,
            "kind": self.kind,
            "op_types": list(self.op_types),
        }
