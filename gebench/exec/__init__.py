"""Reference execution of IR graphs on numpy kernels, and numerical equivalence checks.

Public surface:

* :func:`execute` runs a graph (given or seeded random inputs) and returns its outputs;
  :func:`register_kernel` adds or replaces the kernel of an op type; :func:`registered_op_types`
  lists what can run; :class:`ExecutionError` names the node and op that could not run.
* :func:`check_graphs` compares two whole graphs on seeded random and edge-case inputs;
  :func:`check_rewrite` compares a matched subgraph with its replacement on the boundary tensors
  (:func:`capture_rewrite` + :func:`check_captured_rewrite` split that around a live rewrite);
  :func:`verify_run` checks every pass and rewrite of a compile run.
"""

from . import (  # noqa: F401
    _kernels_array,
    _kernels_control,
    _kernels_elementwise,
    _kernels_matmul,
    _kernels_nn,
    _kernels_rnn,
)
from .equivalence import (
    EquivalenceResult,
    FailingInput,
    PassCheck,
    RewriteCheck,
    RewriteRegion,
    VerifyReport,
    capture_rewrite,
    check_captured_rewrite,
    check_graphs,
    check_regions,
    check_rewrite,
    compare_outputs,
    verify_run,
)
from .reference import (
    ExecutionError,
    KernelContext,
    execute,
    kernel_for,
    random_input,
    register_kernel,
    registered_op_types,
)

__all__ = [
    "EquivalenceResult",
    "ExecutionError",
    "FailingInput",
    "KernelContext",
    "PassCheck",
    "RewriteCheck",
    "RewriteRegion",
    "VerifyReport",
    "capture_rewrite",
    "check_captured_rewrite",
    "check_graphs",
    "check_regions",
    "check_rewrite",
    "compare_outputs",
    "execute",
    "kernel_for",
    "random_input",
    "register_kernel",
    "registered_op_types",
    "verify_run",
]
