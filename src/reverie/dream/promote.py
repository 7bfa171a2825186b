"""Org promotion: knowledge one agent keeps re-learning becomes its tenant's.

The **org brain** of tenant ``T`` is the scope ``T/_org`` (:attr:`reverie.models.Scope.org`; no
agent can be named ``_org``, and it takes no episodes). It is written only here, by the cycles
of the tenant's agents, inside each cycle's one transaction (``Changeset.promotions``); the store
refuses any other write that leaves a cycle's scope (DESIGN invariant 7).

* **When**: a page of the cycle's scope that is active and reinforced in at least
  ``DreamConfig.promote_after_cycles`` distinct cycles (the stored observations of cycles not
  undone, plus this cycle's) is copied to the org brain.
* **What**: the org page ``pg_…`` of topic ``promoted|<agent scope>|<source topic>`` holds the
  source's title, kind, confidence, validity and status; each claim keeps its episode citations
  and also cites the source page (``Claim.page_ids``), so ``why`` leads from an org page to the
  agent's page and down to the raw episodes. Its revisions are authored ``promotion`` with the
  agent and source revision in their reason; the ``promotions`` table keeps the attribution.
* **Later revisions**: every cycle of the scope compares each promoted source's current revision
  with the one last copied and writes a new org revision when they differ — also after a merge,
  a retirement, a restore or a person's edit of the source, or an undo (the next cycle of the
  scope catches up). A source superseded by a merge leaves its org copy superseded too.

Deterministic for a store state and ``now``; reads only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reverie.dream.apply import WriteContext, next_revision, revision_from
from reverie.models import Claim, Page, PageStatus, Revision, Scope
from reverie.models.plan import page_id_for
from reverie.store.base import BrainStore, Observation, PageWrite, Promotion, PromotionRecord

__all__ = ["AUTHOR", "journal_lines", "org_topic", "promotions"]

AUTHOR = "promotion"


def org_topic(scope: Scope, topic_key: str) -> str:
    """The org page's topic key: one org page per source page, named by scope and topic."""
    return f"promoted|{scope.key}|{topic_key}"


def _claims(rev: Revision, source_id: str) -> tuple[Claim, ...]:
    return tuple(
        Claim(
            text=c.text,
            episode_ids=c.episode_ids,
            page_ids=tuple(dict.fromkeys((*c.page_ids, source_id))),
        )
        for c in rev.claims
    )


def _content(rev: Revision, source_id: str, org_ids: Mapping[str, str]) -> dict[str, object]:
    return {
        "title": rev.title,
        "kind": rev.kind,
        "claims": _claims(rev, source_id),
        "confidence": rev.confidence,
        "status": rev.status,
        "valid_from": rev.valid_from,
        "valid_until": rev.valid_until,
        "superseded_by": org_ids.get(rev.superseded_by or ""),
    }


def _copy(
    ctx: WriteContext,
    source: tuple[str, str],
    rev: Revision,
    current: Page | None,
    org_ids: Mapping[str, str],
    reason: str,
) -> PageWrite | None:
    """The org page's next revision copying ``rev`` of ``source`` (id, org topic key); None
    when the org page already says the same."""
    content = _content(rev, source[0], org_ids)
    topic = source[1]
    if current is None:
        page_id = page_id_for(ctx.scope, topic)
        new = revision_from(page_id, 1, ctx, reason=reason, **content)  # type: ignore[arg-type]
        return PageWrite(ctx.scope, topic, new, None)
    new = next_revision(ctx, current, reason=reason, **content)
    if new.hash == current.revision.hash:
        return None
    return PageWrite(ctx.scope, topic, new, current.revision.number)


def promotions(
    store: BrainStore,
    ctx: WriteContext,
    writes: Sequence[PageWrite],
    observations: Sequence[Observation],
    min_cycles: int,
) -> list[Promotion]:
    """The org writes of this cycle of ``ctx.scope`` (see the module docstring)."""
    scope: Scope = ctx.scope
    if min_cycles <= 0 or scope.is_org:
        return []
    records = {r.source_page_id: r for r in store.promotions(scope)}
    written = {w.revision.page_id: w for w in writes if w.scope == scope}  # the last one wins
    now_seen = {o.page_id for o in observations}
    candidates = sorted(set(written) | now_seen | set(records))
    strengths = store.strengths(p for p in candidates if p not in records)
    org = WriteContext(scope.org, ctx.cycle_id, ctx.now, {}, author=AUTHOR)
    org_ids = {p: r.org_page_id for p, r in records.items()}
    out: list[Promotion] = []
    for page_id in candidates:
        if page_id in written:
            rev, topic = written[page_id].revision, org_topic(scope, written[page_id].topic_key)
        else:
            page = store.page(page_id)
            if page.scope != scope:
                continue
            rev, topic = page.revision, org_topic(scope, page.topic_key)
        record = records.get(page_id)
        if record is not None:
            out += _update(store, org, scope, (page_id, topic), rev, record, org_ids)
            continue
        strength = strengths.get(page_id)
        cycles = (strength.cycles if strength else 0) + (page_id in now_seen)
        if rev.status is PageStatus.ACTIVE and cycles >= min_cycles:
            reason = f"promoted from {scope.key} (agent {scope.agent}): {cycles} cycles"
            write = _copy(org, (page_id, topic), rev, None, org_ids, reason)
            if write is not None:
                out.append(Promotion(write, page_id, scope, rev.number, cycles))
    return out


def _update(
    store: BrainStore,
    org: WriteContext,
    scope: Scope,
    source: tuple[str, str],
    rev: Revision,
    record: PromotionRecord,
    org_ids: Mapping[str, str],
) -> list[Promotion]:
    if rev.number == record.source_revision:
        return []
    current = store.page(record.org_page_id)
    reason = f"updated from {scope.key} (agent {scope.agent}): {source[0]} rev {rev.number}"
    write = _copy(org, source, rev, current, org_ids, reason)
    if write is None:
        return []
    return [Promotion(write, source[0], scope, rev.number, 0)]


def journal_lines(done: Sequence[Promotion]) -> str:
    """Lines for the cycle's journal entry: what went to the org brain, and why."""
    return "".join(
        f'\n- promoted "{p.write.revision.title}" to {p.write.scope}'
        f" ({p.write.revision.page_id}, rev {p.write.revision.number}):"
        f" {p.write.revision.reason}"
        for p in done
    )
