"""The golden corpus: one hand-made file per known counting trap, with figures worked out by hand
(tests/observe/corpus/expected.json says how). Per job, tokens exactly right, cost to $0.000001,
whether read at once, line by line, through the recorder, or in another file order."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from zen.observe import otlp, prices
from zen.observe.claude_transcript import ClaudeSession, session_files
from zen.observe.codex_rollout import CodexRollout, usage_of
from zen.observe.ledger import total_of
from zen.observe.record import record
from zen.store import events

CORPUS = Path(__file__).parent / "corpus"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())
TOKENS = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
          "cache_creation_1h_input_tokens")


def assert_figures(got: dict[str, Any], want: dict[str, Any]) -> None:
    for key in (*TOKENS, "api_calls", "api_errors"):
        assert got[key] == want[key], f"{key}: {got[key]} != {want[key]}"
    assert abs(got["cost_usd"] - want["cost_usd"]) < 1e-6 / 2, (got["cost_usd"], want["cost_usd"])


def claude_figures(files: list[Path], order_seed: int | None = None) -> tuple[dict[str, Any], set[str]]:
    session = ClaudeSession()
    if order_seed is not None:
        files = list(files)
        random.Random(order_seed).shuffle(files)
    for f in files:
        session.feed(f.read_bytes().split(b"\n"))
    totals = total_of(session.calls(), {}, errors=session.error_count)
    return totals.fields(), totals.unpriced


@pytest.mark.parametrize("case", sorted(EXPECTED["claude"]))
def test_claude_transcripts(case: str) -> None:
    want = EXPECTED["claude"][case]
    files = session_files(CORPUS / "claude" / case)
    got, unpriced = claude_figures(files)
    assert_figures(got, want)
    assert sorted(unpriced) == want.get("unpriced", [])
    for seed in range(3):   # subagent files before the main one, or between: the same figures
        assert_figures(claude_figures(files, seed)[0], want)


def test_subagent_files_are_found_at_any_depth() -> None:
    files = session_files(CORPUS / "claude" / "nested-subagents" / "s3.jsonl")
    names = [f.name for f in files]
    assert names[0] == "s3.jsonl" and set(names[1:]) == {"agent-a1.jsonl", "agent-b1.jsonl", "agent-c1.jsonl"}


@pytest.mark.parametrize("case", sorted(EXPECTED["codex"]))
def test_codex_rollouts(case: str) -> None:
    want = EXPECTED["codex"][case]
    got = usage_of(CORPUS / "codex" / case)
    assert got is not None
    assert_figures(got, want)
    # fed one line at a time (as a growing file is read) the counters turn into the same deltas
    session = CodexRollout()
    for line in (CORPUS / "codex" / case).read_bytes().split(b"\n"):
        session.feed([line])
        session = CodexRollout.from_json(json.loads(json.dumps(session.to_json())))
    assert_figures(total_of(session.calls()).fields(), want)


def test_otlp_payloads_per_job_with_a_retried_batch() -> None:
    seen: set[str] = set()
    per_job: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    for name in ("batch1.json", "batch2.json", "batch2.json"):    # batch 2 arrives twice
        for job, evs in otlp.by_job(otlp.decode((CORPUS / "otlp" / name).read_bytes()), {}, seen).items():
            per_job.setdefault(job, []).extend(evs)
    assert set(per_job) == {"J1", "J2"}
    for job, evs in per_job.items():
        want = EXPECTED["otlp"][job]
        calls = [f for t, f in evs if t == "api.request"]
        got = {k: sum(f[k] for f in calls) for k in TOKENS}
        got.update(api_calls=len(calls), api_errors=sum(t == "api.error" for t, _ in evs),
                   cost_usd=sum(f["cost_usd"] for f in calls))
        assert_figures(got, want)
        assert sum(t == "tool.result" for t, _ in evs) == want["tool_calls"]
        assert [f["duration_ms"] for f in calls if "duration_ms" in f] == want["api_ms"]
    error = next(f for t, f in per_job["J1"] if t == "api.error")
    assert error["status_code"] == 529 and error["error"] == "Overloaded"


def _job(tmp_path: Path, name: str = "j1") -> Path:
    job_dir = tmp_path / "home" / "jobs" / name
    job_dir.mkdir(parents=True)
    events.append(job_dir, name, "task.received")
    return job_dir


def _usage_sum(job_dir: Path) -> dict[str, Any]:
    out: dict[str, Any] = dict.fromkeys((*TOKENS, "api_calls", "api_errors"), 0)
    out["cost_usd"] = 0.0
    for ev in events.read_events(job_dir / "events.jsonl"):
        if ev["type"] == "usage":
            for k in out:
                out[k] += ev[k]
    return out


@pytest.mark.parametrize("case", sorted(EXPECTED["claude"]))
def test_recorded_usage_events_sum_to_the_figures(tmp_path: Path, case: str) -> None:
    """Through the recorder, a line at a time (a usage event per new response): the timeline sums
    to exactly the figures of the whole session."""
    src_main = CORPUS / "claude" / case
    dst = tmp_path / "projects" / src_main.name
    dst.parent.mkdir(parents=True)
    sub = src_main.with_suffix("")
    job_dir = _job(tmp_path)
    sources = session_files(src_main)
    # grow every file line by line, round robin, recording after each line
    targets = {s: dst.parent / s.relative_to(src_main.parent) for s in sources}
    pending = {s: s.read_bytes().split(b"\n") for s in sources}
    assert sub.is_dir() or len(sources) == 1
    while any(pending.values()):
        for s, lines in pending.items():
            if not lines:
                continue
            line = lines.pop(0)
            targets[s].parent.mkdir(parents=True, exist_ok=True)
            with targets[s].open("ab") as f:
                f.write(line + (b"\n" if lines else b""))
            record(job_dir, "j1", "claude", str(dst), prices={})
    assert_figures(_usage_sum(job_dir), EXPECTED["claude"][case])


@pytest.mark.parametrize("case", sorted(EXPECTED["codex"]))
def test_recorded_codex_usage_sums_to_the_figures(tmp_path: Path, case: str) -> None:
    job_dir = _job(tmp_path)
    rollout = tmp_path / "rollout.jsonl"
    for line in (CORPUS / "codex" / case).read_bytes().splitlines(keepends=True):
        with rollout.open("ab") as f:
            f.write(line)
        record(job_dir, "j1", "codex", str(rollout))
    assert_figures(_usage_sum(job_dir), EXPECTED["codex"][case])


def test_a_torn_line_counts_once_it_is_whole(tmp_path: Path) -> None:
    job_dir = _job(tmp_path)
    transcript = tmp_path / "s7.jsonl"
    shutil.copy(CORPUS / "claude" / "torn" / "s7.jsonl", transcript)
    first = record(job_dir, "j1", "claude", str(transcript))
    assert first is not None and first["api_calls"] == 1 and first["input_tokens"] == 10
    with transcript.open("ab") as f:
        f.write(b'tion_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":4}}}\n')
    second = record(job_dir, "j1", "claude", str(transcript))
    assert second is not None and second["api_calls"] == 1 and second["input_tokens"] == 40
    assert second["cost_usd"] == pytest.approx((40 * 3 + 4 * 15) / 1e6, abs=1e-12)


def test_price_lookup_never_guesses_a_model() -> None:
    assert prices.normalise("claude-sonnet-4-5-20250929") == "claude-sonnet-4-5"
    assert prices.normalise("us.anthropic.claude-opus-4-1-20250805-v1:0") == "claude-opus-4-1"
    assert prices.normalise("claude-sonnet-4-5@20250929") == "claude-sonnet-4-5"
    assert prices.normalise("claude-opus-4-6[1m]") == "claude-opus-4-6"
    assert prices.normalise("gpt-5-2025-08-07") == "gpt-5"
    assert prices.lookup("gpt-5.9") is None                 # not gpt-5's price
    assert prices.lookup("claude-sonnet-4-7") is None       # not claude-sonnet-4's
    fallback = {"default": {"input": 3.0, "output": 15.0}}
    assert prices.lookup("mystery", fallback) is not None and not prices.known("mystery", fallback)


def test_zen_yaml_prices_override_the_table() -> None:
    from zen.observe.tokens import Tokens

    t = Tokens(input=1000, output=100, cache_read=10_000, cache_write_5m=2000, cache_write_1h=500)
    # just `output`: the rest stays the table's
    assert prices.cost("claude-haiku-4-5", t, {"claude-haiku-4-5": {"output": 10}}) == pytest.approx(
        (1000 * 1 + 100 * 10 + 10_000 * 0.1 + 2000 * 1.25 + 500 * 2) / 1e6)
    # a new input price keeps the model's cache ratios
    assert prices.cost("gpt-5", Tokens(input=1000, cache_read=1000), {"gpt-5": {"input": 2.5}}) == pytest.approx(
        (1000 * 2.5 + 1000 * 0.25) / 1e6)
    # a tier can be added or dropped
    big = Tokens(input=300_000)
    tiered = {"claude-haiku-4-5": {"long_context": {"above": 200_000, "input": 2}}}
    assert prices.cost("claude-haiku-4-5", big, tiered) == pytest.approx(300_000 * 2 / 1e6)
    assert prices.cost("claude-sonnet-4-5", big, {"claude-sonnet-4-5": {"long_context": None}}) == pytest.approx(
        300_000 * 3 / 1e6)
    # an unknown model: zen.yaml's default, flagged as unpriced
    totals = total_of([("mystery-1", t)], {"default": {"input": 1, "output": 1}})
    assert totals.unpriced == {"mystery-1"} and totals.cost_usd > 0
