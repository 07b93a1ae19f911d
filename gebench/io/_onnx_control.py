"""ONNX -> GE converters: control flow (If) and recurrent layers (LSTM/GRU)."""

from __future__ import annotations

from ._onnx_common import Converter, NodeNotConvertible, OpContext, converter

__all__: list[str] = []


@converter("If", ge_types=["If"])
def _if(ctx: OpContext) -> None:
    then_g, else_g = ctx.attr("then_branch"), ctx.attr("else_branch")
    if then_g is None or else_g is None:
        raise NodeNotConvertible("If needs both then_branch and else_branch")
    outer = ctx.outer_scope_inputs([then_g, else_g])
    n_out = len(ctx.onnx_node.output)
    node = ctx.emit("If", [ctx.input(0), *outer], ctx.outputs(), dynamic_inputs={"input": len(outer)},
                    dynamic_outputs={"output": n_out})
    for idx, (attr_name, body) in enumerate((("then_branch", then_g), ("else_branch", else_g))):
        ctx.add_subgraph(node, f"{ctx.name}_{idx}_{attr_name}", body, outer)


def _recurrent(ge_type: str) -> Converter:
    def convert(ctx: OpContext) -> None:
        attrs = {}
        for key, value in ctx.attrs.items():
            attrs[key] = [str(v) for v in value] if key == "activations" else value
        ctx.emit(ge_type, ctx.inputs(), ctx.outputs(), attrs=attrs)

    return convert


converter("LSTM", ge_types=["CommonLSTM"])(_recurrent("CommonLSTM"))
converter("GRU", ge_types=["CommonGRU"])(_recurrent("CommonGRU"))
