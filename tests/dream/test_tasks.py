"""Transcripts with results become tasks: runs compared, successes against failures, and fixes
read from tool calls' JSON arguments."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reverie import Reverie
from reverie.adapters import parse
from reverie.bench.transcripts import is_utterance_title
from reverie.dream.problems import group_by_problem
from reverie.dream.tasks import task_title
from reverie.models import ClaimRole, Episode, Scope

SCOPE = "acme/support"
START = datetime(2026, 3, 2, 9, tzinfo=UTC)


def _call(n: int, tool: str, args: dict[str, Any], result: str) -> list[dict[str, Any]]:
    call_id = f"c{n}"
    function = {"name": tool, "arguments": json.dumps(args)}
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "function": function}],
        },
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]


def _run(
    run_id: str,
    request: str,
    calls: Sequence[tuple[str, dict[str, Any], str]],
    reward: float,
    day: int,
) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": request}]
    for n, (tool, args, result) in enumerate(calls):
        messages += _call(n, tool, args, result)
    messages.append({"role": "assistant", "content": "Done."})
    created = (START + timedelta(days=day)).timestamp()
    return {"id": run_id, "messages": messages, "reward": reward, "created": created}


REFUND = ["Hello! I want a refund for order {o}, it arrived broken.",
          "Hi there! I want a refund for order {o}: it arrived broken."]  # fmt: skip
ADDRESS = ["Hi! Please change the delivery address of order {o} to my new flat.",
           "Hey, please change the delivery address of order {o} to my new flat."]  # fmt: skip


def _transcripts() -> list[dict[str, Any]]:
    runs = []
    for i in range(6):  # refunds: the ones that checked the order first succeeded
        order = {"order": f"10{i}"}
        checked = i % 2 == 0
        calls = [("get_order", order, '{"status": "delivered"}')] if checked else []
        calls.append(
            ("refund", {**order, "reason": "damaged" if checked else "other"}, '{"ok": true}')
        )
        runs.append(_run(f"refund-{i}", REFUND[i % 2].format(o=f"10{i}"), calls, float(checked), i))
    for i in range(4):  # address changes: a timeout, then the same call with a longer timeout
        order = {"order": f"20{i}", "address": "12 Elm St"}
        calls = [
            ("update_address", order, "Error: TimeoutError: upstream took too long"),
            ("update_address", {**order, "timeout": "30s"}, '{"ok": true}'),
        ]
        runs.append(_run(f"address-{i}", ADDRESS[i % 2].format(o=f"20{i}"), calls, 1.0, 10 + i))
    return runs


def _parsed() -> list[dict[str, Any]]:
    lines = [(n + 1, json.dumps(t)) for n, t in enumerate(_transcripts())]
    parsed = parse("openai-chat", lines, scope=Scope.parse(SCOPE))
    assert not parsed.failures
    return parsed.items


def _brain(tmp_path: Path) -> Reverie:
    rv = Reverie.open(tmp_path / "brain.db")
    items = _parsed()
    rv.ingest(items, scope=SCOPE)
    rv.dream(SCOPE, now=START + timedelta(days=30))
    return rv


def test_a_transcript_with_a_reward_becomes_one_task_episode_beside_its_turns() -> None:
    run = _run(
        "r", "Hi there! Refund order R1, it broke.", [("refund", {"order": "R1"}, "ok")], 0.0, 0
    )
    parsed = parse("openai-chat", [(1, json.dumps(run))], scope=Scope.parse(SCOPE))
    tasks = [i for i in parsed.items if i["metadata"].get("task")]
    assert len(parsed.items) == 2 and len(tasks) == 1
    task = tasks[0]
    assert task["outcome"] == "failure" and task["category"] == "task"
    assert task["situation"] == "Refund order R1, it broke."  # the salutation left out
    assert task["action"] == 'refund {"order": "R1"}'
    assert task["metadata"]["calls"] == [{"tool": "refund", "args": {"order": "R1"}, "ok": True}]
    plain = {k: v for k, v in run.items() if k != "reward"}
    untold = parse("openai-chat", [(1, json.dumps(plain))], scope=Scope.parse(SCOPE))
    assert not any(i["metadata"].get("task") for i in untold.items)  # no result: no task


def test_runs_of_one_request_give_a_procedure_and_warnings_citing_them(tmp_path: Path) -> None:
    with _brain(tmp_path) as rv:
        pages = rv.pages(SCOPE)
        claims = [(p, c) for p in pages for c in p.revision.claims]
        procedure = [
            (p, c) for p, c in claims if c.role is ClaimRole.PROCEDURE and "refund" in c.text
        ]
        assert procedure, [p.title for p in pages]
        page, proc = procedure[0]
        assert "get_order → refund" in proc.text and "did not call get_order" in proc.text
        ok_runs = {
            i["id"] for i in _parsed() if i["metadata"].get("task") and i["outcome"] == "success"
        }
        assert set(proc.episode_ids) <= ok_runs and len(proc.episode_ids) == 3
        warnings = [c for c in page.revision.claims if c.role is ClaimRole.WARNING]
        texts = " ".join(c.text for c in warnings)
        assert 'refund with reason: "other" failed (3 of 3 failing runs)' in texts
        failed_runs = {
            i["id"] for i in _parsed() if i["metadata"].get("task") and i["outcome"] == "failure"
        }
        assert warnings and all(set(c.episode_ids) == failed_runs for c in warnings)
        assert "order:" not in texts  # an id that differs from run to run is no pattern
        assert not page.title.lower().startswith(("hello", "hi", "hey"))
        assert "refund" in page.title.lower()


def test_a_changed_json_argument_is_stated_as_the_fix(tmp_path: Path) -> None:
    with _brain(tmp_path) as rv:
        fixes = [c for p in rv.pages(SCOPE) for c in p.revision.claims if c.role is ClaimRole.FIX]
        assert any(
            'timeout: "30s" added' in c.text and "update_address" in c.text for c in fixes
        ), [c.text for c in fixes]


def test_a_call_that_failed_then_worked_with_an_argument_added_is_a_fix(
    make_episode: Any,
) -> None:
    """One call per episode (``tool {json}``, as the coding-agent adapter and the agent
    integrations record it): the word overlap of the two calls would call them one action."""
    from reverie.dream.lessons import current_fix  # noqa: PLC0415

    def call(n: int, args: dict[str, Any], outcome: str) -> Any:
        return make_episode(
            situation="deploy the api service",
            action=f"deploy {json.dumps(args)}",
            outcome=outcome,
            error="TimeoutError: rollout exceeded 5m" if outcome == "failure" else None,
            created_at=START + timedelta(minutes=n),
            session_id="s1",
        )

    eps = [
        call(0, {"service": "api"}, "failure"),
        call(1, {"service": "api", "timeout": "10m"}, "success"),
    ]
    fix = current_fix(eps, lambda ep: "TimeoutError")
    assert fix is not None and fix.change == 'timeout: "10m" added'
    assert 'timeout: "10m" added' in fix.claim(400).text
    retry = [call(0, {"service": "api"}, "failure"), call(1, {"service": "api"}, "success")]
    assert current_fix(retry, lambda ep: None) is None  # the same call again: a retry
    changed = [call(0, {"service": "api"}, "failure"), call(1, {"service": "web"}, "success")]
    fixed = current_fix(changed, lambda ep: None)
    assert fixed is not None and fixed.change == 'service: "api" → "web"'


def test_a_page_led_by_a_changed_call_is_titled_by_the_tool_the_failure_and_the_change(
    tmp_path: Path,
) -> None:
    """Not by the case it was first met in ("Deploy for ticket OPS-1: deploy {…}")."""
    rows = []
    for n, ticket in enumerate(("OPS-1", "OPS-7", "OPS-9")):
        at = START + timedelta(days=n)
        rows += [
            {"id": f"f{n}", "situation": f"Deploy for ticket {ticket}", "session_id": ticket,
             "action": 'deploy {"service": "api"}', "outcome": "failure",
             "error": "TimeoutError: rollout exceeded 5m", "created_at": at},
            {"id": f"s{n}", "situation": f"Deploy for ticket {ticket}", "session_id": ticket,
             "action": 'deploy {"service": "api", "timeout": "10m"}', "outcome": "success",
             "created_at": at + timedelta(minutes=5)},
        ]  # fmt: skip
    with Reverie.open(tmp_path / "brain.db") as rv:
        rv.ingest(rows, scope=SCOPE)
        rv.dream(SCOPE, now=START + timedelta(days=5))
        led = [p.title for p in rv.pages(SCOPE) if p.revision.claims[0].role is ClaimRole.FIX]
    assert led == ['deploy fails with TimeoutError: timeout: "10m" added']


@pytest.mark.parametrize(
    ("failed", "worked", "change"),
    [
        ('CALL search {"q": "acme revenue", "k": 10}',
         'invoke search {"q": "acme revenue", "k": 10, "max_qps": 2}', "max_qps: 2 added"),
        ('→ search {"q": "acme revenue"}', 'tool_use: search {"q": "acme revenue", "max_qps": 2}',
         "max_qps: 2 added"),
        ("ledger.post(acct=7220, amt='12.50')", "ledger.post(acct=7220, amt='12.50', dim='CC-OPS')",
         'dim: "CC-OPS" added'),
        ('run("make test")', 'run("make test", env="ci")', 'env: "ci" added'),
        ('label.print(printer="DOCK3", template="300DPI")  backoff 3114ms',
         'label.print(printer="DOCK3", template="203DPI")', 'template: "300DPI" → "203DPI"'),
        ('inv.adjust {"bin": "B39"}  [runner] step 2/6 FAILED',
         'inv.adjust {"bin": "B39", "mode": "post-wave"}  ✅', 'mode: "post-wave" added'),
    ],
)  # fmt: skip
def test_a_call_written_after_a_marker_or_as_a_function_call_is_a_call_too(
    make_episode: Any, failed: str, worked: str, change: str
) -> None:
    """Agent logs write a call after a marker word or as ``tool(key=value)``: the change of
    arguments is the fix, as for ``tool {json}``."""
    from reverie.dream.lessons import current_fix  # noqa: PLC0415

    eps = [
        make_episode(situation="weekly sweep", action=action, outcome=outcome,
                     error="HTTP 429" if outcome == "failure" else None,
                     created_at=START + timedelta(minutes=n), session_id="s1")
        for n, (action, outcome) in enumerate(((failed, "failure"), (worked, "success")))
    ]  # fmt: skip
    fix = current_fix(eps, lambda ep: "HTTP 429")
    assert fix is not None and fix.change == change


@pytest.mark.parametrize(
    "action",
    ["kubectl patch deploy api -p {\"a\": 1}", "print(x)", "Deploying api (v2)",
     "open(...)", "handle exception", "I tried (twice) to fix it", 'deploy {"a": 1}x'],
)  # fmt: skip
def test_prose_and_shell_commands_are_not_read_as_one_call(action: str) -> None:
    from reverie.text.calls import parse_call  # noqa: PLC0415

    assert parse_call(action) is None


def test_an_argument_the_successes_vary_names_the_case_not_the_fix(make_episode: Any) -> None:
    """Each order is its own case: another order id is neither a fix nor another fix."""
    from reverie.dream.lessons import current_fix  # noqa: PLC0415

    def call(n: int, tool: str, args: dict[str, Any], outcome: str) -> Any:
        return make_episode(
            situation=f"order {n} should be stopped",
            action=f"{tool} {json.dumps(args)}",
            outcome=outcome,
            error="409: cannot cancel, status is shipped" if outcome == "failure" else None,
            created_at=START + timedelta(minutes=n),
            session_id=f"s{n // 2}",
        )

    eps = [
        step
        for i, order in enumerate(["W1", "W2", "W3", "W4"])
        for step in (
            call(2 * i, "cancel_order", {"order_id": order}, "failure"),
            call(2 * i + 1, "return_label", {"order_id": order, "method": "dropoff"}, "success"),
        )
    ]
    fix = current_fix(eps, lambda ep: "409")
    assert fix is not None and len(fix.successes) == fix.attempts == 4  # one fix, four times
    assert '"method":"dropoff"' in fix.action
    lookups = [
        call(0, "lookup_stock", {"sku": "A"}, "failure"),
        call(1, "lookup_stock", {"sku": "B"}, "success"),
        call(2, "lookup_stock", {"sku": "C"}, "success"),
    ]
    assert current_fix(lookups, lambda ep: None) is None  # another sku: a retry, not a fix


def test_the_hook_records_a_whole_run_with_its_result(tmp_path: Path) -> None:
    from reverie.integrations.hook import AgentHook  # noqa: PLC0415

    with Reverie.open(tmp_path / "brain.db") as rv:
        hook = AgentHook(rv, SCOPE, session_id="run-7")
        calls = [
            {"tool": "get_order", "args": {"order": "1"}, "ok": True},
            {"tool": "refund", "args": {"order": "1"}},
        ]
        episode = hook.record_task("Hello! Refund order 1, it broke.", calls, reward=0)
        assert episode is not None and episode.outcome == "failure"
        assert episode.metadata["task"] is True and episode.metadata["reward"] == 0
        assert episode.action == 'get_order {"order": "1"} → refund {"order": "1"}'
        assert hook.record_task("no result given", calls) is None  # a run needs its result


def test_what_a_run_s_requester_says_is_its_request_not_a_fact_of_the_brain(
    tmp_path: Path,
) -> None:
    """Runs of a service agent have one requester each, all with the role ``user``: their
    words ("my name is…", "I'd like…") are each run's request, never a page of the user."""
    said = [
        "My name is Ana Ruiz and I'd like a refund for order {o}, it arrived broken.",
        "My name is Raj Shah and I'd like a refund for order {o}, it arrived broken.",
    ]
    runs = [
        _run(f"r{i}", said[i % 2].format(o=i), [("refund", {"order": str(i)}, "ok")], i % 2, i)
        for i in range(4)
    ]
    lines = [(n + 1, json.dumps(r)) for n, r in enumerate(runs)]
    items = parse("openai-chat", lines, scope=Scope.parse(SCOPE)).items
    with Reverie.open(tmp_path / "brain.db") as rv:
        rv.ingest(items, scope=SCOPE)
        rv.dream(SCOPE, now=START + timedelta(days=30))
        pages = rv.pages(SCOPE)
        assert pages and not [p.title for p in pages if p.kind in ("fact", "preference")]
        plain = {k: v for k, v in runs[0].items() if k != "reward"}
        told = parse("openai-chat", [(1, json.dumps(plain))], scope=Scope.parse("acme/chat"))
        rv.ingest(told.items, scope="acme/chat")
        rv.dream("acme/chat", now=START + timedelta(days=30))
        assert any(p.kind == "fact" for p in rv.pages("acme/chat"))  # no result: a chat turn


def test_a_task_title_names_the_action_asked_for_and_never_quotes_the_request() -> None:
    requests = [
        "Hi! I need to cancel my flights from MCO to CLT and get a refund, please.",
        "Hello, I need to cancel my flights from MCO to CLT and get my money back.",
    ]
    calls = [
        ("get_reservation_details", {"reservation_id": "X1"}, '{"ok": true}'),
        ("cancel_reservation", {"reservation_id": "X1"}, '{"ok": true}'),
    ]
    runs = [_run(f"r{i}", r, calls, 1.0, i) for i, r in enumerate(requests)]
    lines = [(n + 1, json.dumps(t)) for n, t in enumerate(runs)]
    items = parse("openai-chat", lines, scope=Scope.parse(SCOPE)).items
    work = [Episode.model_validate({**i, "scope": SCOPE}) for i in items]
    title = task_title(work)
    assert title == "Canceling flights", title  # places and dates are the run's, not the kind's
    assert not is_utterance_title(title, requests)


def _titled(requests: list[str], calls: list[tuple[str, dict[str, Any], str]]) -> str | None:
    runs = [_run(f"r{i}", r, calls, 1.0, i) for i, r in enumerate(requests)]
    lines = [(n + 1, json.dumps(t)) for n, t in enumerate(runs)]
    items = parse("openai-chat", lines, scope=Scope.parse(SCOPE)).items
    return task_title([Episode.model_validate({**i, "scope": SCOPE}) for i in items])


def test_a_request_that_asks_for_help_with_an_activity_is_titled_by_that_activity() -> None:
    lookups = [("get_reservation_details", {"reservation_id": "X1"}, '{"ok": true}')]
    helped = ["I need some assistance with changing my upcoming flight reservation, please."]
    assert _titled(helped, lookups) == "Changing an upcoming flight reservation"
    # after "my" or "an", an -ing word is a thing, not what is asked for
    owned = ["I have an upcoming trip and my booking shows the wrong seat."]
    assert _titled(owned, lookups) == "Upcoming trip"  # what it is about: no action asked


ORDERS = [
    ("get_order_details", {"order_id": "#1"}, '{"status": "pending"}'),
    ("cancel_pending_order", {"order_id": "#1"}, '{"ok": true}'),
]


@pytest.mark.parametrize(
    ("requests", "title"),
    [
        # an infinitive after no verb of wanting is a consequence, not the task
        (
            ["My train to Leeds was cancelled this morning and I'm going to miss my cousin's "
             "wedding, which led me to lose the deposit."],
            "Cancelled train",
        ),
        # the object is its head phrase: the places, dates and names after it are the run's own
        (["I'd like to move my hotel booking from Lisbon to Porto on June 3rd."],
         "Moving a hotel booking"),
        (["Could you switch the seat for my colleague Priya on Thursday?"], "Switching the seat"),
        # a phrase attached to the object that names a thing stays
        (["I need to update the delivery address on my pending order, please."],
         "Updating the delivery address on a pending order"),
        # a pronoun object names what it points back to, never an act ("I made a mistake")
        (["I ordered two desk lamps by accident. Can you help me return one of them?"],
         "Returning desk lamps"),
        (["I made a mistake with my gym membership and would like to pause it."],
         "Pausing a gym membership"),
        # "help" asks for what follows it; "can you" and "please" open a request
        (["Can you help me cancel my newspaper subscription?"],
         "Canceling a newspaper subscription"),
        (["Please renew my library card before Friday."], "Renewing a library card"),
        # "make changes to" is the change the group's other requests ask for
        (["I'd like to make a few changes to my pending order.",
          "I want to change my pending order."], "Changing a pending order"),
        # a verb of wanting denied asks for nothing; a quantity and an adverb are no object
        (["I really don't want to cancel my plan, but I'd like to swap my 250g coffee pack."],
         "Swapping a coffee pack"),
        (["I'd like to cancel my recently renewed insurance policy."],
         "Canceling a renewed insurance policy"),
        # "could I" asks too; "another" stays; two verbs share their object
        (["Could I pay the balance with another voucher?"],
         "Paying the balance with another voucher"),
        (["I want to pause or end my streaming subscription."],
         "Pausing or ending a streaming subscription"),
        (["Please split my order into two parcels."], "Splitting an order"),
        # "it" is the thing asked about, not the place a preposition names
        (["I picked up a tent from your outlet last week, and I'd like to return it."],
         "Returning a tent"),
        # a request that asks for nothing is titled by what it is about, never quoted
        (["I have a question about a parcel we returned last week."],
         "Question about a returned parcel"),
        (["I'm trying to work out how many bags I can check in."],
         "Working out how many bags"),
        # the title is the activity most of the group's runs ask for
        (["I need to cancel my order, it is no longer needed.",
          "Please cancel my order #W77 as soon as you can.",
          "Where is my parcel? I want to change the shipping address of my order."],
         "Canceling an order"),
    ],
)  # fmt: skip
def test_a_task_title_is_the_asked_activity_and_the_head_of_its_object(
    requests: list[str], title: str
) -> None:
    got = _titled(requests, ORDERS)
    assert got == title, got
    assert not is_utterance_title(got, requests)


def test_runs_of_a_kind_on_a_later_night_join_the_page_their_kind_founded(
    tmp_path: Path,
) -> None:
    """A kind of request's page is found by its founding request's words, not by its claims,
    which name tools and tallies no request says."""
    said = [
        "I'd like to book a table for four at Luigi's trattoria on Friday evening.",
        "Could I book a table for four at Luigi's trattoria this Friday evening?",
        "Please book a table for four people at Luigi's trattoria on Friday evening.",
        "I want to book a table for four at Luigi's trattoria for Friday evening.",
    ]
    calls = [
        ("find_restaurant", {"name": "Luigi's"}, '{"id": "r9"}'),
        ("reserve_table", {"restaurant": "r9", "seats": 4}, '{"ok": true}'),
    ]
    tasks: set[str] = set()
    with Reverie.open(tmp_path / "brain.db") as rv:
        for night in range(2):
            runs = [
                _run(f"t{night}{i}", said[2 * night + i], calls, float(i), night) for i in (0, 1)
            ]
            lines = [(n + 1, json.dumps(r)) for n, r in enumerate(runs)]
            items = parse("openai-chat", lines, scope=Scope.parse(SCOPE)).items
            tasks |= {i["id"] for i in items if i["metadata"].get("task")}
            rv.ingest(items, scope=SCOPE)
            rv.dream(SCOPE, now=START + timedelta(days=night, hours=20))
        pages = [p for p in rv.pages(SCOPE) if p.topic_key.startswith("task|")]
        assert len(pages) == 1, [p.title for p in pages]
        assert set(pages[0].revision.citations) & tasks == tasks
        assert pages[0].title == "Booking a table"


def test_a_run_s_turns_stay_with_its_task_when_its_evidence_is_regrouped() -> None:
    """A page's work set regrouped (a split's check) keeps each run whole: its turns are detail
    of its task episode, never a problem of their own."""
    calls = [("reserve_table", {"restaurant": "r9", "seats": 2}, '{"ok": true}')]
    runs = []
    for i in range(4):
        run = _run(f"d{i}", "I'd like to book a table for two at Chez Ana tonight.", calls, 1.0, i)
        run["messages"] += [
            {"role": "user", "content": "Yes, charge the deposit to my card ending 4242."},
            {"role": "assistant", "content": "The deposit is paid."},
        ]
        runs.append(run)
    lines = [(n + 1, json.dumps(r)) for n, r in enumerate(runs)]
    items = parse("openai-chat", lines, scope=Scope.parse(SCOPE)).items
    episodes = [Episode.model_validate({**i, "scope": SCOPE}) for i in items]
    groups = group_by_problem(episodes, [])
    assert len(groups) == 1 and len(groups[0].episodes) == len(episodes)
