"""One consolidation pass over one scope: collect → cluster → distill → validate → apply.

Everything before ``apply`` only reads; the distiller (the only place a model may be called) runs
before the transaction. ``apply`` hands one :class:`~reverie.store.base.Changeset` to the store —
revisions, citations, episode marks, the checkpoint and the cycle record land together or not at
all. A group whose plan fails validation changes nothing and stays eligible: the checkpoint stops
before its first episode, as it does before the first episode deferred by a cap.

``on_phase`` is called with the phase name before each phase and between the writes of the
commit; tests inject faults through it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from reverie.config import DreamConfig
from reverie.dream.apply import WriteContext, change_of, operation_writes
from reverie.dream.archive import resolve as resolve_archived  # cold-tier history
from reverie.dream.boilerplate import Boilerplate, boilerplate_of
from reverie.dream.budget import absorb, model_due, reinforce, with_support
from reverie.dream.cluster import Group
from reverie.dream.collect import Collection, collect, next_checkpoint
from reverie.dream.decay import merge_observations, observed
from reverie.dream.dedupe import Routing, fold_converged, teach_apart
from reverie.dream.dedupe import route as route_duplicates
from reverie.dream.distill import ExtractiveDistiller
from reverie.dream.facts import Assertion
from reverie.dream.facts import split as split_facts
from reverie.dream.fallback import fallback_due
from reverie.dream.journal import cycle_entry
from reverie.dream.memory_step import decay_due, memory_step
from reverie.dream.pins import has_pins, is_human_edit, keep_pins
from reverie.dream.problems import Grouping, is_knowledge, is_problem_page, problem_groups
from reverie.dream.promote import journal_lines
from reverie.dream.promote import promotions as org_promotions
from reverie.dream.report import CycleWork, fill_extras
from reverie.dream.score import rank_for_cap, score_groups
from reverie.dream.split import find_split, split_due
from reverie.dream.unlearn import unlearn, unlearning_groups
from reverie.dream.values import value_writes
from reverie.embed import Embedder
from reverie.errors import GroupDeferred, PlanRejected
from reverie.llm.protocol import MeteredDistiller
from reverie.models import Cycle, CycleReport, CycleStatus, Episode, Page, PageStatus, Scope
from reverie.models.plan import Distiller, Evidence, Plan, SplitPart, validate_plan
from reverie.redaction import DEFAULT, Redactor
from reverie.store.base import (
    BrainStore,
    Changeset,
    CycleTally,
    Observation,
    PageWrite,
    Promotion,
    StepHook,
)
from reverie.text.turns import is_conversation

__all__ = ["DreamCycle", "new_cycle_id"]

_ACTION_FIELDS = {
    "created": "created",
    "revised": "revised",
    "merged": "merged",
    "superseded": "superseded",
    "retired": "retired",
}


def _fell_back(ev: Evidence, reasons: Sequence[str]) -> str:
    return f"group {ev.topic_key!r}: distilled extractively; the model's plan: " + "; ".join(
        reasons
    )


def new_cycle_id(now: datetime) -> str:
    return f"cy_{now.strftime('%Y%m%dT%H%M%S')}_{uuid.uuid4().hex[:8]}"


@dataclass
class _Outcome:
    writes: list[tuple[str, PageWrite, int]] = field(default_factory=list)
    marks: list[str] = field(default_factory=list)
    leftover: list[Episode] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    fallbacks: list[str] = field(default_factory=list)
    unchanged: int = 0
    deferred_groups: list[str] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)  # reinforcement
    promotions: list[Promotion] = field(default_factory=list)  # org copies


@dataclass
class _Distilled:
    """What the distiller made of the groups: plans to validate, and groups it declined."""

    pairs: list[tuple[Evidence, Plan]] = field(default_factory=list)
    leftover: list[Episode] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    fallbacks: list[str] = field(default_factory=list)
    extractive: set[int] = field(default_factory=set)  # id() of evidence already fallen back
    deferred: list[str] = field(default_factory=list)
    stopped: bool = False


class _Timer:
    def __init__(self, hook: StepHook) -> None:
        self.hook = hook
        self.timings: dict[str, float] = {}
        self._phase: str | None = None
        self._start = 0.0

    def phase(self, name: str) -> None:
        self._stop()
        self.hook(name)
        self._phase, self._start = name, time.perf_counter()

    def _stop(self) -> None:
        if self._phase is not None:
            elapsed = time.perf_counter() - self._start
            self.timings[self._phase] = round(self.timings.get(self._phase, 0.0) + elapsed, 6)
        self._phase = None

    def done(self) -> dict[str, float]:
        self._stop()
        return self.timings


class DreamCycle:
    """Runs cycles for a store with a distiller, an optional embedder and settings."""

    def __init__(
        self,
        store: BrainStore,
        distiller: Distiller,
        *,
        config: DreamConfig | None = None,
        embedder: Embedder | None = None,
        on_phase: Callable[[str], None] | None = None,
        redactor: Redactor = DEFAULT,
    ) -> None:
        self.store = store
        self.distiller = distiller
        self.config = config or DreamConfig()
        self.embedder = embedder
        self.redactor = redactor
        """What every plan is redacted with before it is applied (secrets, and personal data by
        :class:`~reverie.config.RedactionConfig`)."""
        self.extractive = ExtractiveDistiller(self.config, embedder)
        """What a group is distilled with when no model is called for it, or a model failed it."""
        self.on_phase: StepHook = on_phase or (lambda _name: None)

    def run(
        self,
        scope: Scope,
        now: datetime,
        *,
        dry_run: bool = False,
        cycle_id: str | None = None,
        hold: Callable[[Changeset], None] | None = None,
    ) -> CycleReport:
        """One cycle of ``scope``. ``hold`` (review mode) receives the changeset
        the cycle would commit instead of the store: nothing changes, the report says pending."""
        timer = _Timer(self.on_phase)
        cycle_id = cycle_id or new_cycle_id(now)  # given: the HTTP service announced it
        timer.phase("collect")
        checkpoint = self.store.checkpoint(scope)
        scanned = self.store.scan(scope, checkpoint, self.config.scan_limit)
        report = CycleReport(
            cycle_id=cycle_id,
            scope=scope,
            status=CycleStatus.EMPTY,
            started_at=now,
            checkpoint_before=checkpoint,
            checkpoint_after=checkpoint,
            scanned=len(scanned),
        )
        if scope.is_org or (  # the org brain is written only by promotion
            not scanned
            and not decay_due(  # only an explicit retire_after_days policy
                self.store, WriteContext(scope, cycle_id, now, {}), self.config.memory
            )
        ):
            report.timings = timer.done()
            report.message = "nothing new since the last cycle"
            return report
        collection = collect(scanned, self.config)
        fact_slots, others = split_facts(collection.taken)  # facts skip clustering
        timer.phase("cluster")
        boilerplate = boilerplate_of(self.store, scope, self.config)
        _see_through(boilerplate, others, collection.taken, scanned)
        grouping, routing = self._group(scope, others, boilerplate)
        groups = routing.groups
        timer.phase("score")  # insight scores order the group cap
        scores = score_groups(self.store, scope, groups)
        kept, overflow = rank_for_cap(groups, scores, self.config.max_groups_per_cycle)
        timer.phase("distill")
        evidence = self._evidence(scope, kept, now, routing.merges, boilerplate)
        distilled = self._distill_all(evidence, report)
        evidence += self._unlearn(scope, now, evidence, boilerplate, distilled)
        timer.phase("validate")
        result = self._validate(
            distilled, WriteContext(scope, cycle_id, now, self._shown(evidence))
        )
        self._remember(WriteContext(scope, cycle_id, now, {}), fact_slots, result, scanned)
        result.leftover += collection.deferred + [e for g in overflow for e in g.episodes]
        new_checkpoint = next_checkpoint(collection.last_scanned_seq or checkpoint, result.leftover)
        self._fill(report, collection, groups, result, new_checkpoint, passed=len(grouping.passed))
        work = CycleWork(
            scanned=scanned,
            taken=collection.taken,
            taken_bytes=collection.taken_bytes,
            kept=kept,
            overflow=overflow,
            scores=scores,
            revisions=[w.revision for _a, w, _n in result.writes],
            marks=result.marks,
        )
        fill_extras(report, self.store, self.config, work)  # volumes, insights, recommendations
        if dry_run:
            report.status, report.message = CycleStatus.DRY_RUN, "dry run: nothing was changed"
            report.timings = timer.done()
            return report
        if not (result.writes or result.marks) and new_checkpoint == checkpoint:
            # every group was rejected or deferred: commit nothing, so the store keeps every byte
            report.message = "nothing applied: " + report.message
            report.timings = timer.done()
            return report
        timer.phase("promote")  # org copies of reinforced pages, same transaction
        self._promote(WriteContext(scope, cycle_id, now, {}), result, report)
        timer.phase("apply")
        report.status = CycleStatus.COMMITTED
        report.finished_at = now
        report.timings = timer.done()
        if hold is not None:  # review mode: stored for review; its own copy of the report
            hold(self._changeset(report.model_copy(deep=True), result))
            report.status = CycleStatus.PENDING
            return report
        started = time.perf_counter()
        self.store.commit(self._changeset(report, result), on_step=self.on_phase)
        # The stored report cannot time the transaction that stores it; the returned one does.
        report.timings["commit"] = round(time.perf_counter() - started, 6)
        return report

    def _group(
        self, scope: Scope, episodes: Sequence[Episode], boilerplate: Boilerplate
    ) -> tuple[Grouping, Routing]:
        """The cycle's problems against the scope's active pages; then each lesson the brain
        holds goes to its page, and pages whose problems converged merge, unless each teaches
        a lesson the other does not or a person edited one. ``episodes`` are the cycle's views,
        without the brain's stop phrases (reverie.dream.boilerplate)."""
        active = self.store.pages(scope, [str(PageStatus.ACTIVE)])
        grouping = problem_groups(
            episodes,
            active,
            embedder=self.embedder,
            config=self.config,
            boilerplate=boilerplate,
        )
        routing = route_duplicates(self.store, scope, grouping.groups, self.config, self.embedder)
        converged = [  # a person's page is never merged away for looking alike
            (a, b)
            for a, b in grouping.converged
            if not (has_pins(a) or has_pins(b) or teach_apart(a, b, self.config, self.embedder))
        ]
        routing = fold_converged(routing, converged)
        known = {p.topic_key for p in active if not boilerplate.holds(p)} | set(routing.merges)
        kept = []
        for g in routing.groups:  # routing may have taken away what made a group knowledge
            if (
                g.topic_key in known
                or is_conversation(g.episodes)
                or is_knowledge(g, False, self.config.importance_threshold, self.config.min_pattern)
            ):
                kept.append(g)
            else:
                grouping.passed.extend(g.episodes)
        routing.groups = kept
        return grouping, routing

    def _evidence(
        self,
        scope: Scope,
        groups: Sequence[Group],
        now: datetime,
        merges: Mapping[str, Sequence[Page]] | None = None,
        boilerplate: Boilerplate | None = None,
    ) -> list[Evidence]:
        """Each group with its topic's page, plus the pages it merges (the same lesson, or a
        problem that converged), and the problems a page gives up when it splits. The history
        shown is stripped of stop phrases like the new episodes."""
        view = boilerplate or Boilerplate()
        pages = self.store.pages_by_topic(scope, [g.topic_key for g in groups])
        out = []
        for g in groups:
            page = pages.get(g.topic_key)
            merged = (merges or {}).get(g.topic_key, ())
            shown = [page, *merged] if page else []
            history: dict[str, tuple[Episode, ...]] = {}
            for p in shown:
                cited = p.citations[-self.config.history_limit :]
                eps = resolve_archived(self.store, self.store.episodes(cited, tenant=scope.tenant))
                history[p.id] = tuple(view.strip(e for e in eps if not is_human_edit(e)))
            split = self._split(page, history[page.id], g) if page and not merged else ()
            # Built from values that are valid already (the store's episodes and pages):
            # validating would only re-run every episode's own checks, once per episode.
            evidence = Evidence.model_construct(
                scope=scope,
                topic_key=g.topic_key,
                episodes=tuple(g.episodes),
                pages=tuple(shown),
                history=history,
                now=now,
                split=split,
            )
            out.append(evidence)
        return out

    def _unlearn(
        self,
        scope: Scope,
        now: datetime,
        evidence: Sequence[Evidence],
        boilerplate: Boilerplate,
        out: _Distilled,
    ) -> list[Evidence]:
        """Pages written before their filler was known, that no group of this cycle touches:
        distilled again without it, or retired (reverie.dream.unlearn); never by a model."""
        if not boilerplate.stops:
            return []
        shown = self._shown(evidence)
        active = [p for p in self.store.pages(scope, [str(PageStatus.ACTIVE)]) if p.id not in shown]
        groups = unlearning_groups(active, [], boilerplate)
        extra = self._evidence(scope, groups, now, None, boilerplate)
        for ev in extra:
            out.pairs.append((ev, unlearn(ev, self.extractive, self.config)))
            out.extractive.add(id(ev))
        return extra

    def _split(self, page: Page, history: Sequence[Episode], group: Group) -> tuple[SplitPart, ...]:
        """The problems a page that has grown to hold unrelated ones gives up this cycle, each
        to a topic that has no page yet (reverie.dream.split)."""
        if page.status is not PageStatus.ACTIVE or not is_problem_page(page):
            return ()
        work = list({ep.id: ep for ep in (*history, *group.episodes)}.values())
        support = page.revision.support
        known = set(page.citations)
        grown = (
            len(work)
            if support is None
            else support.episodes + sum(ep.id not in known for ep in group.episodes)
        )
        if not split_due(page, grown, self.config):
            return ()
        parts = find_split(page, work, embedder=self.embedder, config=self.config)
        taken = self.store.pages_by_topic(page.scope, [p.topic_key for p in parts]) if parts else {}
        return tuple(p for p in parts if p.topic_key not in taken)

    def _distill_all(self, evidence: Sequence[Evidence], report: CycleReport) -> _Distilled:
        """One distiller call per group; declined groups stay eligible. Fills the model usage."""
        metered = self.distiller if isinstance(self.distiller, MeteredDistiller) else None
        if metered is not None:
            metered.take_usage()  # start from zero: usage of this cycle only
        out = _Distilled()
        for ev in evidence:
            if out.stopped:
                out.leftover += ev.episodes
                continue
            self._distill_one(ev, out)
        if metered is not None:
            usage = metered.take_usage()
            report.model_calls, report.cache_hits = usage.calls, usage.cache_hits
            report.input_tokens, report.output_tokens = usage.input_tokens, usage.output_tokens
            report.model_latency_s = round(usage.latency_s, 6)
        return out

    def _distill_one(self, ev: Evidence, out: _Distilled) -> None:
        paid = isinstance(self.distiller, MeteredDistiller)  # it calls a model
        if ev.split:  # a structural rewrite: each part's page is written by the model when due
            out.pairs.append((ev, self.extractive.distill(ev)))
            out.extractive.add(id(ev))
            return
        growth, least = self.config.model_refresh_growth, self.config.model_min_support
        if paid and not model_due(ev, growth, least):
            out.pairs.append((ev, self._without_model(ev)))
            return
        try:
            plan = self.distiller.distill(ev)
            out.pairs.append((ev, with_support(plan, ev) if paid else plan))
        except PlanRejected as exc:
            if self._fallback_due(ev):
                out.fallbacks.append(_fell_back(ev, exc.reasons))
                out.pairs.append((ev, self.extractive.distill(ev)))
                out.extractive.add(id(ev))
                return
            out.rejected.append(f"group {ev.topic_key!r}: " + "; ".join(exc.reasons))
            out.leftover += ev.episodes
        except GroupDeferred as exc:
            out.deferred.append(f"group {ev.topic_key!r}: {exc.reason}")
            if 0 < exc.fit < len(ev.episodes):  # ask again with the part that fits
                out.leftover += ev.episodes[exc.fit :]
                self._distill_one(ev.model_copy(update={"episodes": ev.episodes[: exc.fit]}), out)
                return
            out.leftover += ev.episodes
            out.stopped = out.stopped or exc.rest

    def _without_model(self, ev: Evidence) -> Plan:
        """A group a model is not called for: its page reinforced (or absorbing the pages it
        merges), or, for a problem too new for a call, its page written extractively."""
        page = next((p for p in ev.pages if p.topic_key == ev.topic_key), None)
        support = page.revision.support if page is not None else None
        if support is None or support.distilled_at is None:
            return self.extractive.distill(ev)
        if len(ev.pages) > 1:
            return absorb(ev, self.distiller.name)
        return reinforce(ev, self.distiller.name)

    def _remember(
        self,
        ctx: WriteContext,
        fact_slots: dict[str, list[Assertion]],
        result: _Outcome,
        scanned: Sequence[Episode],
    ) -> None:
        """Fact runs, then decay of pages this cycle neither wrote nor observed."""
        step = memory_step(
            self.store,
            ctx,
            fact_slots,
            written={w.revision.page_id for _a, w, _n in result.writes},
            observed=result.observations,
            config=self.config.memory,
            scanned=scanned,  # the scope's activity clock
        )
        result.writes += step.writes
        active = self.store.pages(ctx.scope, [str(PageStatus.ACTIVE)])
        result.writes = value_writes(ctx, active, result.writes)  # one slot, one current page
        result.marks = list(dict.fromkeys([*result.marks, *step.marks]))  # a turn feeds both
        result.observations += step.observations
        result.leftover += step.deferred  # future-dated facts stay eligible
        result.deferred_groups += step.notes

    def _promote(self, ctx: WriteContext, result: _Outcome, report: CycleReport) -> None:
        result.promotions = org_promotions(
            self.store,
            ctx,
            [w for _a, w, _n in result.writes],
            result.observations,
            self.config.promote_after_cycles,
        )
        report.promoted = [p.write.revision.page_id for p in result.promotions]

    @staticmethod
    def _shown(evidence: Sequence[Evidence]) -> dict[str, Page]:
        return {p.id: p for ev in evidence for p in ev.pages}

    def _fallback_due(self, ev: Evidence) -> bool:
        return fallback_due(self.store, ev, self.distiller, self.config)

    def _validate(self, distilled: _Distilled, ctx: WriteContext) -> _Outcome:
        out = _Outcome(
            leftover=list(distilled.leftover),
            rejected=list(distilled.rejected),
            fallbacks=list(distilled.fallbacks),
            deferred_groups=list(distilled.deferred),
        )
        for ev, proposed in distilled.pairs:
            plan, problems = proposed, validate_plan(proposed, ev)
            if problems and id(ev) not in distilled.extractive and self._fallback_due(ev):
                plan = self.extractive.distill(ev)
                out.fallbacks.append(_fell_back(ev, problems))
                problems = validate_plan(plan, ev)
            if problems:
                out.rejected.append(f"group {ev.topic_key!r}: " + "; ".join(problems))
                out.leftover += ev.episodes
                continue
            plan = keep_pins(plan, ctx.pages)  # a person's corrections stick
            clean = self.redactor.plan(plan)  # no secret lands in a page, whatever the distiller
            writes = [w for op in clean.operations for w in operation_writes(op, ctx)]
            if not writes:
                out.unchanged += 1
            out.writes += [(action, w, len(ev.episodes)) for action, w in writes]
            out.marks += [e.id for e in ev.episodes]
            out.observations += observed(ev, clean)
        return out

    @staticmethod
    def _fill(
        report: CycleReport,
        collection: Collection,
        groups: Sequence[Group],
        result: _Outcome,
        checkpoint: int,
        *,
        passed: int = 0,
    ) -> None:
        """The report's counts, and its message from the same counts (``passed``: taken
        episodes the grouping passed over, which are not collected)."""
        report.collected = len(collection.taken) - passed
        report.deferred = len(result.leftover)
        report.groups = len(groups)
        report.rejected = result.rejected
        report.fallbacks = result.fallbacks
        report.deferred_groups = result.deferred_groups
        report.unchanged = result.unchanged
        report.episodes_marked = len(result.marks)
        report.checkpoint_after = checkpoint
        report.changes = [change_of(action, w, n) for action, w, n in result.writes]
        for action, _w, _n in result.writes:
            name = _ACTION_FIELDS[action]
            setattr(report, name, getattr(report, name) + 1)
        report.message = (
            f"{report.collected} collected, {report.created} created,"
            f" {report.revised} revised,"
            f" {report.deferred} deferred, {len(result.rejected)} rejected"
        )

    @staticmethod
    def _changeset(report: CycleReport, result: _Outcome) -> Changeset:
        return Changeset(
            scope=report.scope,
            expected_checkpoint=report.checkpoint_before,
            checkpoint=report.checkpoint_after,
            page_writes=[w for _a, w, _n in result.writes],
            marks=result.marks,
            mark_cycle=report.cycle_id,
            cycle=Cycle.of(report),
            observations=merge_observations(result.observations),
            journal=cycle_entry(report, result.writes) + journal_lines(result.promotions),
            tally=_tally(report, len(result.marks)),  # cumulative stats
            promotions=result.promotions,  # the only writes that leave the scope
            at=report.finished_at or report.started_at,  # the cycle's clock, never the store's
        )


def _see_through(
    boilerplate: Boilerplate, episodes: list[Episode], *holders: list[Episode]
) -> None:
    """Each of ``episodes`` replaced by the cycle's view of it (:meth:`Boilerplate.view`), there
    and in every list of ``holders``, each of which holds ``episodes`` in the same order (the
    scan, and what the cycle took of it). A blanked episode's stored copy is dropped as its view
    is made, so the cycle holds one copy of each episode, never both."""
    at = [0] * len(holders)
    for k, ep in enumerate(episodes):
        view = boilerplate.view(ep)
        if view is ep:
            continue
        episodes[k] = view
        for h, held in enumerate(holders):
            i = at[h]
            while held[i] is not ep:
                i += 1
            held[i], at[h] = view, i + 1


def _tally(report: CycleReport, marked: int) -> CycleTally:
    """A committed cycle's addition to the cumulative stats (its duration: every phase timed
    before the commit)."""
    return CycleTally(
        scope=report.scope,
        at=report.started_at,
        model_calls=report.model_calls,
        cache_hits=report.cache_hits,
        input_tokens=report.input_tokens,
        output_tokens=report.output_tokens,
        duration_s=sum(report.timings.values()),
        episodes=marked,
    )
