"""Reference kernels: control flow (If, PartitionedCall) executed through their subgraphs."""

from __future__ import annotations

import numpy as np

from .reference import KernelContext, register_kernel

__all__: list[str] = []


def _branch_names(ctx: KernelContext) -> tuple[str, str]:
    names = list(ctx.node.subgraph_names)
    then_name = next((n for n in names if n.endswith("then_branch")), names[0] if names else "")
    else_name = next((n for n in names if n.endswith("else_branch")), names[1] if len(names) > 1 else "")
    if not then_name or not else_name:
        raise ctx.error(f"If needs two subgraphs (then_branch, else_branch); it has {names}")
    return then_name, else_name


@register_kernel(["If", "StatelessIf"])
def _if(ctx: KernelContext, cond: np.ndarray, *inputs: np.ndarray) -> list[np.ndarray]:
    then_name, else_name = _branch_names(ctx)
    flag = bool(np.asarray(cond).reshape(-1)[0]) if np.asarray(cond).size else False
    # subgraph Data index i reads parent input i + 1 (input 0 is the condition)
    return ctx.run_subgraph(then_name if flag else else_name, [cond, *inputs], index_offset=1)


@register_kernel(["PartitionedCall", "StatefulPartitionedCall"])
def _partitioned_call(ctx: KernelContext, *args: np.ndarray) -> list[np.ndarray]:
    names = list(ctx.node.subgraph_names)
    if not names:
        raise ctx.error("PartitionedCall has no subgraph 'f'")
    return ctx.run_subgraph(names[0], list(args))
