"""One Const feeding thousands of nodes (exporters merge identical initializers, so a single scale constant
often feeds every layer): compiling such a graph costs work proportional to the consumers, not to their square.

Work is counted, never timed. A step is one function call (Python or builtin, as ``cProfile`` counts them) plus
one element handed out by a graph adjacency read (uses, successors, producers, ...; for the raw use tables, one
per element actually iterated), so a loop over a use list counts even when it calls nothing. A linear compile
does about 4x the steps for 4x the consumers; a quadratic one about 16x. The larger run is guarded by a step
budget that stops a quadratic compile early instead of letting it run for minutes.
"""

from __future__ import annotations

import cProfile
import math
import pstats
import textwrap
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import gebench
from gebench import ir
from gebench.fusion import ORIGIN_NAMES_ATTR, Boundary, BoundaryInput, RewriteError, RewriteReason, rewrite
from gebench.fusion.reload import PassSet

MUL_ONE = Path(__file__).resolve().parents[1] / "passes" / "mul_one_pass.py"

# Neg(Mul(a, b)) -> Mul(Neg(a), b): exact for every input, and the shared Const is a wildcard input of the pattern
NEG_THROUGH_MUL = """
from ge.es.all import Mul, Neg
from ge.passes import PassStage, PatternFusionPass, pattern, register_fusion_pass


@register_fusion_pass(name="FanoutNegThroughMul", stage=PassStage.BEFORE_INFER_SHAPE)
class FanoutNegThroughMul(PatternFusionPass):
    @pattern
    def neg_of_mul(self, inputs):
        a, b = inputs[:2]
        return Neg(Mul(a, b))

    def meet_requirements(self, match_result):
        return True

    def replacement(self, inputs):
        a, b = inputs[:2]
        return Mul(Neg(a), b)
"""

#: Graph reads that hand out adjacency: every element returned is a step.
_ADJACENCY_READS = ("uses", "all_uses", "successors", "predecessors", "data_successors", "producers",
                    "fed_inputs", "input_sources", "control_successors", "control_predecessors",
                    "_successor_ids", "_predecessor_ids")


class _OverBudget(BaseException):
    """Raised by the counters past the step budget (a BaseException, so no ``except Exception`` of the runtime
    turns it into a verdict)."""


class _Steps:
    """Counts adjacency elements handed out by ``ir.Graph`` reads and ``math.nextafter`` calls (the topological
    placement of new nodes), optionally up to a budget."""

    def __init__(self, budget: int | None = None) -> None:
        self.elements = 0
        self.budget = budget

    def add(self, n: int) -> None:
        self.elements += n
        if self.budget is not None and self.elements > self.budget:
            raise _OverBudget(f"more than {self.budget} adjacency steps")

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        for name in _ADJACENCY_READS:
            monkeypatch.setattr(ir.Graph, name, self._counting(getattr(ir.Graph, name)))
        raw = getattr(ir.Graph, "output_uses", None)
        if raw is not None:  # the raw use table: count the elements a caller iterates, not the table's size
            def output_uses(graph: ir.Graph, node: ir.Node) -> list[_CountedUses]:
                return [_CountedUses(port_uses, self) for port_uses in raw(graph, node)]

            monkeypatch.setattr(ir.Graph, "output_uses", output_uses)
        nextafter = math.nextafter

        def counting_nextafter(x: float, y: float) -> float:
            self.add(1)
            return nextafter(x, y)

        monkeypatch.setattr(math, "nextafter", counting_nextafter)

    def _counting(self, read: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            result = read(*args, **kwargs)
            self.add(len(result))
            return result

        return counted


class _CountedUses:
    """One port's raw use table, counting the elements iterated."""

    def __init__(self, uses: Any, steps: _Steps) -> None:
        self._uses = uses
        self._steps = steps

    def __iter__(self) -> Iterator[tuple[int, int]]:
        for use in self._uses:
            self._steps.add(1)
            yield use

    def __len__(self) -> int:
        return len(self._uses)

    def __contains__(self, use: object) -> bool:
        self._steps.add(1)
        return use in self._uses


# ---------------------------------------------------------------------------------------------- graphs and runs
def shared_const_graph(n: int, value: float) -> Any:
    """``x: [4]`` and one scalar Const ``c`` feeding ``n`` branches ``Neg(Mul(x, c))``, all graph outputs."""
    from ge.es.all import Mul, Neg
    from ge.es.graph_builder import GraphBuilder

    b = GraphBuilder("fanout")
    x = b.create_input(0, shape=[4])
    c = b.create_scalar_float(value)
    return b.build_and_reset([Neg(Mul(x, c)) for _ in range(n)])


@pytest.fixture(scope="module")
def neg_pass(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fanout_passes") / "neg_through_mul_pass.py"
    path.write_text(textwrap.dedent(NEG_THROUGH_MUL))
    return path


def compile_counted(monkeypatch: pytest.MonkeyPatch, graph: Any, passes: PassSet, *, profile: bool,
                    budget: int | None = None) -> tuple[Any, int]:
    """Compile ``graph`` with default options; returns the run and the steps it took (adjacency elements, plus
    every function call when ``profile``)."""
    steps = _Steps(budget)
    with monkeypatch.context() as patch:
        steps.install(patch)
        profiler = cProfile.Profile() if profile else None
        if profiler is not None:
            profiler.enable()
        try:
            run = gebench.compile(graph, passes=passes)
        finally:
            if profiler is not None:
                profiler.disable()
    calls = pstats.Stats(profiler).total_calls if profiler is not None else 0  # type: ignore[attr-defined]
    assert run.status == "SUCCESS", run.failure_reason
    return run, calls + steps.elements


def summary(run: Any, pass_name: str) -> dict[str, Any]:
    return run.ledger.summary()[pass_name]


def check_neg_through_mul(run: Any, n: int) -> None:
    """Every branch rewritten once into ``Mul(Neg(x), c)``, outputs in branch order, one Const still shared."""
    assert summary(run, "FanoutNegThroughMul") == {
        "candidates": 2 * n, "replaced": n, "rejected": {"STRUCTURAL_MISMATCH": n}, "lints": 0}
    g = run.ir_graph
    g.verify()
    assert Counter(node.op_type for node in g.nodes()) == {"Data": 1, "Const": 1, "Mul": n, "Neg": n,
                                                          "NetOutput": 1}
    (x,), (c,), (out,) = g.nodes_of_type("Data"), g.nodes_of_type("Const"), g.nodes_of_type("NetOutput")
    assert g.num_uses(c) == n and g.num_uses(x) == n
    for k, prod in enumerate(g.producers(out)):
        mul = prod[0]
        assert mul.op_type == "Mul" and mul.provenance == "FanoutNegThroughMul"
        # branch k was Mul_{2k+1} -> Neg_{2k+2} (the builder numbers nodes in creation order)
        assert mul.attrs[ORIGIN_NAMES_ATTR] == [f"Mul_{2 * k + 1}", f"Neg_{2 * k + 2}"]
        neg, c_in = g.producers(mul)
        assert c_in == (c, 0) and neg[0].op_type == "Neg" and g.producers(neg[0]) == [(x, 0)]
    assert [consumer.op_type for consumer, _ in g.uses(c, 0)] == ["Mul"] * n  # in rewrite order
    assert [port for _, port in g.uses(c, 0)] == [1] * n


def check_mul_one_blocked(run: Any, n: int) -> None:
    """``x * 1`` matches through the shared Const in every branch, and GE rejects every match: the Const also
    feeds the other branches, so the region is not self-contained. The graph keeps its structure."""
    assert summary(run, "GebenchMulOnePass") == {
        "candidates": n, "replaced": 0, "rejected": {"BOUNDARY_VIOLATION": n}, "lints": 0}
    records = run.ledger.by_pass("GebenchMulOnePass")
    # the first use of the Const outside the match: Mul_3 for the first branch, Mul_1 for every other one
    assert [r.detail["outside_consumer"] for r in records[:3]] == ["Mul_3", "Mul_1", "Mul_1"]
    assert {r.detail["escaping_node"] for r in records} == {"Const_0"}
    assert {r.detail["consumer_input"] for r in records} == {1}
    g = run.ir_graph
    assert Counter(node.op_type for node in g.nodes()) == {"Data": 1, "Const": 1, "Mul": n, "Neg": n,
                                                          "NetOutput": 1}
    assert g.num_uses(g.node_by_name("Const_0")) == n


# ---------------------------------------------------------------------------------------------- tests
@pytest.fixture(scope="module", autouse=True)
def _warm_up(neg_pass: Path) -> None:
    """One small compile first, so one-off costs (imports, catalogue, pass loading) land in no measurement."""
    run = gebench.compile(shared_const_graph(4, 1.0), passes=[str(neg_pass), str(MUL_ONE)])
    assert run.status == "SUCCESS", run.failure_reason


def test_rewrites_around_a_shared_const_take_linear_work(monkeypatch: pytest.MonkeyPatch, neg_pass: Path) -> None:
    passes = PassSet([str(neg_pass)])
    steps = {}
    for n in (1000, 4000):
        run, steps[n] = compile_counted(monkeypatch, shared_const_graph(n, 2.0), passes, profile=True)
        check_neg_through_mul(run, n)
    assert steps[4000] / steps[1000] <= 4.5, steps


def test_a_pattern_through_a_shared_const_takes_linear_work(monkeypatch: pytest.MonkeyPatch) -> None:
    passes = PassSet([str(MUL_ONE)])
    steps = {}
    for n in (1000, 4000):
        run, steps[n] = compile_counted(monkeypatch, shared_const_graph(n, 1.0), passes, profile=True)
        check_mul_one_blocked(run, n)
    assert steps[4000] / steps[1000] <= 4.5, steps


def test_twenty_thousand_consumers_of_one_const(monkeypatch: pytest.MonkeyPatch, neg_pass: Path) -> None:
    """Both passes on 20k branches, within an adjacency-step budget linear in the branches: about 59 steps per
    branch are needed, 120 are allowed (a quadratic compile passes that budget long before its end and stops)."""
    n = 20_000
    passes = PassSet([str(neg_pass), str(MUL_ONE)])
    run, steps = compile_counted(monkeypatch, shared_const_graph(n, 1.0), passes, profile=False, budget=120 * n)
    check_neg_through_mul(run, n)
    # the rewritten branches are Mul(Neg(x), 1.0): mul_one matches each through the shared Const, and is refused
    assert summary(run, "GebenchMulOnePass") == {
        "candidates": n, "replaced": 0, "rejected": {"BOUNDARY_VIOLATION": n}, "lints": 0}
    assert steps <= 120 * n


def test_the_rewrite_cycle_check_does_not_expand_a_shared_producer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A rewrite (the checked path, as decompose and hand-written passes use it) whose fused node would close a
    cycle through ``q``; the Const ``c`` also feeding it is shared by 20k other nodes, and nothing new reaches it,
    so the cycle search never lists its consumers."""
    n = 20_000
    g = ir.Graph("cyclic")
    p = g.add_node("Data", name="p", outputs=1, attrs={"index": 0})
    c = g.add_node("Const", name="c", outputs=1)
    for i in range(n):
        g.add_edge(c, 0, g.add_node("Relu", name=f"r{i}", inputs=1, outputs=1), 0)
    a = g.add_node("Mul", name="a", inputs=2, outputs=1)
    x = g.add_node("Relu", name="x", inputs=1, outputs=1)
    q = g.add_node("Abs", name="q", inputs=1, outputs=1)
    b = g.add_node("Add", name="b", inputs=2, outputs=1)
    out = g.add_node("NetOutput", name="out", inputs=1)
    for src, dst, port in ((p, a, 0), (c, a, 1), (a, x, 0), (x, q, 0), (a, b, 0), (q, b, 1), (b, out, 0)):
        g.add_edge(src, 0, dst, port)
    rep = ir.Graph("fused")
    data = [rep.add_node("Data", name=f"d{i}", outputs=1, attrs={"index": i}) for i in range(3)]
    fused = rep.add_node("Fused", name="f", inputs=3, outputs=2)
    net = rep.add_node("NetOutput", name="o", inputs=2)
    for i, d in enumerate(data):
        rep.add_edge(d, 0, fused, i)
    rep.add_edge(fused, 0, net, 0)
    rep.add_edge(fused, 1, net, 1)
    # inputs p, c, q; outputs a (read by x, which leads to q) and b
    boundary = Boundary([BoundaryInput([(a, 0)]), BoundaryInput([(a, 1)]), BoundaryInput([(b, 1)])], [(a, 0), (b, 0)])
    steps = _Steps()
    with monkeypatch.context() as patch:
        steps.install(patch)
        with pytest.raises(RewriteError) as err:
            rewrite(g, boundary, rep, pass_name="fanout")
    assert err.value.reason_code is RewriteReason.WOULD_CREATE_CYCLE and err.value.node is q
    assert steps.elements <= 100, steps.elements
    g.verify()
    assert g.num_uses(c) == n + 1 and len(g) == n + 7  # unchanged


# ---------------------------------------------------------------------------------------------- the graph's use lists
class _CountingId(int):
    """A node id that counts its equality comparisons (a scan of a use list compares ids one by one)."""

    compares = 0

    def __eq__(self, other: object) -> bool:
        _CountingId.compares += 1
        return int.__eq__(self, other)

    __hash__ = int.__hash__


def _fan(n: int) -> tuple[ir.Graph, ir.Node, list[ir.Node]]:
    g = ir.Graph("fan")
    src = g.add_node("Const", name="c", outputs=1, node_id=_CountingId(0))
    consumers = [g.add_node("Relu", name=f"r{i}", inputs=1, outputs=1, node_id=_CountingId(i + 1))
                 for i in range(n)]
    for node in consumers:
        g.add_edge(src, 0, node, 0)
    return g, src, consumers


def test_removing_uses_of_a_shared_output_does_not_scan_its_use_list() -> None:
    n = 3000
    g, src, consumers = _fan(n)
    _CountingId.compares = 0
    for node in reversed(consumers[n // 2:]):  # the last uses first: a list scan would pass every earlier one
        g.remove_edge(src, 0, node, 0)
    for node in reversed(consumers[: n // 4]):
        g.remove_node(node)
    assert _CountingId.compares <= n, _CountingId.compares
    g.verify()
    kept = consumers[n // 4: n // 2]
    assert g.uses(src, 0) == [(node, 0) for node in kept]  # the remaining uses keep their order
    g.add_edge(src, 0, consumers[-1], 0)  # a new use goes last
    g.remove_edge(src, 0, kept[0], 0)
    assert g.uses(src, 0) == [(node, 0) for node in [*kept[1:], consumers[-1]]]
    g.verify()


def test_replace_all_uses_keeps_the_use_order() -> None:
    g, src, consumers = _fan(50)
    other = g.add_node("Const", name="d", outputs=1)
    g.add_edge(other, 0, g.add_node("Relu", name="first", inputs=1, outputs=1), 0)
    g.replace_all_uses(src, 0, other, 0)
    assert g.uses(src, 0) == []
    assert [node.name for node, _ in g.uses(other, 0)] == ["first", *(node.name for node in consumers)]
    g.verify()
