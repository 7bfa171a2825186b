"""Erasure (docs/privacy.md): what a request reaches, the plan read from the store, and running it.

A :class:`ForgetRequest` names *what* to erase — episode ids, a page, a subject, or episodes
older than a retention period — and *where*: one scope exactly, an agent (its scope and every
user's under it), a tenant (every scope of it, its org brain included), or everywhere. A
request naming only a *where* erases that whole part of the brain. A scope is matched exactly:
``acme/coder`` never reaches ``acme/coder/alice``; ``agent`` does, by asking. Episode ids are
their tenant's own (two tenants may both store ``b1``), so a request naming ids names where
they live too, and everything the plan matches by id it matches within a tenant.

:func:`plan_forget` only reads. It selects the episodes (a subject is looked for in every
free-form field, metadata included, and in the archive bundles of the scopes searched), finds
every page any of whose revisions cites one of them (org copies included, they cite the same
episodes) or holds the subject, and decides each page's fate
(:func:`reverie.memory.erasure.rederive.page_fate`). Archive bundles holding an erased episode
are rebuilt without it, in memory. The result is pure data for :meth:`BrainStore.erase` plus
the new bundle bytes :func:`forget` writes before the transaction.

:func:`forget` runs a plan: as a dry run, or applied with the file work after the commit.
Crash safety (DESIGN invariant 2 holds for erasure too):

1. plan (reads only) — a crash changes nothing;
2. write the rebuilt archive bundles under their new names and read them back — a crash leaves
   extra files no index names, which hold none of the erased text;
3. :meth:`~reverie.store.base.BrainStore.erase`: one transaction, receipt included — a crash
   inside it leaves everything as it was;
4. remove the old bundle files, rewrite the Markdown mirrors the store knows of, and scrub the
   database files (SQLite: VACUUM, WAL truncated; PostgreSQL, when asked: ``VACUUM FULL`` of
   the tables the transaction left old row versions in), then mark the receipt finished.

A crash in step 4 leaves the erasure applied and its receipt unfinished: the store is
consistent, and what is still due (``Receipt.pending``) is done by :func:`finish_pending`, which
every applied erasure runs first and ``reverie forget --resume`` runs alone. Each part of step 4
can run again without harm.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from reverie.dream.archive import Archive, archive_root, bundle_bytes, has_cold_tier
from reverie.errors import InvalidInput, NotFound
from reverie.limits import NUL_REASON, has_nul
from reverie.memory.claude_code_layout import KIND as CLAUDE_CODE
from reverie.memory.claude_code_layout import export_claude_code
from reverie.memory.erasure.rederive import page_fate
from reverie.memory.mirror import JOURNAL, export_markdown
from reverie.models import Episode, Page, Scope
from reverie.store.base import BrainStore, BundleBytes, StepHook
from reverie.store.records import (
    BundleInfo,
    BundleSwap,
    Erased,
    Erasure,
    ExportRecord,
    PageDrop,
    Receipt,
    RevisionRewrite,
    is_stub,
    no_step,
)
from reverie.store.sql.erasure.scrub import MIN_SUBJECT, Needles, episode_mentions, ids_per_tenant
from reverie.text.fold import fold

__all__ = ["ForgetPlan", "ForgetRequest", "finish", "finish_pending", "forget", "plan_forget"]


@dataclass(frozen=True)
class ForgetRequest:
    """What to erase (at most one of ``episodes``, ``page``, ``subject``, ``older_than``) and
    where (at most one of ``scope``, ``agent`` — ``tenant/agent`` —, ``tenant``)."""

    episodes: tuple[str, ...] = ()
    page: str | None = None
    subject: str | None = None
    older_than: timedelta | None = None
    scope: Scope | None = None
    agent: str | None = None
    tenant: str | None = None
    reason: str = ""
    request_id: str | None = None
    vacuum: bool = False
    """Also ``VACUUM FULL`` the tables left holding old row versions (PostgreSQL)."""

    def __post_init__(self) -> None:
        whats = [n for n in ("episodes", "page", "subject", "older_than") if getattr(self, n)]
        wheres = [n for n in ("scope", "agent", "tenant") if getattr(self, n)]
        if len(whats) > 1 or len(wheres) > 1:
            raise InvalidInput(
                "target", f"name one thing to erase and at most one place; got {whats + wheres}"
            )
        if not whats and not wheres:
            raise InvalidInput(
                "target", "name what to erase: episodes, a page, a scope, an agent, a tenant,"
                " a subject or an age (older_than)"
            )  # fmt: skip
        if self.subject is not None and len(self.subject.strip()) < MIN_SUBJECT:
            raise InvalidInput(
                "subject", f"must be at least {MIN_SUBJECT} characters (it is matched anywhere)"
            )
        if self.older_than is not None and self.older_than <= timedelta(0):
            raise InvalidInput("older_than", "must be a positive duration, like 400d")
        for name in ("subject", "reason", "request_id"):
            if has_nul(getattr(self, name)):
                raise InvalidInput(name, NUL_REASON)
        if self.agent is not None:
            Scope.parse(self.agent)
        if self.episodes and not wheres:
            raise InvalidInput(
                "episodes", "episode ids are a tenant's own: name the tenant, agent or scope"
                " they were stored in"
            )  # fmt: skip

    @property
    def tenant_named(self) -> str | None:
        """The tenant of the place named (None: everywhere)."""
        if self.scope is not None:
            return self.scope.tenant
        if self.agent is not None:
            return Scope.parse(self.agent).tenant
        return self.tenant

    @property
    def whole(self) -> bool:
        """Erase the named place whole (no *what* given)."""
        return not (self.episodes or self.page or self.subject or self.older_than)

    def recorded(self) -> dict[str, Any]:
        """The request as its receipt keeps it: a subject only as the sha256 of its folded
        form (:func:`reverie.text.fold.fold`, so ``Straße`` and ``STRASSE`` give one digest),
        so the receipt holds none of what was erased."""
        out: dict[str, Any] = {}
        if self.episodes:
            out["episodes"] = sorted(set(self.episodes))
        if self.page:
            out["page"] = self.page
        if self.subject:
            digest = hashlib.sha256(fold(self.subject.strip()).encode()).hexdigest()
            out["subject_sha256"] = digest
        if self.older_than is not None:
            out["older_than_s"] = self.older_than.total_seconds()
        for name in ("agent", "tenant"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        if self.scope is not None:
            out["scope"] = self.scope.key
        if self.vacuum:
            out["vacuum"] = True
        return out


@dataclass
class ForgetPlan:
    """An erasure as planned: the store's part, the new bundles' bytes, the old bundle files."""

    erasure: Erasure
    bundle_data: dict[str, bytes] = field(default_factory=dict)


def _in_place(request: ForgetRequest, scope: Scope) -> bool:
    if request.scope is not None:
        return scope == request.scope
    if request.agent is not None:
        agent = Scope.parse(request.agent)
        return (scope.tenant, scope.agent) == (agent.tenant, agent.agent)
    if request.tenant is not None:
        return scope.tenant == request.tenant
    return True


def _place(store: BrainStore, request: ForgetRequest) -> list[Scope]:
    scopes = [s for s in store.scopes() if _in_place(request, s)]
    if request.whole and not scopes:
        raise NotFound(f"nothing stored under {request.scope or request.agent or request.tenant}")
    return scopes


def _selected(
    store: BrainStore,
    request: ForgetRequest,
    scopes: list[Scope],
    now: datetime,
) -> list[Episode]:
    """The episodes ``request`` erases, stubs of archived ones included."""
    if request.episodes:
        tenant = request.tenant_named
        assert tenant is not None  # a request naming ids names a place (ForgetRequest)
        return [e for e in store.episodes(request.episodes, tenant=tenant) if e.scope in scopes]
    if request.page:
        return []
    if request.whole:
        return store.erasure_episodes(scopes)
    if request.older_than is not None:
        return store.erasure_episodes(scopes, before=now - request.older_than)
    assert request.subject is not None
    hot = store.erasure_episodes([s for s in scopes if not s.is_org], containing=request.subject)
    cold = [e for e in _archived(store, scopes) if episode_mentions(e, Needles([request.subject]))]
    return sorted({e.seq: e for e in [*hot, *_stored(store, cold)]}.values(), key=_seq)


def _stored(store: BrainStore, episodes: Sequence[Episode]) -> list[Episode]:
    """The store's rows of ``episodes`` (for archived ones: their stubs), per tenant."""
    return [
        e
        for tenant, ids in ids_per_tenant(episodes).items()
        for e in store.episodes(sorted(ids), tenant=tenant)
    ]


def _seq(ep: Episode) -> int:
    return ep.seq or 0


def _bundles(store: BrainStore, scopes: Iterable[Scope]) -> list[tuple[BundleInfo, list[Episode]]]:
    """Every bundle of ``scopes`` (restored ones too: their file still holds the text) with
    its episodes as the file holds them."""
    if not has_cold_tier(store):
        return []
    archive = Archive(store)
    return [
        (info, archive.fetch_known(info.hash))
        for scope in sorted(set(scopes), key=str)
        for info in archive.bundles(scope)
    ]


def _archived(store: BrainStore, scopes: Sequence[Scope]) -> list[Episode]:
    return [ep for _info, eps in _bundles(store, scopes) for ep in eps]


def _swaps(
    bundles: list[tuple[BundleInfo, list[Episode]]], erased: Mapping[str, frozenset[str]]
) -> tuple[list[BundleSwap], dict[str, bytes]]:
    swaps: list[BundleSwap] = []
    data: dict[str, bytes] = {}
    for info, eps in bundles:
        kept = [e for e in eps if e.id not in erased.get(e.scope.tenant, frozenset())]
        if len(kept) == len(eps):
            continue
        new = None
        if kept:
            raw = bundle_bytes(kept)
            new = BundleInfo(
                hash="sha256:" + hashlib.sha256(raw).hexdigest(),
                scope=info.scope,
                episodes=len(kept),
                bytes=len(raw),
                first_seq=min(_seq(e) for e in kept),
                last_seq=max(_seq(e) for e in kept),
                created_at=info.created_at,
                restored_at=info.restored_at,
            )
            data[new.hash] = raw
        swaps.append(BundleSwap(info, new))
    return swaps, data


def _pages(
    store: BrainStore,
    request: ForgetRequest,
    scopes: list[Scope],
    erased: Mapping[str, frozenset[str]],
) -> list[Page]:
    """Every page the erasure reaches."""
    found = {
        page_id
        for tenant, ids in erased.items()
        for page_id in store.pages_citing_any(sorted(ids), tenant=tenant)
    }
    if request.subject:
        found |= set(store.pages_containing(scopes, request.subject))
        orgs = sorted({s.org for s in scopes}, key=str)
        found |= _own_org_pages(
            store, request, scopes, store.pages_containing(orgs, request.subject)
        )
    if request.whole:
        found |= {p.id for s in scopes for p in store.pages(s, None)}
    if request.page:
        page = store.page(request.page)
        if page.scope not in scopes:
            raise NotFound(f"no page {request.page}")
        found.add(page.id)
        found |= {
            r.org_page_id for r in store.promotions(page.scope) if r.source_page_id == page.id
        }
    return [store.page(page_id) for page_id in sorted(found)]


def _own_org_pages(
    store: BrainStore, request: ForgetRequest, scopes: list[Scope], org_pages: Iterable[str]
) -> set[str]:
    """Which of ``org_pages`` the request may reach by their text. A tenant's request (or one
    everywhere) reaches its whole org brain; one bounded to a scope or an agent reaches only
    the org copies of that place's own pages: an org page promoted from ``acme/support`` is
    ``acme/support``'s knowledge, which an erasure bounded to ``acme/coder`` must leave as it
    is. (Pages citing an erased episode are reached by their citations, whatever the bound.)"""
    if request.scope is None and request.agent is None:
        return set(org_pages)
    copies = {r.org_page_id for scope in scopes for r in store.promotions(scope)}
    return set(org_pages) & copies


@dataclass
class _Fates:
    rewrites: list[RevisionRewrite] = field(default_factory=list)
    drops: list[PageDrop] = field(default_factory=list)
    topic_keys: dict[str, str] = field(default_factory=dict)
    dropped_text: list[str] = field(default_factory=list)
    claims: int = 0


def _fates(
    store: BrainStore,
    pages: list[Page],
    request: ForgetRequest,
    whole: set[Scope],
    erased: Mapping[str, frozenset[str]],
    originals: dict[tuple[str, str], Episode],
) -> _Fates:
    """Each page's fate. A page asked for (and its org copies) goes whole, as does every page
    of a scope erased whole. A page's citations name episodes of its own tenant."""
    needles = Needles([request.subject] if request.subject else [])
    out = _Fates()
    for page in pages:
        revisions = store.revisions(page.id)
        tenant = page.scope.tenant
        own = {i: e for (t, i), e in originals.items() if t == tenant}
        fate = page_fate(revisions, erased.get(tenant, frozenset()), needles, own)
        out.claims += fate.claims_dropped
        if fate.drop or page.scope in whole or request.page is not None:
            out.drops.append(
                PageDrop(page.id, page.scope, tuple((r.number, r.hash) for r in revisions))
            )
            out.dropped_text += [page.topic_key, *(r.title for r in revisions)]
            continue
        current = revisions[-1].number
        out.rewrites += [
            RevisionRewrite(page.scope, rev, before, rev.number == current)
            for rev, before in fate.rewrites
        ]
        if needles.hit(page.topic_key):
            out.topic_keys[page.id] = f"erased|{page.id}"
    return out


def _originals(store: BrainStore, episodes: list[Episode]) -> dict[tuple[str, str], Episode]:
    """The erased episodes as stored, archived ones read back from their bundles; by
    ``(tenant, id)``."""
    found = {(e.scope.tenant, e.id): e for e in episodes if not is_stub(e)}
    stubs = {(e.scope.tenant, e.id) for e in episodes if is_stub(e)}
    if stubs:
        found |= {
            key: e
            for e in _archived(store, list({e.scope for e in episodes}))
            if (key := (e.scope.tenant, e.id)) in stubs
        }
    return found


MIRRORS = ("markdown", CLAUDE_CODE)
"""The kinds of recorded export an erasure rewrites at once: folders Reverie writes whole."""


def _unreachable(exports: Sequence[ExportRecord], now: datetime) -> list[dict[str, Any]]:
    """The training files written from the scopes touched before now: one entry per file."""
    files: dict[str, dict[str, Any]] = {}
    for x in exports:
        if x.kind != "training" or x.last_at > now:
            continue
        entry = files.setdefault(x.path, {"path": x.path, "scopes": [], "exported_at": ""})
        entry["scopes"].append(x.scope.key)
        entry["exported_at"] = max(entry["exported_at"], x.last_at.isoformat())
    return [files[path] for path in sorted(files)]


def new_erasure_id(now: datetime) -> str:
    return f"er_{now.strftime('%Y%m%dT%H%M%S')}_{secrets.token_hex(4)}"


def plan_forget(store: BrainStore, request: ForgetRequest, now: datetime) -> ForgetPlan:
    """Read what ``request`` reaches and plan its erasure (see the module docstring)."""
    scopes = _place(store, request)
    episodes = _selected(store, request, scopes, now)
    erased = ids_per_tenant(episodes)
    originals = _originals(store, episodes)
    pages = _pages(store, request, scopes, erased)
    whole = scopes if request.whole else []
    fates = _fates(store, pages, request, set(whole), erased, originals)
    bundle_scopes = {e.scope for e in episodes} | set(whole)
    swaps, data = _swaps(_bundles(store, bundle_scopes), erased)
    if whole:  # every bundle of an erased scope goes
        swaps = [s for s in swaps if s.old.scope not in whole] + [
            BundleSwap(info, None) for info, _e in _bundles(store, whole)
        ]
    touched = sorted(
        {*bundle_scopes, *(p.scope for p in pages), *(scopes if request.subject else [])}, key=str
    )
    return ForgetPlan(
        erasure=_erasure(store, request, now, episodes, fates, swaps, whole, touched),
        bundle_data={
            h: b for h, b in data.items() if any(s.new and s.new.hash == h for s in swaps)
        },
    )


def _erasure(  # noqa: PLR0913 (the parts of one plan, assembled)
    store: BrainStore,
    request: ForgetRequest,
    now: datetime,
    episodes: list[Episode],
    fates: _Fates,
    swaps: list[BundleSwap],
    whole: list[Scope],
    touched: list[Scope],
) -> Erasure:
    exports = store.exports(touched)
    erasure_id = new_erasure_id(now)
    needles = [request.subject] if request.subject else []
    needles += [t for t in fates.dropped_text if len(t.strip()) >= MIN_SUBJECT]
    root = str(archive_root(store)) if swaps and not isinstance(store, BundleBytes) else None
    details: dict[str, Any] = {
        "episodes": sorted(e.id for e in episodes),
        "archived": sorted(e.id for e in episodes if is_stub(e)),
        "not_found": sorted(set(request.episodes) - {e.id for e in episodes}),
        "pages_rederived": sorted({w.revision.page_id for w in fates.rewrites}),
        "pages_deleted": [d.page_id for d in fates.drops],
        "scopes_erased": [s.key for s in whole],
        "scopes": [s.key for s in touched],
        "bundles": [[s.old.hash, s.new.hash if s.new else None] for s in swaps],
        "mirrors": sorted({x.path for x in exports if x.kind in MIRRORS}),
        "unreachable": _unreachable(exports, now),
        "reason": Needles(needles).scrub(request.reason),
    }
    pending = {
        "bundle_files": [f"{root}/{s.old.file_name}" for s in swaps if root],
        "mirrors": sorted({(x.path, x.scope.key, x.kind) for x in exports if x.kind in MIRRORS}),
        "scrub": True,
        "vacuum": request.vacuum,
    }
    return Erasure(
        id=erasure_id,
        request_id=Needles(needles).scrub(request.request_id or "") or erasure_id,
        at=now,
        reason=details["reason"] or "erasure",
        request=request.recorded(),
        episodes=episodes,
        rewrites=fates.rewrites,
        drops=fates.drops,
        topic_keys=fates.topic_keys,
        bundles=swaps,
        scopes=whole,
        touched=touched,
        needles=tuple(needles),
        details=details,
        pending=pending,
        counted={"claims_dropped": fates.claims, "unreachable_files": len(details["unreachable"])},
    )


def forget(
    store: BrainStore,
    request: ForgetRequest,
    now: datetime,
    *,
    apply: bool = False,
    on_step: StepHook | None = None,
) -> Receipt:
    """Erase what ``request`` reaches (``apply``), or say exactly what that would do; the
    receipt (stored when applied)."""
    step = on_step or no_step
    if apply:
        finish_pending(store, now, step)
    plan = plan_forget(store, request, now)
    step("erase-planned")
    if not apply:
        return _dry_receipt(plan.erasure, store.erase(plan.erasure, apply=False))
    _write_bundles(store, plan)
    step("erase-bundles-written")
    store.erase(plan.erasure, apply=True, on_step=step)
    finish(store, store.erasure_receipt(plan.erasure.id), now, step)
    return store.erasure_receipt(plan.erasure.id)


def _dry_receipt(e: Erasure, erased: Erased) -> Receipt:
    return Receipt(
        id=e.id,
        request_id=e.request_id,
        created_at=e.at,
        request=e.request,
        counts=dict(erased.counts),
        details={**e.details, "pending": dict(e.pending), **erased.recorded()},
        applied=False,
        tombstones=e.tombstones(),
    )


def _write_bundles(store: BrainStore, plan: ForgetPlan) -> None:
    """Write each rebuilt bundle and read it back before the transaction names it."""
    if not plan.bundle_data:
        return
    archive = Archive(store)
    for bundle_hash, data in sorted(plan.bundle_data.items()):
        archive.files.write(bundle_hash, data)
        archive.fetch(bundle_hash)  # hashes to its name and parses, or raises


def finish(store: BrainStore, receipt: Receipt, now: datetime, step: StepHook = no_step) -> bool:
    """Do the file work due after ``receipt``'s commit; True once it is all done."""
    pending = receipt.pending
    if not receipt.applied or receipt.finished_at is not None:
        return True
    _remove_bundles(store, pending.get("bundle_files") or [])
    step("erase-files")
    for directory, scope_key, *kind in pending.get("mirrors") or []:
        _rewrite(store, Path(directory), Scope.parse(scope_key), kind[0] if kind else "markdown")
    step("erase-mirror")
    vacuum = receipt.details.get("residue", {}).get("tables") if pending.get("vacuum") else ()
    if pending.get("scrub") and not store.scrub_free_space(vacuum or ()):
        return False
    step("erase-scrubbed")
    store.finish_erasure(receipt.id, now)
    return True


def _rewrite(store: BrainStore, folder: Path, scope: Scope, kind: str) -> None:
    """Export ``scope`` again into a folder an earlier export wrote, in the same layout."""
    if not folder.is_dir():
        return
    if kind == CLAUDE_CODE:
        export_claude_code(store, scope, folder)
    else:
        export_markdown(store, scope, folder, journal=(folder / JOURNAL).exists())


def _remove_bundles(store: BrainStore, paths: Sequence[str]) -> None:
    """Remove old bundle files, unless a bundle the store still indexes has that name."""
    if not paths:
        return
    kept = {b.file_name for b in store.archive_bundles()}
    for path in paths:
        if Path(path).name not in kept:
            Path(path).unlink(missing_ok=True)


def finish_pending(store: BrainStore, now: datetime, step: StepHook = no_step) -> list[Receipt]:
    """Finish every applied erasure whose file work a crash interrupted; the receipts still
    unfinished afterwards (a reader kept SQLite's WAL from being reset)."""
    left = []
    for receipt in reversed(store.erasure_receipts(unfinished=True, limit=1000)):
        if not finish(store, receipt, now, step):
            left.append(store.erasure_receipt(receipt.id))
    return left
