"""Input validation: bad input raises InvalidInput naming the field and the reason."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

import reverie
from reverie import Episode, InvalidInput, InvalidScope, Scope
from reverie.models import Outcome, derive_importance

BASE: dict[str, Any] = {
    "scope": "acme/coder",
    "situation": "deploy",
    "action": "kubectl apply",
    "created_at": "2026-11-02T09:00:00Z",
}


@pytest.mark.parametrize(
    ("patch", "field", "reason"),
    [
        ({"outcome": "exploded"}, "outcome", "Input should be"),
        ({"importance": 11}, "importance", "less than or equal to 10"),
        ({"importance": 0}, "importance", "greater than or equal to 1"),
        ({"created_at": "yesterday"}, "created_at", "datetime"),
        ({"tools": "kubectl"}, "tools", "valid list"),
        ({"situation": "", "action": " "}, "input", "needs a situation or an action"),
        ({"id": "../etc/passwd"}, "id", "letters, digits"),
        ({"colour": "red"}, "colour", "Extra inputs are not permitted"),
        ({"scope": "acme"}, "scope", "tenant/agent"),
        ({"scope": {"tenant": "acme", "agent": "a/b"}}, "scope", "letters, digits"),
    ],
)
def test_invalid_episode_names_field_and_reason(
    patch: dict[str, Any], field: str, reason: str
) -> None:
    with pytest.raises(InvalidInput) as info:
        Episode.parse({**BASE, **patch})
    assert info.value.field.startswith(field) or field in str(info.value)
    assert reason in str(info.value)


def test_importance_is_derived_from_outcome_and_error() -> None:
    assert Episode.parse(BASE).importance == derive_importance(Outcome.UNKNOWN, None) == 3
    failed = Episode.parse({**BASE, "outcome": "failure", "error": "TimeoutError"})
    assert failed.importance == 7
    assert Episode.parse({**BASE, "outcome": "failure", "importance": 2}).importance == 2


def test_naive_timestamps_are_utc_and_lists_are_cleaned() -> None:
    ep = Episode.parse(
        {**BASE, "created_at": "2026-11-02T09:00:00", "tools": [" kubectl", "kubectl", ""]}
    )
    assert ep.created_at == datetime(2026, 11, 2, 9, tzinfo=UTC)
    assert ep.tools == ["kubectl"]


def test_scope_forms() -> None:
    assert Scope.parse("acme/coder/alice").key == "acme/coder/alice"
    assert Scope.parse({"tenant": "acme", "agent": "coder"}).user is None
    with pytest.raises(InvalidScope):
        Scope.parse("a//b")


def test_fingerprint_ignores_metadata_key_order_and_store_fields() -> None:
    a = Episode.parse({**BASE, "id": "e1", "metadata": {"x": 1, "y": 2}})
    b = Episode.parse({**BASE, "id": "e1", "metadata": {"y": 2, "x": 1}, "seq": 9})
    assert a.fingerprint() == b.fingerprint()
    assert a.fingerprint() != Episode.parse({**BASE, "id": "e1", "action": "other"}).fingerprint()


def test_public_names_match_all() -> None:
    public = {n for n in dir(reverie) if not n.startswith("_") and n[0].isupper()}
    assert public == set(reverie.__all__)


def test_a_stored_episode_is_the_one_pydantic_would_construct() -> None:
    """``Episode.stored`` (the store's decoder) skips pydantic's per-field walk and shares one
    set of set fields; the episode is the same in every way a reader can see."""
    ep = Episode.parse({**BASE, "id": "e1", "seq": 4, "tools": ["kubectl"], "lesson": "pin it"})
    values = dict(ep)
    made = Episode.model_construct(**values)
    stored = Episode.stored(**dict(reversed(values.items())))  # any order of the fields
    assert stored == made and list(stored.__dict__) == list(made.__dict__)
    assert stored.model_fields_set == made.model_fields_set and stored.dated
    assert stored.fingerprint() == ep.fingerprint() and stored.text == ep.text
    assert Episode.stored(**values).model_fields_set is stored.model_fields_set


def test_a_view_replaces_fields_of_a_copy_only() -> None:
    stored = Episode.stored(**dict(Episode.parse({**BASE, "id": "e1", "lesson": "N/A"})))
    view = stored.view(lesson=None, action="")
    assert (view.lesson, view.action, view.situation) == (None, "", "deploy")
    assert (stored.lesson, stored.action) == ("N/A", "kubectl apply")
    assert view == stored.model_copy(update={"lesson": None, "action": ""})
    view.importance = 5  # assigning a field leaves the shared set of set fields as it was
    assert stored.model_fields_set == set(Episode.model_fields) and stored.importance != 5
    parsed = Episode.parse({k: v for k, v in BASE.items() if k != "created_at"})
    copied = parsed.model_copy(update={"action": ""})
    undated = parsed.view(action="")
    assert undated == copied and undated.model_fields_set == copied.model_fields_set
    undated.created_at = datetime(2026, 1, 1, tzinfo=UTC)
    assert undated.dated and not parsed.dated  # its own set: the parsed one's is not changed
