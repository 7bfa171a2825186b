"""The LLM distiller: one model call per evidence group, answered as a plan the engine validates.

Cost rules:

* At most one call per group (plus the one repair turn the client allows for an unusable answer).
* Every answer whose plan passes :func:`~reverie.models.plan.validate_plan` is cached under a
  hash of (model, :data:`~reverie.llm.prompts.PROMPT_VERSION`, the whole input); a re-run after a
  crash or an undo serves unchanged groups from the cache and makes no call. Invalid answers are not
  cached, so a rejected group changes no byte of the store.
* A group whose prompt does not fit ``input_budget_tokens`` is never truncated: history episodes
  are left out first, then :class:`~reverie.errors.GroupDeferred` tells the cycle how many of the
  group's episodes fit (``fit``); the rest wait for a later cycle.

Failure rules: an answer still unusable after the repair turn raises
:class:`~reverie.errors.PlanRejected` (the cycle rejects the group with the reason); a transport
failure raises :class:`~reverie.errors.GroupDeferred` with ``rest=True`` (the model is down: the
cycle defers this and every remaining group rather than wait on more timeouts).

Usage (calls, cache hits, tokens, latency) is counted per thread and handed to the cycle by
:meth:`LLMDistiller.take_usage`.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from reverie.errors import GroupDeferred, LLMBadOutput, LLMError, PlanRejected
from reverie.llm.cache import ResponseCache, cache_key
from reverie.llm.prompts import PROMPT_VERSION, SYSTEM_PROMPT, plan_schema, render_evidence
from reverie.llm.protocol import LLM, ModelUsage
from reverie.llm.providers import llm_from_env
from reverie.models.plan import CreatePage, Evidence, Plan, validate_plan
from reverie.recall.tokens import count_tokens
from reverie.redaction import DEFAULT, Redactor

__all__ = ["LLMDistillConfig", "LLMDistiller", "llm_distiller_from_env", "plan_problems"]


@dataclass(frozen=True)
class LLMDistillConfig:
    """Budgets of one model call: the whole prompt, and the answer."""

    input_budget_tokens: int = 24_000
    max_output_tokens: int = 4_096


def plan_problems(data: dict[str, Any], evidence: Evidence) -> list[str]:
    """Why ``data`` is not an acceptable plan for ``evidence``: schema first, then validation.

    Stricter than :func:`validate_plan` in one way: a create must use the group's own topic key,
    so a model cannot create a page for a topic whose existing page it was not shown.
    """
    try:
        plan = Plan.model_validate(data)
    except ValidationError as exc:
        return [
            f"{'.'.join(str(p) for p in err['loc']) or 'plan'}: {err['msg']}"
            for err in exc.errors()[:10]
        ]
    foreign = [
        f"create: topic_key must be the group's {evidence.topic_key!r}"
        for op in plan.operations
        if isinstance(op, CreatePage) and op.topic_key != evidence.topic_key
    ]
    return foreign[:1] + validate_plan(plan, evidence)


class LLMDistiller:
    """A :class:`~reverie.models.plan.Distiller` backed by an :class:`~reverie.llm.protocol.LLM`."""

    name = "llm"

    def __init__(
        self,
        llm: LLM,
        config: LLMDistillConfig | None = None,
        *,
        cache: ResponseCache | None = None,
        redactor: Redactor = DEFAULT,
    ) -> None:
        self.llm = llm
        self.redactor = redactor
        self.config = config or LLMDistillConfig()
        self.cache = cache
        self._schema = plan_schema()
        self._local = threading.local()

    def close(self) -> None:
        """Close the model client (its HTTP connections)."""
        self.llm.close()

    def take_usage(self) -> ModelUsage:
        """Usage in this thread since the last call; resets it."""
        usage = self._usage()
        self._local.usage = ModelUsage()
        return usage

    def _usage(self) -> ModelUsage:
        usage = getattr(self._local, "usage", None)
        if usage is None:
            usage = self._local.usage = ModelUsage()
        return usage

    def distill(self, evidence: Evidence) -> Plan:
        user = self.prompt(evidence)
        key = cache_key(
            self.llm.model,
            PROMPT_VERSION,
            system=SYSTEM_PROMPT,
            user=user,
            schema=self._schema,
            max_tokens=self.config.max_output_tokens,
        )
        cached = self._cached(key, evidence)
        if cached is not None:
            return cached
        return self._plan(self._ask(key, user, evidence))

    def _ask(self, key: str, user: str, evidence: Evidence) -> dict[str, Any]:
        usage = self._usage()
        try:
            response = self.llm.complete_json(
                SYSTEM_PROMPT,
                user,
                self._schema,
                max_tokens=self.config.max_output_tokens,
                check=lambda data: plan_problems(data, evidence),
            )
        except LLMBadOutput as exc:
            usage.calls += exc.calls
            usage.input_tokens += exc.input_tokens
            usage.output_tokens += exc.output_tokens
            usage.latency_s += exc.latency_s
            raise PlanRejected([f"model {self.llm.model}: {exc}"]) from None
        except LLMError as exc:
            raise GroupDeferred(f"model {self.llm.model} unavailable: {exc}", rest=True) from None
        usage.add(response)
        if self.cache is not None:
            self.cache.cache_put(
                key,
                {
                    "model": self.llm.model,
                    "response": response.data,
                    "input_tokens": response.input_tokens,
                    "output_tokens": response.output_tokens,
                    "created_at": evidence.now,
                },
            )
        return response.data

    def _cached(self, key: str, evidence: Evidence) -> Plan | None:
        if self.cache is None:
            return None
        hit = self.cache.cache_get(key)
        if hit is None or plan_problems(hit["response"], evidence):
            return None
        self._usage().cache_hits += 1
        return self._plan(hit["response"])

    def _plan(self, data: dict[str, Any]) -> Plan:
        return Plan.model_validate({**data, "distiller": f"llm:{self.llm.model}"})

    # -- the input budget ---------------------------------------------------------------------

    def prompt(self, evidence: Evidence) -> str:
        """The user prompt for ``evidence``, or :class:`GroupDeferred` when it cannot fit."""
        for with_history in (True, False):
            user = render_evidence(evidence, with_history=with_history, redactor=self.redactor)
            if self._fits(user):
                return user
        fit = self._largest_prefix(evidence)
        if fit == 0:
            raise GroupDeferred(
                f"group {evidence.topic_key!r}: its pages and first episode alone exceed the"
                f" input budget of {self.config.input_budget_tokens} tokens"
            )
        raise GroupDeferred(
            f"group {evidence.topic_key!r}: {len(evidence.episodes) - fit} of"
            f" {len(evidence.episodes)} episodes exceed the input budget; deferred",
            fit=fit,
        )

    def _fits(self, user: str) -> bool:
        overhead = count_tokens(SYSTEM_PROMPT) + count_tokens(str(self._schema))
        return overhead + count_tokens(user) <= self.config.input_budget_tokens

    def _largest_prefix(self, evidence: Evidence) -> int:
        """The most leading episodes whose prompt (pages whole, no history) fits; binary search."""
        low, high = 0, len(evidence.episodes) - 1
        while low < high:
            mid = (low + high + 1) // 2
            head = evidence.model_copy(update={"episodes": evidence.episodes[:mid]})
            if self._fits(render_evidence(head, with_history=False, redactor=self.redactor)):
                low = mid
            else:
                high = mid - 1
        return low


def llm_distiller_from_env(
    cache: ResponseCache | None = None,
    config: LLMDistillConfig | None = None,
    redactor: Redactor = DEFAULT,
) -> LLMDistiller | None:
    """An :class:`LLMDistiller` for the model named by ``REVERIE_LLM_MODEL`` (see
    :func:`reverie.llm.providers.llm_from_env`), or None when no model is configured: then the
    extractive distiller stays the default. Pass the store as ``cache``."""
    if not os.environ.get("REVERIE_LLM_MODEL"):
        return None
    return LLMDistiller(llm_from_env(), config, cache=cache, redactor=redactor)
