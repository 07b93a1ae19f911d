"""The ledger: every candidate a pass considered, with a verdict from a closed set, plus lints.

Records are small slotted dataclasses holding ids, names and short texts (never graph copies), so recording
costs a constructor call and a few index updates per candidate. The whole ledger round-trips through JSON.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ._matcher import compact_failure, mismatch_detail

__all__ = [
    "CandidateStatus",
    "CandidateRecord",
    "STATUS_BY_NAME",
    "NearMiss",
    "Ledger",
    "LedgerRecorder",
    "NEAR_MISSES_KEPT",
]

#: How many near-misses are kept per pattern.
NEAR_MISSES_KEPT = 5


class CandidateStatus(str, enum.Enum):
    """The verdict on one candidate (closed set; ``LINT`` marks lint records)."""

    REPLACED = "REPLACED"
    REJECTED_BY_MEET_REQUIREMENTS = "REJECTED_BY_MEET_REQUIREMENTS"
    STRUCTURAL_MISMATCH = "STRUCTURAL_MISMATCH"
    BOUNDARY_VIOLATION = "BOUNDARY_VIOLATION"
    WOULD_CREATE_CYCLE = "WOULD_CREATE_CYCLE"
    LOST_TO_OVERLAP = "LOST_TO_OVERLAP"
    REPLACEMENT_FAILED = "REPLACEMENT_FAILED"
    LINT = "LINT"


#: Status by name (a dict lookup; ``CandidateStatus[name]`` goes through the enum machinery).
STATUS_BY_NAME: dict[str, CandidateStatus] = dict(CandidateStatus.__members__)


@dataclasses.dataclass(slots=True)
class CandidateRecord:
    """One candidate (or lint) of one pattern of one pass on one graph.

    ``captures`` holds ``(node_id, node_name, port)`` triples; ``pattern_source`` / ``hook_source`` are
    ``file:line`` strings; ``meet_requirements_result`` is the hook's return value rendered JSON-friendly;
    ``exception`` is the formatted exception (type, message and the pass file's line) when a hook raised.
    Sequence fields accept lists or tuples (tuples are cheaper to keep: the defaults are empty tuples).
    """

    pass_name: str
    stage: str
    graph_name: str
    pattern_name: str
    status: CandidateStatus
    reason: str = ""
    target_node_ids: Sequence[int] = ()
    target_node_names: Sequence[str] = ()
    captures: Sequence[Any] = ()
    pattern_source: str = ""
    hook_source: str = ""
    meet_requirements_result: Any = None
    exception: str = ""
    removed_node_ids: Sequence[int] = ()
    added_node_ids: Sequence[int] = ()
    detail: dict[str, Any] = dataclasses.field(default_factory=dict)
    max_abs_error: float | None = None
    max_rel_error: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (lists for sequences, the status by name)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["status"] = self.status.value
        for key in ("target_node_ids", "target_node_names", "captures", "removed_node_ids", "added_node_ids"):
            out[key] = [list(c) if isinstance(c, tuple) else c for c in out[key]]
        out["detail"] = _jsonable(self.detail)
        out["meet_requirements_result"] = _jsonable(self.meet_requirements_result)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CandidateRecord:
        """Inverse of :meth:`to_dict`.

        Raises:
            ValueError: an unknown status or field.
        """
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - fields
        if unknown:
            raise ValueError(f"ledger record has unknown fields {sorted(unknown)}")
        kwargs = dict(data)
        kwargs["status"] = CandidateStatus(data["status"])
        return cls(**kwargs)


@dataclasses.dataclass(slots=True)
class NearMiss:
    """A candidate that bound ``bound_count`` pattern nodes before failing at ``pattern_node``; ``bindings``
    maps the bound pattern node ids (as text) to the target node names they were bound to."""

    pass_name: str
    pattern_name: str
    anchor_node_id: int
    anchor_node_name: str
    bound_count: int
    pattern_node: str
    kind: str
    expected: Any
    actual: Any
    target_node: str | None = None
    bindings: dict[str, str] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return _jsonable({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})


class Ledger:
    """An append-only list of :class:`CandidateRecord` with indexes by pass and by target node.

    ``append`` is O(1) and allocates nothing besides the list slot: the indexes are brought up to date on
    the first lookup after appends (O(new records)), so recording stays cheap during a run. Lookups are
    O(answer) afterwards. Records appended with :meth:`append_deferred` are built, in place and in order, on
    the first read of the records after them.
    """

    def __init__(self) -> None:
        # records, and (build, args) pairs for records appended with append_deferred and not built yet
        self._records: list[Any] = []
        self._first_deferred = -1  # index of the first unbuilt record, -1 when there is none
        self._indexed = 0
        self._by_pass: dict[str, list[int]] = {}
        self._by_node_id: dict[int, list[int]] = {}
        self._by_node_name: dict[str, list[int]] = {}
        self._near: dict[str, list[NearMiss]] = {}

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[CandidateRecord]:
        return iter(self.records)

    @property
    def records(self) -> list[CandidateRecord]:
        """All records in the order they were appended (do not mutate the list)."""
        if self._first_deferred >= 0:
            self._build_deferred()
        return self._records

    def append(self, record: CandidateRecord) -> int:
        """Add ``record``; returns its index. O(1)."""
        self._records.append(record)
        return len(self._records) - 1

    def append_deferred(self, build: Callable[..., CandidateRecord], *args: Any) -> None:
        """Add the record ``build(*args)`` without building it yet: it is built on the first read of the records
        (any method here that returns or counts by records). For records that are costly to build and made in
        bulk, such as the matcher's structural mismatches; ``args`` must not change in between. O(1)."""
        if self._first_deferred < 0:
            self._first_deferred = len(self._records)
        self._records.append((build, args))

    def _build_deferred(self) -> None:
        records = self._records
        for i in range(self._first_deferred, len(records)):
            entry = records[i]
            if type(entry) is tuple:
                records[i] = entry[0](*entry[1])
        self._first_deferred = -1

    def _index(self) -> None:
        records = self.records
        for idx in range(self._indexed, len(records)):
            record = records[idx]
            self._by_pass.setdefault(record.pass_name, []).append(idx)
            for nid in record.target_node_ids:
                self._by_node_id.setdefault(nid, []).append(idx)
            for name in record.target_node_names:
                self._by_node_name.setdefault(name, []).append(idx)
        self._indexed = len(records)

    def extend(self, records: Iterable[CandidateRecord]) -> None:
        for r in records:
            self.append(r)

    def by_pass(self, pass_name: str) -> list[CandidateRecord]:
        """Records of one pass, in order."""
        self._index()
        return [self._records[i] for i in self._by_pass.get(pass_name, ())]  # _index built them

    def by_status(self, status: CandidateStatus) -> list[CandidateRecord]:
        return [r for r in self.records if r.status is status]

    def pass_names(self) -> list[str]:
        """Pass names in first-recorded order."""
        self._index()
        return list(self._by_pass)

    def for_node(self, node: int | str) -> list[CandidateRecord]:
        """Records whose target nodes include ``node`` (an id or a name), in order."""
        self._index()
        index = self._by_node_id if isinstance(node, int) and not isinstance(node, bool) else self._by_node_name
        return [self._records[i] for i in index.get(node, ())]  # type: ignore[call-overload]

    # ------------------------------------------------------------------ near misses
    def wants_near_miss(self, pattern_name: str, bound_count: int) -> bool:
        """Whether a near-miss binding ``bound_count`` nodes would be kept (lets callers skip building it)."""
        kept = self._near.get(pattern_name)
        return kept is None or len(kept) < NEAR_MISSES_KEPT or bound_count > kept[-1].bound_count

    def note_near_miss(self, miss: NearMiss) -> None:
        """Keep ``miss`` if it is among the best :data:`NEAR_MISSES_KEPT` of its pattern (by bound count)."""
        kept = self._near.setdefault(miss.pattern_name, [])
        if len(kept) >= NEAR_MISSES_KEPT and miss.bound_count <= kept[-1].bound_count:
            return
        pos = len(kept)
        while pos > 0 and kept[pos - 1].bound_count < miss.bound_count:
            pos -= 1
        kept.insert(pos, miss)
        del kept[NEAR_MISSES_KEPT:]

    def near_misses(self, pattern_name: str) -> list[NearMiss]:
        """The best near-misses of a pattern, most pattern nodes bound first."""
        return list(self._near.get(pattern_name, ()))

    # ------------------------------------------------------------------ summaries
    def summary(self) -> dict[str, dict[str, Any]]:
        """Per pass: ``candidates`` (non-lint records), ``replaced``, ``rejected`` (status name -> count) and
        ``lints``."""
        self._index()
        out: dict[str, dict[str, Any]] = {}
        for name, idxs in self._by_pass.items():
            entry: dict[str, Any] = {"candidates": 0, "replaced": 0, "rejected": {}, "lints": 0}
            for i in idxs:
                status = self._records[i].status
                if status is CandidateStatus.LINT:
                    entry["lints"] += 1
                    continue
                entry["candidates"] += 1
                if status is CandidateStatus.REPLACED:
                    entry["replaced"] += 1
                else:
                    entry["rejected"][status.value] = entry["rejected"].get(status.value, 0) + 1
            out[name] = entry
        return out

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        return {
            "records": [r.to_dict() for r in self.records],
            "near_misses": {k: [m.to_dict() for m in v] for k, v in self._near.items()},
        }

    def to_json(self, **kwargs: Any) -> str:
        """The ledger as JSON text (``kwargs`` go to :func:`json.dumps`)."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Ledger:
        ledger = cls()
        for rec in data.get("records", ()):
            ledger.append(CandidateRecord.from_dict(rec))
        for pattern, misses in data.get("near_misses", {}).items():
            ledger._near[pattern] = [NearMiss(**m) for m in misses]
        return ledger

    @classmethod
    def from_json(cls, text: str) -> Ledger:
        """Inverse of :meth:`to_json`.

        Raises:
            ValueError: the text is not a ledger.
        """
        return cls.from_dict(json.loads(text))


class LedgerRecorder:
    """The matcher's recorder (``structural_mismatch`` / ``boundary_violation``) writing into a ledger.

    One recorder per (pass, stage, graph, pattern); the context fields are copied into every record.
    """

    __slots__ = ("ledger", "pass_name", "stage", "graph_name", "pattern_name", "pattern_source", "hook_source",
                 "_build_mismatch")

    def __init__(self, ledger: Ledger, *, pass_name: str, stage: str, graph_name: str, pattern_name: str,
                 pattern_source: str = "", hook_source: str = "") -> None:
        self.ledger = ledger
        self.pass_name = pass_name
        self.stage = stage
        self.graph_name = graph_name
        self.pattern_name = pattern_name
        self.pattern_source = pattern_source
        self.hook_source = hook_source
        self._build_mismatch = self._mismatch_record  # one bound method for every deferred record

    def structural_mismatch(self, anchor_node: Any, failure: tuple[Any, ...], bound_count: int) -> None:
        # the record is built when the ledger is first read (most runs reject many candidates; names and op
        # types of target nodes do not change during a run); near-misses are kept now
        self.ledger.append_deferred(self._build_mismatch, anchor_node.id, anchor_node._name, compact_failure(failure))
        if self.ledger.wants_near_miss(self.pattern_name, bound_count):
            detail = mismatch_detail(failure)
            self.ledger.note_near_miss(NearMiss(
                self.pass_name, self.pattern_name, anchor_node.id, anchor_node.name, bound_count,
                str(detail["pattern_node"]), str(detail["kind"]), detail["expected"], detail["actual"],
                detail["target_node"], dict(detail["bindings"])))

    def _mismatch_record(self, anchor_id: int, anchor_name: str, failure: tuple[Any, ...]) -> CandidateRecord:
        detail = mismatch_detail(failure)
        target = detail["target_node"]
        reason = (f"pattern node {detail['pattern_node']!r}: {detail['kind']} expected {detail['expected']!r}, "
                  f"found {detail['actual']!r}" + (f" at {target!r}" if target is not None else ""))
        return CandidateRecord(
            self.pass_name, self.stage, self.graph_name, self.pattern_name, CandidateStatus.STRUCTURAL_MISMATCH,
            reason, (anchor_id,), (anchor_name,), pattern_source=self.pattern_source, hook_source=self.hook_source,
            detail=detail)

    def boundary_violation(self, match_nodes: list[Any], escaping_node: Any, detail: dict[str, Any]) -> None:
        reason = (f"output of inner node {escaping_node.name!r} is used outside the match by "
                  f"{detail.get('outside_consumer')!r}")
        self.ledger.append(CandidateRecord(
            self.pass_name, self.stage, self.graph_name, self.pattern_name, CandidateStatus.BOUNDARY_VIOLATION,
            reason, tuple(n.id for n in match_nodes), tuple(n.name for n in match_nodes),
            pattern_source=self.pattern_source, hook_source=self.hook_source, detail=detail))


def _jsonable(value: Any) -> Any:
    """``value`` with tuples as lists, enums by value and unknown objects as their ``repr``."""
    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, enum.Enum):
            return value.value if isinstance(value.value, (int, str)) else value.name
        return value
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return repr(value)
