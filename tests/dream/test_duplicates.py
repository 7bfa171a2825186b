"""Duplicate pressure: one lesson, one active page.

Twenty lessons, each about its own problem, recur across 2,000 episodes in varied wording; three
in ten are learnt away from their usual category and tools (another category, a tool more or
less), so a key of category and tools alone would spread each lesson over several pages. The
test plants the lessons, dreams once a day, and checks that every lesson ends on exactly one
active page — and that no page holds two planted lessons (routing must not merge what differs).
The demo sample has two such pairs.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import pytest

from reverie import Reverie
from reverie.cli.demo import load_sample
from reverie.config import DreamConfig
from reverie.dream.dedupe import lesson_words, same_lesson
from reverie.models import Page, PageStatus
from reverie.store.sqlite import SQLiteStore

SCOPE = "acme/coder"
START = datetime(2026, 3, 2, 8, tzinfo=UTC)

# (category, tools, ways of saying the lesson)
LESSONS: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [
    (
        "deploy",
        ("kubectl",),
        (
            "Wait for the rollout with kubectl rollout status --timeout=10m after every apply.",
            "After kubectl apply, always wait on kubectl rollout status with a 10m timeout.",
            "kubectl apply --wait times out; follow it with rollout status --timeout=10m instead.",
        ),
    ),
    (
        "deploy",
        ("helm",),
        (
            "Pin the chart version in helm upgrade; an unpinned chart pulls breaking releases.",
            "Always pass --version to helm upgrade so the chart version stays pinned.",
            "Unpinned helm charts pulled a breaking release: pin the chart version on upgrade.",
        ),
    ),
    (
        "testing",
        ("pytest",),
        (
            "Use the tmp_path fixture instead of a fixed /tmp directory in tests.",
            "Tests must not share a fixed /tmp directory; use the tmp_path fixture.",
            "A hard-coded /tmp directory breaks parallel tests: use tmp_path fixture everywhere.",
        ),
    ),
    (
        "testing",
        ("pytest", "freezegun"),
        (
            "Freeze the clock in tests that compare against datetime.now.",
            "Tests comparing against datetime.now flake; freeze the clock first.",
            "Never compare against a live datetime.now in tests: freeze the clock.",
        ),
    ),
    (
        "dependencies",
        ("pip",),
        (
            "The build runner is offline: install from the local wheelhouse with --no-index.",
            "pip install needs --no-index --find-links wheelhouse on the offline build runner.",
            "Offline build runner: pip must install from the wheelhouse with --no-index.",
        ),
    ),
    (
        "dependencies",
        ("npm",),
        (
            "Run npm ci, not npm install, in CI so the lockfile is respected.",
            "In CI use npm ci instead of npm install; npm install rewrites the lockfile.",
            "npm install in CI ignored the lockfile: always use npm ci there.",
        ),
    ),
    (
        "database",
        ("alembic",),
        (
            "Start the postgres container before running alembic migrations locally.",
            "alembic upgrade fails locally unless the postgres container is running first.",
            "Local alembic migrations need the postgres container started beforehand.",
        ),
    ),
    (
        "database",
        ("psql",),
        (
            "Take a pg_dump backup before any manual schema change in production.",
            "Before a manual production schema change, always take a pg_dump backup.",
            "No manual schema change in production without a fresh pg_dump backup first.",
        ),
    ),
    (
        "web-search",
        ("search_api",),
        (
            "The search API allows 10 requests per minute; back off on HTTP 429 using Retry-After.",
            "Search API quota is 10 requests per minute; honour Retry-After on 429.",
            "HTTP 429 from the search API: 10 requests per minute, back off with Retry-After.",
        ),
    ),
    (
        "web-search",
        ("http_get",),
        (
            "Fetch the direct PDF link, not the abstract page, for papers.",
            "Readers want direct PDF links for papers, never abstract pages.",
            "Link papers by their direct PDF, not by the abstract page.",
        ),
    ),
    (
        "git",
        ("git",),
        (
            "Rebase onto main before pushing a release branch to avoid merge commits.",
            "Always rebase the release branch onto main before pushing; merge commits break"
            " the changelog.",
            "Release branch pushed with merge commits: rebase onto main before pushing.",
        ),
    ),
    (
        "git",
        ("gh",),
        (
            "Keep PR descriptions short: one summary line and at most three bullets.",
            "The user wants short PR descriptions, one summary line plus three bullets at most.",
            "PR descriptions: one summary line, at most three bullets, nothing longer.",
        ),
    ),
    (
        "docker",
        ("docker",),
        (
            "Build images with --platform linux/amd64 on the arm laptops for the cluster.",
            "On arm laptops pass --platform linux/amd64 to docker build, or the cluster"
            " cannot run it.",
            "Images built on arm laptops fail on the cluster without --platform linux/amd64.",
        ),
    ),
    (
        "docker",
        ("docker", "compose"),
        (
            "Run docker compose down -v between integration runs to reset the volumes.",
            "Stale volumes broke integration runs: docker compose down -v resets them"
            " between runs.",
            "Reset volumes with docker compose down -v before each integration run.",
        ),
    ),
    (
        "environment",
        ("kubectl",),
        (
            "The staging cluster context is now staging-eu; the old staging context is gone.",
            "Use --context staging-eu for the staging cluster; the old staging context was"
            " removed.",
            "Old staging context removed: the staging cluster context is staging-eu now.",
        ),
    ),
    (
        "environment",
        ("terraform",),
        (
            "Run terraform plan with the staging workspace selected before apply.",
            "Select the staging workspace before terraform plan and apply.",
            "terraform apply hit the wrong workspace; select the staging workspace before plan.",
        ),
    ),
    (
        "monitoring",
        ("grafana",),
        (
            "Alert thresholds on p99 latency, not on average latency, or spikes hide.",
            "Average latency hides spikes: alert on p99 latency thresholds instead.",
            "Set latency alert thresholds on p99, never on the average.",
        ),
    ),
    (
        "monitoring",
        ("prometheus",),
        (
            "Keep label cardinality low: never put user ids in prometheus labels.",
            "User ids in prometheus labels exploded cardinality; keep label cardinality low.",
            "Prometheus labels must not carry user ids; label cardinality must stay low.",
        ),
    ),
    (
        "codegen",
        ("openapi-generator",),
        (
            "openapi-generator needs java on the PATH; install a JRE on the runner first.",
            "Install a JRE on the runner first: openapi-generator needs java on the PATH.",
            "java missing from the PATH makes openapi-generator fail; the runner needs a JRE.",
        ),
    ),
    (
        "user-preference",
        (),
        (
            "The user wants British English spelling in everything: optimise, behaviour, colour.",
            "Write British English spelling for this user (optimise, behaviour, colour).",
            "British English spelling for this user everywhere: colour, behaviour, optimise.",
        ),
    ),
]
# What the agent was doing when it met each lesson's problem (its situation), in LESSONS order:
# pages are one per problem, so episodes of two lessons must be about two problems.
PROBLEMS = (
    "rolling out the api deployment with kubectl apply",
    "upgrading the payments release with helm upgrade",
    "writing tests that create scratch files",
    "testing the token expiry code against the current time",
    "installing python dependencies on the build runner",
    "installing javascript packages in the CI pipeline",
    "running database migrations on a laptop",
    "changing the production database schema by hand",
    "querying the search API for many results in a row",
    "collecting links to research papers for a reader",
    "pushing the release branch for the next version",
    "writing the pull request description for a change",
    "building container images on an arm laptop",
    "rerunning the integration suite on the same machine",
    "switching kubectl to the staging cluster",
    "applying infrastructure changes with terraform",
    "configuring latency alerts for the api",
    "adding labels to prometheus metrics",
    "generating the API client from the openapi spec",
    "writing documentation and messages for this user",
)
_PREFIXES = ("", "", "", "Lesson: ", "Note to self: ", "Remember: ")
_OTHER_CATEGORIES = ("ops", "maintenance", "ci", "release", "support", "research")
_OTHER_TOOLS = ("bash", "make", "curl", "jq", "python", "ssh")


def _phrase(rng: random.Random, variants: tuple[str, ...]) -> str:
    text = rng.choice(_PREFIXES) + rng.choice(variants)
    if rng.random() < 0.2:
        text = text.lower()
    if rng.random() < 0.2:
        text = text.rstrip(".")
    return text


def _context(rng: random.Random, lesson: int) -> tuple[str | None, list[str]]:
    """Usually the lesson's own category and tools; three times in ten somewhere else."""
    category, tools, _ = LESSONS[lesson]
    roll = rng.random()
    if roll < 0.7:
        return category, list(tools)
    if roll < 0.8:
        return rng.choice(_OTHER_CATEGORIES), list(tools)
    if roll < 0.9:
        return category, [*tools, rng.choice(_OTHER_TOOLS)]
    return rng.choice(_OTHER_CATEGORIES), [rng.choice(_OTHER_TOOLS)]


def planted_stream(n: int = 2000, seed: int = 7) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """``n`` episodes; about 85% teach one of the 20 lessons. Returns rows and lesson by id."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    taught: dict[str, int] = {}
    for i in range(n):
        lesson = rng.randrange(len(LESSONS))
        category, tools = _context(rng, lesson)
        ep_id = f"dup-{i:05d}"
        text: str | None = None
        if rng.random() < 0.85:
            text = _phrase(rng, LESSONS[lesson][2])
            taught[ep_id] = lesson
        elif rng.random() < 0.5:
            text = "approach worked"
        outcome = rng.choice(("success", "success", "failure", "partial"))
        rows.append(
            {
                "id": ep_id,
                "scope": SCOPE,
                "created_at": (START + timedelta(minutes=7 * i)).isoformat(),
                "situation": f"{PROBLEMS[lesson]} (task {i % 97})",
                "action": f"ran {' and '.join(tools) or 'the usual steps'} on job {i % 13}",
                "outcome": outcome,
                "error": "it broke" if outcome == "failure" else None,
                "lesson": text,
                "importance": rng.choice((5, 6, 7)),
                "category": category,
                "tools": tools,
            }
        )
    return rows, taught


def _words(text: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def lessons_by_page(pages: list[Page], lesson_of_text: dict[str, int]) -> dict[str, set[int]]:
    """Which planted lessons each active page states (a claim worded as one of its teachers)."""
    held: dict[str, set[int]] = defaultdict(set)
    for page in pages:
        for claim in page.revision.claims:
            lesson = lesson_of_text.get(_words(claim.text))
            if lesson is not None:
                held[page.id].add(lesson)
    return held


def _dream_daily(rv: Reverie, rows: list[dict[str, Any]], scopes: list[str]) -> None:
    days: dict[date, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        days[datetime.fromisoformat(row["created_at"]).date()].append(row)
    for day in sorted(days):
        rv.ingest(days[day])
        for scope in scopes:
            rv.dream(scope, now=datetime.combine(day, time(23), tzinfo=UTC))


def test_twenty_lessons_in_varied_wording_end_on_one_page_each() -> None:
    rows, taught = planted_stream()
    lesson_of_text = {_words(r["lesson"]): taught[r["id"]] for r in rows if r["id"] in taught}
    spread = {(r["category"], tuple(r["tools"])) for r in rows if r["id"] in taught}
    assert len(spread) > 60  # the topic key alone would scatter the lessons
    with Reverie(_store()) as rv:
        _dream_daily(rv, rows, [SCOPE])
        active = rv.pages(SCOPE)
        held = lessons_by_page(active, lesson_of_text)
        merged = [p for p in rv.pages(SCOPE, None) if p.status is PageStatus.SUPERSEDED]
    pages_of: dict[int, list[str]] = defaultdict(list)
    for page_id, lessons in held.items():
        for lesson in lessons:
            pages_of[lesson].append(page_id)
    assert {lesson: len(pages_of[lesson]) for lesson in range(20)} == dict.fromkeys(range(20), 1)
    assert all(len(lessons) == 1 for lessons in held.values()), "two lessons were merged"
    for page in merged:  # a merge supersedes, never deletes
        assert page.revision.superseded_by and page.revision.valid_until


def test_the_demo_sample_keeps_one_page_per_lesson() -> None:
    rows = load_sample()
    scopes = sorted({r["scope"] for r in rows})
    with Reverie(_store()) as rv:
        _dream_daily(rv, rows, scopes)
        active = [p for scope in scopes for p in rv.pages(scope)]
    for one_lesson in (  # two wordings of one lesson, first learnt under different tools
        ("Tests must not share a fixed temp directory", "Hard-coded /tmp paths in tests break"),
        ("The search API allows 10 requests a minute", "Search API quota: 10 requests per minute"),
    ):
        holding = {
            p.id
            for p in active
            for c in p.revision.claims
            if any(c.text.startswith(wording) for wording in one_lesson)
        }
        assert len(holding) == 1, one_lesson


@pytest.mark.parametrize(
    ("a", "b", "related", "same"),
    [
        ("Use tmp_path, not a fixed /tmp directory.", "Tests must not use a fixed /tmp "
         "directory; use tmp_path.", False, True),
        ("lesson number 1 about topic 7", "lesson number 2 about topic 14", True, False),
        ("Pin the chart version in helm upgrade.", "Pin the node version in CI.", True, False),
        ("Search API quota: 10 requests per minute per key; Retry-After is in seconds.",
         "The search API allows 10 requests a minute; use exponential backoff that honours the"
         " Retry-After header", True, True),
    ],
)  # fmt: skip
def test_lesson_identity(a: str, b: str, related: bool, same: bool) -> None:
    assert same_lesson(lesson_words(a), lesson_words(b), related, DreamConfig()) is same


def _store() -> SQLiteStore:
    store = SQLiteStore(":memory:")
    store.migrate()
    return store
