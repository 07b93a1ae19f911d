"""IR scaling benchmark: per-operation cost at 10k and 100k nodes must stay flat (O(1)/O(degree)).

Builds a transformer-like chain with residual edges through the IR API, then times op-type lookups,
replace_all_uses, node removal and verify(). The same edge insertions into a bare networkx MultiDiGraph
are timed in the same run as the peer. Prints one line per operation with the 100k/10k per-op ratio
(about 1.0 means the cost does not grow with the graph).

Run: .venv/bin/python bench/bench_ir.py
"""

from __future__ import annotations

import time

import networkx as nx

from gebench.ir import Graph


def build(n: int) -> tuple[Graph, float]:
    t0 = time.perf_counter()
    g = Graph(f"chain{n}")
    prev = g.add_node("Data", inputs=1, outputs=1, attrs={"index": 0})
    skip = prev
    for i in range(1, n):
        op = ("MatMul", "Add", "Relu", "Mul")[i % 4]
        node = g.add_node(op, inputs=2, outputs=1)
        g.add_edge(prev, 0, node, 0)
        g.add_edge(skip, 0, node, 1)
        if i % 8 == 0:
            skip = node
        prev = node
    return g, time.perf_counter() - t0


def peer_build(n: int) -> float:
    t0 = time.perf_counter()
    g = nx.MultiDiGraph()
    g.add_node(0)
    prev = skip = 0
    for i in range(1, n):
        g.add_node(i, op=("MatMul", "Add", "Relu", "Mul")[i % 4])
        g.add_edge(prev, i, key=(0, 0))
        g.add_edge(skip, i, key=(0, 1))
        if i % 8 == 0:
            skip = i
        prev = i
    return time.perf_counter() - t0


def measure(n: int) -> dict[str, float]:
    g, build_s = build(n)
    out = {"build (per node)": build_s / n, "peer nx build (per node)": peer_build(n) / n}
    t0 = time.perf_counter()
    k = 1000
    for _ in range(k):
        g.find("Relu_5")
    out["lookup by name"] = (time.perf_counter() - t0) / k
    relus = list(g._by_type["Relu"])[:k]  # ids only: avoids the sorted full list in the timed loop
    t0 = time.perf_counter()
    for nid in relus:
        node = g.node(nid)
        prod = g.producer(node, 0)
        g.replace_all_uses(node, 0, prod[0], prod[1])
    out["replace_all_uses"] = (time.perf_counter() - t0) / len(relus)
    t0 = time.perf_counter()
    for nid in relus:
        g.remove_node(g.node(nid))
    out["remove_node"] = (time.perf_counter() - t0) / len(relus)
    t0 = time.perf_counter()
    for _ in range(100):
        next(iter(g._by_type["Mul"]))
    out["op-type index hit"] = (time.perf_counter() - t0) / 100
    t0 = time.perf_counter()
    g.verify()
    out["verify (per node)"] = (time.perf_counter() - t0) / len(g)
    return out


def main() -> None:
    small, large = measure(10_000), measure(100_000)
    print(f"{'operation':28s} {'10k (us)':>10s} {'100k (us)':>10s} {'ratio':>6s}")
    for key in small:
        a, b = small[key] * 1e6, large[key] * 1e6
        print(f"{key:28s} {a:10.2f} {b:10.2f} {b / a:6.2f}")
    ratio = (large["build (per node)"]) / (large["peer nx build (per node)"])
    print(f"IR build vs bare networkx build at 100k: {ratio:.2f}x (indexes + positions + anchors)")


if __name__ == "__main__":
    main()
