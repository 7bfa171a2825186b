"""``reverie doctor``: does the configured model answer, in the shape Reverie needs?

It sends one tiny structured request through the same client and the same rules a dream cycle
uses (JSON schema, the repair turn, retries) and reports the model, the latency and the tokens.
Exit codes: 0 the model answered correctly; 1 no model is configured (the extractive distiller
runs, which is a healthy setup); 2 a model is configured but does not answer as it must.
Nothing secret is printed: the base URL goes through :func:`reverie.redaction.redact`.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Annotated, Any

import typer

from reverie.errors import ReverieError

if TYPE_CHECKING:
    from reverie.llm.protocol import LLM

__all__ = ["DoctorReport", "check_model", "doctor"]

PING_SYSTEM = "You are a health check. Follow the schema exactly."
PING_USER = 'Answer with the JSON object {"ok": true}.'
PING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"ok": {"type": "boolean"}},
    "required": ["ok"],
    "additionalProperties": False,
}


@dataclass
class DoctorReport:
    ok: bool
    configured: bool
    message: str
    provider: str | None = None
    base_url: str | None = None
    model: str | None = None
    latency_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 2 if self.configured else 1


def _ping_check(data: dict[str, Any]) -> list[str]:
    return [] if data.get("ok") is True else ['"ok" must be true']


def check_model(provider: str | None = None, *, timeout_s: float = 30.0) -> DoctorReport:
    """Ask the model configured by ``REVERIE_LLM_*`` one structured question."""
    from reverie.llm._http import HTTPSettings
    from reverie.llm.providers import llm_from_env
    from reverie.redaction import redact

    name = provider or os.environ.get("REVERIE_LLM_PROVIDER") or "openai"
    if not os.environ.get("REVERIE_LLM_MODEL"):
        return DoctorReport(
            ok=False,
            configured=False,
            provider=name,
            message="no model configured (set REVERIE_LLM_MODEL); the extractive distiller runs",
        )
    settings = HTTPSettings(timeout_s=timeout_s, connect_timeout_s=min(10.0, timeout_s))
    try:
        llm = llm_from_env(name, settings=settings)
    except ReverieError as exc:
        return DoctorReport(ok=False, configured=True, provider=name, message=str(exc))
    report = DoctorReport(
        ok=False,
        configured=True,
        provider=name,
        model=llm.model,
        base_url=redact(str(getattr(llm, "base_url", ""))),
        message="",
    )
    try:
        return _ping(llm, report)
    finally:
        llm.close()


def _ping(llm: LLM, report: DoctorReport) -> DoctorReport:
    from reverie.redaction import redact

    try:
        response = llm.complete_json(
            PING_SYSTEM, PING_USER, PING_SCHEMA, max_tokens=50, check=_ping_check
        )
    except ReverieError as exc:
        report.message = f"the model did not answer as required: {redact(str(exc))}"
        return report
    report.ok, report.message = True, "the model answered with valid structured output"
    report.latency_s = round(response.latency_s, 3)
    report.input_tokens, report.output_tokens = response.input_tokens, response.output_tokens
    return report


def doctor(
    provider: Annotated[
        str | None,
        typer.Option("--provider", help="openai or anthropic (default: $REVERIE_LLM_PROVIDER)."),
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="Seconds per attempt.")] = 30,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON to stdout.")] = False,
) -> None:
    """Check that the configured model (REVERIE_LLM_*) answers with structured output."""
    report = check_model(provider, timeout_s=timeout)
    if as_json:
        typer.echo(json.dumps(asdict(report), indent=2))
    else:
        status = "ok" if report.ok else "not configured" if not report.configured else "FAILED"
        typer.echo(f"model: {status}: {report.message}")
        if report.model:
            typer.echo(f"  {report.provider} · {report.model} · {report.base_url}")
        if report.ok:
            typer.echo(
                f"  {report.latency_s}s · {report.input_tokens} tokens in,"
                f" {report.output_tokens} out"
            )
    raise typer.Exit(report.exit_code)
