"""Synthetic agent episodes and recall queries, for benchmarks and load tests.

Deterministic: the same ``(n, scopes, seed, start)`` always yields the same rows, because every
choice is drawn from one ``random.Random(seed)`` in a fixed order. The rows look like what real
agents write — a category and its tools, a situation naming services, repos or hosts, an action,
an outcome (about 55% success, 30% failure, 10% timeout, 5% partial), an error that fits the
outcome, sometimes a lesson (about 15% real, 10% a template such as "approach worked") and
sometimes an importance — so the dream cycle sees recurring patterns, one-off noise and
templates in realistic proportions. Each row is a plain dict accepted by
:meth:`reverie.models.Episode.parse`; ``created_at`` is an ISO-8601 string, so rows are also
JSON-ready. Ids are ``syn-<seed>-<i>``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = [
    "DEFAULT_START",
    "TEMPLATE_LESSONS",
    "TOPICS",
    "UNKNOWN_QUERIES",
    "Topic",
    "synthetic_episodes",
    "synthetic_queries",
]

DEFAULT_START = datetime(2026, 1, 1, tzinfo=UTC)

_OUTCOMES = (("success", 55), ("failure", 30), ("timeout", 10), ("partial", 5))
TEMPLATE_LESSONS = ("approach worked", "Approach worked.", "done", "N/A", "task completed")

SERVICES = ("api", "billing", "auth", "search", "ingest", "notifier", "payments", "gateway")
REPOS = ("acme/web", "acme/api", "acme/infra", "acme/ml-pipeline", "acme/docs", "acme/cli")
HOSTS = ("db-primary-1", "db-replica-2", "build-runner-3", "edge-eu-1", "cache-7", "worker-12")
ENVS = ("staging", "production", "dev", "canary")


@dataclass(frozen=True)
class Topic:
    """One kind of work: its category and tools, and the text it is written in.

    Templates use ``{svc}``, ``{repo}``, ``{host}``, ``{env}`` and ``{n}``.
    """

    category: str
    tools: tuple[str, ...]
    situations: tuple[str, ...]
    actions: tuple[str, ...]
    errors: tuple[str, ...]
    lessons: tuple[str, ...]


def _topic(row: tuple[str, str, str, str, str, str]) -> Topic:
    """A topic from its table row; lists inside a cell are separated by ``" ; "``."""
    category, tools, *texts = row
    situations, actions, errors, lessons = (tuple(t.split(" ; ")) for t in texts)
    return Topic(category, tuple(tools.split()), situations, actions, errors, lessons)


_DEPLOY_SIT = (
    "Deploying {svc} v1.{n}.0 to the {env} cluster ; Rolling back {svc} in {env} after a bad"
    " release ; Scaling {svc} to {n} replicas in {env}"
)
_DB_SIT = (
    "Running the {svc} schema migration on {host} ; Investigating slow queries on {host} for"
    " {svc} ; Backfilling {n}k rows in the {svc} database"
)
_TEST_SIT = (
    "Fixing the flaky {svc} integration tests in {repo} ; Running the {repo} test suite before"
    " merge ; Adding regression tests for the {svc} parser"
)
_SEARCH_SIT = (
    "Researching rate limit policies for the {svc} provider ; Gathering docs on {svc} retries"
    " for the weekly digest ; Looking up the changelog of the {svc} SDK"
)
_BUILD_SIT = (
    "Building the {svc} image for {env} ; Rebuilding {repo} after a dependency bump ;"
    " Shrinking the {svc} container image"
)
_API_SIT = (
    "Calling the {svc} API to sync {n} records ; Polling the {svc} status endpoint in {env} ;"
    " Uploading a {n} MB report to the {svc} service"
)
_GIT_SIT = (
    "Rebasing the {svc} feature branch in {repo} ; Resolving merge conflicts in {repo} ;"
    " Tagging release v2.{n} of {repo}"
)
_CACHE_SIT = (
    "Warming the {svc} cache on {host} ; Clearing stale {svc} keys on {host} ; Tuning the"
    " eviction policy of {host}"
)
_ERR_NET = "ConnectionRefusedError: [Errno 111] Connection refused ; HTTP 503 Service Unavailable"
_ERR_RATE = "HTTP 429 Too Many Requests: rate limit exceeded; Retry-After: 60"
_ERR_OOM = "container exited with code 137 (OOMKilled)"

_RAW: tuple[tuple[str, str, str, str, str, str], ...] = (
    ("deploy", "kubectl", _DEPLOY_SIT,
     "kubectl apply -f k8s/{svc}/ --wait ; kubectl rollout restart deployment/{svc}",
     f"error: timed out waiting for the condition on deployments/{{svc}} ; {_ERR_OOM}",
     "Pass --timeout=10m to kubectl apply --wait for {svc}: its pods pull a large image ;"
     " Check kubectl get events before re-running a stuck rollout"),
    ("deploy", "helm", _DEPLOY_SIT,
     "helm upgrade --install {svc} charts/{svc} ; helm rollback {svc} {n}",
     "Error: UPGRADE FAILED: another operation is in progress ; TimeoutError: release not ready",
     "Run helm rollback before upgrading when a previous release is stuck pending"),
    ("deploy", "kubectl helm", _DEPLOY_SIT, "helm template then kubectl diff for {svc}",
     "Error: rendered manifests contain a resource that already exists",
     "Delete orphaned resources before adopting them into a helm release"),
    ("deploy", "terraform", "Applying the {env} network plan ; Provisioning {host} with terraform",
     "terraform apply -auto-approve in infra/{env} ; terraform plan -target=module.{svc}",
     "Error acquiring the state lock: ConditionalCheckFailedException ; HTTP 403 Forbidden",
     "Release the terraform state lock only after confirming no other apply runs"),
    ("search", "web_search", _SEARCH_SIT, "Ran {n} web searches in a tight loop ; Searched the"
     " vendor docs for {svc}", f"{_ERR_RATE} ; TimeoutError: search request took over 30s",
     "Space web_search calls at least 6 seconds apart: the key allows 10 requests a minute"),
    ("search", "web_search fetch_url", _SEARCH_SIT,
     "Searched then fetched the top {n} result pages", f"{_ERR_RATE} ; HTTP 404 Not Found",
     "Prefer the vendor changelog over blog posts for {svc} version facts"),
    ("search", "arxiv", "Collecting recent papers on agent memory ; Finding benchmarks for"
     " retrieval", "Queried arxiv for {n} keywords", "HTTP 503 Service Unavailable",
     "Batch arxiv queries with OR instead of one call per keyword"),
    ("tests", "pytest", _TEST_SIT, "Ran pytest -x -q in {repo} ; Ran pytest -k {svc} -n 8",
     "AssertionError: expected 200, got 500 ; TimeoutError: test exceeded 120s ;"
     " ModuleNotFoundError: No module named 'freezegun'",
     "Pin the clock with freezegun in {svc} tests: they assert on wall time ; Run pytest with"
     " -p no:randomly to reproduce order-dependent failures"),
    ("tests", "pytest coverage", _TEST_SIT, "Ran the suite under coverage run -m pytest",
     "AssertionError: coverage 71% below the 80% floor",
     "Exclude generated {svc} client code from coverage measurement"),
    ("tests", "jest", "Running the frontend tests of {repo} ; Updating snapshots in {repo}",
     "npx jest --ci in {repo}", "AssertionError: snapshot mismatch ; exit code 1",
     "Update jest snapshots only after reviewing the rendered diff"),
    ("tests", "playwright", "Running end-to-end tests against {env} ; Debugging a flaky login"
     " test", "npx playwright test --project=chromium", "TimeoutError: locator.click: Timeout"
     " 30000ms exceeded", "Wait for the network to be idle before clicking in {svc} e2e tests"),
    ("db", "psql", _DB_SIT, "psql -h {host} -f migrations/{n}.sql ; EXPLAIN ANALYZE the slow"
     " {svc} query", "ERROR: deadlock detected ; psql: error: connection to server failed:"
     " Connection refused ; ERROR: canceling statement due to statement timeout",
     "Run {svc} migrations outside peak hours: they lock the orders table ; Add an index on"
     " created_at before backfilling {svc}"),
    ("db", "psql pg_dump", _DB_SIT, "pg_dump {svc} from {host} before the migration",
     "pg_dump: error: out of memory ; PermissionError: [Errno 13] Permission denied",
     "Dump large {svc} tables with --jobs and the directory format"),
    ("db", "sqlite", "Compacting the local {svc} cache database ; Migrating {svc} fixtures",
     "VACUUM then ANALYZE on the {svc} file", "sqlite3.OperationalError: database is locked",
     "Close every {svc} connection before VACUUM or it waits on the lock"),
    ("db", "redis-cli", _CACHE_SIT, "redis-cli --scan --pattern '{svc}:*' | xargs del",
     f"{_ERR_NET} ; OOM command not allowed when used memory > maxmemory",
     "Use UNLINK instead of DEL for large {svc} keys to avoid blocking {host}"),
    ("git", "git", _GIT_SIT, "git rebase origin/main ; git merge --no-ff feature/{svc}",
     "CONFLICT (content): Merge conflict in {svc}/models.py ; error: failed to push some refs",
     "Rebase {svc} branches daily to keep conflicts small ; Fetch before tagging a release"),
    ("git", "git gh", _GIT_SIT, "Opened a pull request with gh pr create for {repo}",
     f"{_ERR_RATE} ; HTTP 422 Unprocessable Entity",
     "Request reviewers from CODEOWNERS instead of hard-coding them"),
    ("git", "git-lfs", "Pushing model weights to {repo} ; Cloning {repo} with large assets",
     "git lfs push --all origin", "TimeoutError: LFS upload timed out ; HTTP 413 Payload Too Large",
     "Split LFS pushes of {repo} into batches under 2 GB"),
    ("build", "docker", _BUILD_SIT, "docker build -t {svc}:{n} . ; docker buildx build"
     " --platform linux/amd64,linux/arm64", f"{_ERR_OOM} ; failed to solve: failed to fetch"
     " oauth token: HTTP 401 Unauthorized", "Put the dependency layer before COPY . in the {svc}"
     " Dockerfile to keep the cache ; Give buildx 8 GB or the arm64 build is OOM killed"),
    ("build", "docker-compose", _BUILD_SIT, "docker compose up --build {svc}",
     "ConnectionRefusedError: [Errno 111] Connection refused ; exit code 1",
     "Add a healthcheck so {svc} waits for its database in compose"),
    ("build", "make", _BUILD_SIT, "make -j8 release in {repo}", "make: *** [all] Error 2 ;"
     " command not found: protoc", "Install protoc in the build image before running make"),
    ("build", "cargo", "Compiling the {svc} agent in release mode ; Updating crates in {repo}",
     "cargo build --release", "error[E0308]: mismatched types ; exit code 101",
     "Run cargo update -p for one crate instead of a full update"),
    ("build", "npm", "Installing frontend dependencies of {repo} ; Bumping {svc} packages",
     "npm ci ; npm install --save {svc}-client", "npm ERR! code ERESOLVE ; exit code 1",
     "Commit the lockfile after every npm install in {repo}"),
    ("api", "http", _API_SIT, "POST /v1/{svc}/sync with {n} records ; GET /status on {svc}",
     f"{_ERR_RATE} ; {_ERR_NET} ; requests.exceptions.ReadTimeout: read timeout=30",
     "Send {svc} sync requests in pages of 100 records ; Back off exponentially on HTTP 429"
     " from {svc}"),
    ("api", "http oauth", _API_SIT, "Refreshed the {svc} token then retried the call",
     "HTTP 401 Unauthorized: token expired ; HTTP 403 Forbidden",
     "Refresh the {svc} OAuth token five minutes before it expires"),
    ("api", "graphql", "Querying {svc} through the GraphQL gateway ; Paginating {svc} orders",
     "Ran the {svc} orders query with first: {n}", "GraphQL error: query complexity exceeds"
     " limit ; TimeoutError", "Request at most 50 nodes per GraphQL page from {svc}"),
    ("api", "grpcurl", "Debugging the {svc} gRPC service in {env}",
     "grpcurl -plaintext {host}:50051 {svc}.v1/Health", "StatusCode.UNAVAILABLE: failed to"
     " connect ; StatusCode.DEADLINE_EXCEEDED", "Use TLS for {svc} gRPC calls in {env}"),
    ("ci", "github-actions", "Fixing the {repo} CI pipeline ; Speeding up CI for {repo}",
     "Re-ran the failed workflow for {repo}", f"{_ERR_OOM} ; The job exceeded the maximum"
     " execution time of 360 minutes", "Cache pip downloads in {repo} CI keyed on the lockfile"),
    ("ci", "github-actions docker", "Publishing the {svc} image from CI",
     "Pushed {svc}:{n} to the registry from the workflow", "HTTP 401 Unauthorized ; TimeoutError",
     "Log in to the registry in a separate CI step so failures are clear"),
    ("monitoring", "prometheus", "Investigating a latency alert on {svc} ; Checking {svc} error"
     " rates in {env}", "Queried histogram_quantile for {svc} p99", "HTTP 422: query exceeded"
     " maximum resolution", "Use a 5m rate window for {svc} latency alerts to avoid flapping"),
    ("monitoring", "grafana", "Building a dashboard for {svc} ; Adding a panel for {host}",
     "Imported dashboard {n} for {svc}", "HTTP 412 Precondition Failed: version mismatch",
     "Export grafana dashboards to {repo} before editing them in the UI"),
    ("logs", "kubectl", "Reading {svc} logs after a crash loop in {env}", "kubectl logs"
     " deploy/{svc} --previous", "CrashLoopBackOff: back-off restarting failed container ;"
     f" {_ERR_OOM}", "Raise the {svc} memory limit: it is OOM killed under load"),
    ("logs", "journalctl", "Checking why {svc} stopped on {host}", "journalctl -u {svc} --since"
     " today on {host}", "PermissionError: [Errno 13] Permission denied",
     "Add the bench user to the systemd-journal group on {host}"),
    ("files", "bash", "Cleaning up old {svc} artifacts on {host} ; Rotating {svc} logs on {host}",
     "find /var/lib/{svc} -mtime +30 -delete", "FileNotFoundError: [Errno 2] No such file or"
     " directory ; No space left on device", "Check disk usage on {host} before rotating logs"),
    ("files", "rsync", "Syncing {svc} backups to {host}", "rsync -az /backups/{svc} {host}:/mnt",
     "rsync error: timeout in data send/receive (code 30) ; ConnectionResetError",
     "Use --partial with rsync so interrupted {svc} backups resume"),
    ("refactor", "rg sed", "Renaming get_{svc} across {repo} ; Removing dead {svc} code in {repo}",
     "rg -l get_{svc} | xargs sed -i then ran the tests", "AssertionError: 3 tests failed after"
     " the rename", "Rename one package of {repo} at a time and run its tests between steps"),
    ("refactor", "mypy", "Adding type hints to the {svc} module ; Enabling strict mypy in {repo}",
     "mypy --strict src/{svc}", "error: Incompatible return value type ; exit code 1",
     "Type the {svc} public API first, then the private helpers"),
    ("email", "smtp", "Sending the weekly {svc} report ; Notifying on-call about {svc}",
     "Sent {n} emails through the relay", f"smtplib.SMTPServerDisconnected ; {_ERR_RATE}",
     "Send {svc} reports through the queue instead of directly over SMTP"),
    ("data", "pandas", "Cleaning the {svc} export of {n}k rows ; Joining {svc} events with"
     " users", "Loaded the CSV with pandas and deduplicated", "MemoryError: Unable to allocate"
     " 12.0 GiB ; KeyError: 'user_id'", "Read large {svc} exports in chunks of 100k rows"),
    ("data", "spark", "Running the nightly {svc} aggregation job ; Repartitioning {svc} events",
     "spark-submit jobs/{svc}_daily.py", f"{_ERR_OOM} ; TimeoutError: executor heartbeat timed"
     " out", "Repartition {svc} events by day before the join to avoid skew"),
)  # fmt: skip

TOPICS: tuple[Topic, ...] = tuple(_topic(row) for row in _RAW)
"""The kinds of work synthetic agents do (category × tools)."""


def _context(rng: random.Random) -> dict[str, Any]:
    """The service, repo, host, environment and number one episode is about."""
    return {
        "svc": rng.choice(SERVICES),
        "repo": rng.choice(REPOS),
        "host": rng.choice(HOSTS),
        "env": rng.choice(ENVS),
        "n": rng.randint(2, 48),
    }


def _outcome(rng: random.Random) -> str:
    roll = rng.randrange(100)
    for name, share in _OUTCOMES:
        if roll < share:
            return name
        roll -= share
    return "success"


def _error(topic: Topic, outcome: str, rng: random.Random, ctx: dict[str, Any]) -> str | None:
    if outcome == "timeout":
        timeouts = [e for e in topic.errors if "time" in e.lower()]
        return rng.choice(timeouts or ["TimeoutError: timed out after 300s"]).format(**ctx)
    if outcome == "failure" or (outcome == "partial" and rng.random() < 0.5):
        return rng.choice(topic.errors).format(**ctx)
    return None


def _lesson(topic: Topic, rng: random.Random, ctx: dict[str, Any]) -> str | None:
    roll = rng.random()
    if roll < 0.15:
        return rng.choice(topic.lessons).format(**ctx)
    if roll < 0.25:
        return rng.choice(TEMPLATE_LESSONS)
    return None


def _entities(situation: str) -> list[str]:
    names = (*SERVICES, *REPOS, *HOSTS, *ENVS)
    return [name for name in names if name in situation.split() or f"{name}," in situation]


_DETAILS = {
    "success": "Completed in {n} s without errors",
    "failure": "Stopped after {n} s; nothing was changed",
    "timeout": "Gave up after {n} minutes of waiting",
    "partial": "{n} of 50 steps finished before it stopped",
}


def _episode(i: int, rng: random.Random, seed: int, scopes: int, when: datetime) -> dict[str, Any]:
    topic, ctx = rng.choice(TOPICS), _context(rng)
    situation = rng.choice(topic.situations).format(**ctx)
    outcome = _outcome(rng)
    row: dict[str, Any] = {
        "id": f"syn-{seed}-{i}",
        "scope": f"bench/agent-{rng.randrange(scopes)}",
        "session_id": f"sess-{seed}-{i // 25}",
        "created_at": when.isoformat().replace("+00:00", "Z"),
        "situation": situation,
        "action": rng.choice(topic.actions).format(**ctx),
        "outcome": outcome,
        "outcome_details": _DETAILS[outcome].format(**ctx),
        "error": _error(topic, outcome, rng, ctx),
        "lesson": _lesson(topic, rng, ctx),
        "category": topic.category,
        "tools": list(topic.tools),
        "entities": _entities(situation),
    }
    if rng.random() < 0.3:
        row["importance"] = rng.randint(1, 10)
    return row


def synthetic_episodes(
    n: int, *, scopes: int = 1, seed: int = 0, start: datetime = DEFAULT_START
) -> Iterator[dict[str, Any]]:
    """``n`` realistic episodes over ``scopes`` scopes ``bench/agent-<k>``, oldest first.

    ``created_at`` advances by one to six minutes (with seconds of jitter) per episode.
    """
    if scopes < 1:
        raise ValueError("scopes must be at least 1")
    rng = random.Random(seed)
    when = start if start.tzinfo else start.replace(tzinfo=UTC)
    for i in range(n):
        when += timedelta(minutes=rng.randint(1, 5), seconds=rng.randint(0, 59))
        yield _episode(i, rng, seed, scopes, when)


_QUESTIONS = (
    "how do I {verb} {svc} without a {problem}",
    "what went wrong last time with {tool} on {svc}",
    "{tool} {problem} {svc}",
    "lessons about {category} for {svc} in {env}",
    "why does {tool} fail with {problem}",
    "best way to {verb} the {svc} service",
)
_VERBS = ("deploy", "migrate", "test", "build", "sync", "rebase", "backfill", "scale")
_PROBLEMS = ("timeout", "rate limit", "OOM kill", "connection refused", "merge conflict",
             "deadlock", "flaky test", "401 unauthorized")  # fmt: skip
UNKNOWN_QUERIES = (
    "what is the capital of Australia",
    "favourite pizza topping of the team",
    "quantum chromodynamics lattice spacing",
    "how tall is the Eiffel tower",
    "translate bonjour into Swahili",
)


def _question(rng: random.Random, topics: Sequence[Topic]) -> str:
    topic = rng.choice(topics)
    return rng.choice(_QUESTIONS).format(
        verb=rng.choice(_VERBS),
        svc=rng.choice(SERVICES),
        problem=rng.choice(_PROBLEMS),
        tool=rng.choice(topic.tools),
        category=topic.category,
        env=rng.choice(ENVS),
    )


def synthetic_queries(k: int, seed: int = 0) -> list[str]:
    """``k`` recall queries about the synthetic topics; about one in twelve asks about
    something no synthetic episode mentions."""
    rng = random.Random(f"queries-{seed}")
    return [
        rng.choice(UNKNOWN_QUERIES) if rng.random() < 1 / 12 else _question(rng, TOPICS)
        for _ in range(k)
    ]
