"""What an episode asserts: some attribute of a subject has a value (DESIGN invariant 6).

The readings, each deterministic:

* ``metadata["fact"]``: ``{"subject": "user", "attribute": "editor", "value": "vim"}`` (subject
  optional) or a list of such objects;
* an entity ``"attribute=value"`` or ``"subject.attribute=value"``;
* a namespaced setting assigned in the text of the situation, action or outcome details
  (``config.set elig.clearinghouse=Optibridge``, ``mr.outpatient.first_slot=07:05``): a dotted
  key, ``=``, a value. The dot is what makes it a setting: a bare ``status=ok`` or ``rc=0`` is a
  log field of one case, and ``--timeout=10m`` a flag. The other ways a log or a config tool
  prints the same thing read alike (:data:`_ASSIGNED`, :data:`_JSON_SETTING`): ``key = value``
  spaced (the value runs to the end of its clause: ``limit = USD 120000``), an assignment arrow
  ``key <- 'value'`` or ``key := value`` (explicit, so a snake-case key needs no dot), and a
  dotted key of a JSON object printed by a successful read (``{"gl.target": "ledger-a"}``), or
  the object a key-value store prints for one entry, its dotted key and its value as two fields
  (``{"key": "gl.target", "value": "ledger-a"}``, as etcd, Consul or a parameter store do).
  The arguments of a call (``fax.send(to="…")``, ``deploy {"k": …}``) are what was asked, not
  what holds. Such an episode is also evidence of its problem (``read``): a fix may be a
  setting;
* a bare field in the output of a successful episode (``legal_fax=312-555-0168`` printed by a
  directory lookup): :func:`fields`, never an assertion by itself, since ``status=ok`` is one
  case's log. It names a setting only where the scope's history shows it is one
  (:mod:`reverie.dream.aliases`);
* what the speaker of an episode (:mod:`reverie.text.turns`) states durably about themselves, their
  world or their wishes (:mod:`reverie.text.stated`): the subject is the speaker, and the
  assertion keeps the sentence as it was said (``said``). A turn of a run that carries its
  result (:func:`~reverie.text.turns.is_run_part`) states nothing durable: its words are the
  run's request, and the run's task episode holds them.

Not every mention is an assertion. A value is only *mentioned* — it names the slot's value
without saying it is current — when its ``metadata["fact"]`` item carries ``"current": false``,
or when it is given only as an entity of a failed or timed-out episode (the value that was
tried, not the one that holds). :func:`assertions` leaves mentions out.

Subject, attribute and value are compared case-insensitively with whitespace collapsed; the
slot is ``fact|subject|attribute``, a subject naming the brain's own scope being none.
Structured readings come first: a turn that also carries ``metadata["fact"]`` for a slot is
read by its metadata for that slot. Recall and the dream
cycle both read these, so they live below both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reverie.models import Episode, Outcome
from reverie.text.calls import parse_call
from reverie.text.stated import durable_statements
from reverie.text.turns import has_speaker, is_run_part, said, speaker_of

__all__ = ["PREFIX", "Assertion", "assertions", "asserts_fact", "fields", "mentions", "norm"]

PREFIX = "fact"
_PART = re.compile(r"\s+")


def norm(text: str) -> str:
    """``text`` as slot keys compare it: trimmed, whitespace collapsed, casefolded, no ``|``."""
    return _PART.sub(" ", text.strip()).casefold().replace("|", "/")


@dataclass(frozen=True)
class Assertion:
    """One episode saying ``attribute`` of ``subject`` is ``value``; ``current`` is False for a
    mention (see the module docstring), which never decides the slot's value. ``said`` is the
    sentence a speaker said it in (None for a structured fact); ``preference`` marks a wish;
    ``single`` is False for a spoken statement that is its own slot (nothing supersedes it);
    ``read`` marks a setting read from free text (the episode stays evidence of its problem);
    ``field`` marks a bare field of a tool's output (see :func:`fields`)."""

    subject: str
    attribute: str
    value: str
    episode: Episode
    current: bool = True
    said: str | None = None
    preference: bool = False
    single: bool = True
    read: bool = False
    field: bool = False

    @property
    def slot(self) -> str:
        """``fact|subject|attribute``: what the assertion is about. A subject that names the
        brain's own scope (its tenant, agent or user: "lumen" in ``lumen/market-intel``) is
        no subject: a brain's facts are about itself unless they name something else, so
        ``lumen.search_quota=8000`` and ``search_quota=12000`` are one slot."""
        return f"{PREFIX}|{_subject_key(self.subject, self.episode)}|{norm(self.attribute)}"

    @property
    def value_key(self) -> str:
        return norm(self.value)


def _subject_key(subject: str, ep: Episode) -> str:
    key = norm(subject)
    scope = ep.scope
    own = (scope.tenant, scope.agent, scope.user or "")
    return "" if key and key in {norm(part) for part in own} else key


_TRIED = frozenset({Outcome.FAILURE, Outcome.TIMEOUT})


def _from_metadata(ep: Episode) -> list[Assertion]:
    raw = ep.metadata.get("fact")
    items = raw if isinstance(raw, list) else [raw] if isinstance(raw, dict) else []
    found = []
    for item in items:
        if not isinstance(item, dict):
            continue
        subject, attribute, value = (item.get(k) for k in ("subject", "attribute", "value"))
        if isinstance(attribute, str) and attribute.strip() and value is not None:
            subject_text = subject.strip() if isinstance(subject, str) else ""
            current = item.get("current", True) is not False
            found.append(
                Assertion(subject_text, attribute.strip(), str(value).strip(), ep, current)
            )
    return found


def _from_entities(ep: Episode) -> list[Assertion]:
    current = ep.outcome not in _TRIED
    found = []
    for entity in ep.entities:
        key, sep, value = entity.partition("=")
        if not sep or not key.strip() or not value.strip():
            continue
        subject, dot, attribute = key.strip().rpartition(".")
        found.append(Assertion(subject if dot else "", attribute, value.strip(), ep, current))
    return found


_SETTING = re.compile(
    r"""(?<![\w.\-/?&$%:=])([A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+)=(?!=)
        (?:"([^"\n]*)"|'([^'\n]*)'|([A-Z][a-z]{0,3}\.\s+[A-Z][\w'-]*|[^\s,;()\[\]{}"'<>]+))""",
    re.VERBOSE,
)
"""A dotted key, ``=`` and a value: quoted, a short abbreviation with the name after it
("Dr. Okonkwo"), or up to the first space."""


_KEY = r"[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+"
_SNAKE_KEY = r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"
_ASSIGNED = re.compile(
    rf"""(?<![\w.\-/?&$%:=<])(?:({_KEY})\s+=|({_KEY}|{_SNAKE_KEY})\s*(?:<-|:=|←))\s*
        (?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'<>(){{}}\[\],;][^"'<>(){{}}\[\],;\n]*?))
        (?=\s*(?:$|[,;){{}}\[\]]|\.(?:\s|$))|\s+[-–—/|]\s|\s+\()""",
    re.VERBOSE | re.MULTILINE,
)
"""A setting printed with a spaced ``=`` (dotted key) or an assignment arrow (``<-``, ``:=``,
``←``: a dotted or snake-case key), and a value: quoted, or the rest of its clause. A value
followed at once by ``(`` is a call (``my_df <- read.csv(path)``), no value."""
_JSON_SETTING = re.compile(rf'"({_KEY})"\s*:\s*"([^"\n]*)"')
"""A dotted key of a JSON object and its string value."""
_NAMED = rf'"(?:key|name|parameter|setting)"\s*:\s*"({_KEY})"'
_VALUE = r'"value"\s*:\s*"([^"\n]*)"'
_KEYED_JSON = re.compile(rf"{_NAMED}[^{{}}]*?{_VALUE}|{_VALUE}[^{{}}]*?{_NAMED}", re.IGNORECASE)
"""One entry of a key-value store as a JSON object: a field naming the dotted key and a
``value`` field, in either order, with nothing nested between."""


def _from_settings(ep: Episode) -> list[Assertion]:
    current = ep.outcome not in _TRIED
    texts = [t for t in (ep.situation, ep.outcome_details or "") if "=" in t]
    if "=" in ep.action and parse_call(ep.action) is None:
        texts.append(ep.action)
    found = []
    for text in texts:
        for m in _SETTING.finditer(text):
            value = next(v for v in m.group(2, 3, 4) if v is not None)
            found.append(_setting(m.group(1), value, ep, current))
    return found + _printed_settings(ep, current)


def _printed_settings(ep: Episode, current: bool) -> list[Assertion]:
    """Settings in the other forms a tool prints them (:data:`_ASSIGNED`; a JSON object's
    dotted keys only in what a successful episode printed)."""
    found = []
    for text in (ep.situation, ep.outcome_details or ""):
        for m in _ASSIGNED.finditer(text):
            value = next(v for v in m.group(3, 4, 5) if v is not None)
            found.append(_setting(m.group(1) or m.group(2), value, ep, current))
    if ep.outcome is Outcome.SUCCESS and ep.outcome_details:
        for m in _JSON_SETTING.finditer(ep.outcome_details):
            found.append(_setting(m.group(1), m.group(2), ep, current))
        for m in _KEYED_JSON.finditer(ep.outcome_details):
            key, value = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
            found.append(_setting(key, value, ep, current))
    return found


def _setting(key: str, value: str, ep: Episode, current: bool) -> Assertion:
    subject, _dot, attribute = key.rpartition(".")
    return Assertion(subject, attribute, value.strip(), ep, current, read=True)


_FIELD = re.compile(
    r"""(?<![\w.\-/?&$%:=])([A-Za-z_][\w-]*)=(?!=)
        (?:"([^"\n]*)"|'([^'\n]*)'|([A-Z][a-z]{0,3}\.\s+[A-Z][\w'-]*|[^\s,;()\[\]{}"'<>]+))""",
    re.VERBOSE,
)
"""A bare key (no namespace), ``=`` and a value, as :data:`_SETTING` reads its value."""


def fields(ep: Episode) -> list[Assertion]:
    """The bare ``key=value`` fields in the output of a successful ``ep``, one per key, as
    assertions marked ``field`` with no subject (see the module docstring)."""
    text = ep.outcome_details or ""
    if ep.outcome is not Outcome.SUCCESS or "=" not in text:
        return []
    found: dict[str, Assertion] = {}
    for m in _FIELD.finditer(text):
        value = next(v for v in m.group(2, 3, 4) if v is not None).strip()
        if value and norm(m.group(1)) not in found:
            found[norm(m.group(1))] = Assertion("", m.group(1), value, ep, read=True, field=True)
    return list(found.values())


def _from_speech(ep: Episode) -> list[Assertion]:
    if not has_speaker(ep) or is_run_part(ep):
        return []
    speaker = speaker_of(ep)
    return [
        Assertion(
            speaker,
            s.attribute,
            s.value,
            ep,
            said=s.sentence,
            preference=s.preference,
            single=s.single,
        )
        for s in durable_statements(said(ep))
    ]


def _by_slot(ep: Episode) -> list[Assertion]:
    """Every fact ``ep`` states, one per slot: metadata, entities, settings in its text, then
    speech (first wins)."""
    unique: dict[str, Assertion] = {}
    for a in (*_from_metadata(ep), *_from_entities(ep), *_from_settings(ep), *_from_speech(ep)):
        if a.value_key and norm(a.attribute):
            unique.setdefault(a.slot, a)
    return list(unique.values())


def assertions(ep: Episode) -> list[Assertion]:
    """Every fact ``ep`` asserts as current, one per slot (mentions left out)."""
    return [a for a in _by_slot(ep) if a.current]


def mentions(ep: Episode) -> list[Assertion]:
    """The values ``ep`` only mentions (``current: false``, or entities of a failed episode)."""
    return [a for a in _by_slot(ep) if not a.current]


def asserts_fact(ep: Episode) -> bool:
    """Whether ``ep`` asserts a value that a later one can replace (a structured fact, or a
    spoken single-valued relation): its fact page, not the episode, says what is current."""
    return any(a.single for a in assertions(ep))
