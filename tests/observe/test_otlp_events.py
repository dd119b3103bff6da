"""OTLP logs from agents turned into timeline events (zen/observe/otlp.py), record by record:
AnyValue decoding, naming, attribution to a job, the retry key, and each understood event's
fields (Claude Code and Codex), called in-process on hand-made payloads."""

from __future__ import annotations

from typing import Any

import pytest

from zen.observe import otlp

NS = 1_764_410_400_000_000_000


def sv(v: str) -> dict[str, str]:
    return {"stringValue": v}


def attrs(**kv: Any) -> list[dict[str, Any]]:
    out = []
    for k, v in kv.items():
        key = k.replace("__", ".")
        out.append({"key": key, "value": v if isinstance(v, dict) else sv(str(v))})
    return out


def payload(*records: dict[str, Any], service: str = "claude-code", job: str | None = "J1",
            lane: str = "app") -> dict[str, Any]:
    res = {"service__name": service, "zen__lane": lane}
    if job is not None:
        res["zen__job"] = job
    return {"resourceLogs": [{"resource": {"attributes": attrs(**res)},
                              "scopeLogs": [{"logRecords": list(records)}]}]}


def rec(name: str, ts: int = NS, **kv: Any) -> dict[str, Any]:
    return {"timeUnixNano": str(ts), "body": sv(name), "attributes": attrs(**{"event__name": name, **kv})}


def events_of(p: dict[str, Any], **kw: Any) -> list[tuple[str, dict[str, Any]]]:
    return [otlp.to_event(r, **kw) for r in otlp.records(p) if otlp.to_event(r, **kw) is not None]  # type: ignore[misc]


# -- AnyValue ------------------------------------------------------------------------------------

@pytest.mark.parametrize("value,want", [
    ({"stringValue": "x"}, "x"), ({"string_value": "x"}, "x"), ({"boolValue": True}, True),
    ({"doubleValue": 1.5}, 1.5), ({"intValue": "42"}, 42), ({"int_value": 7}, 7),
    ({"intValue": "-3"}, 0),                       # a count is never negative
    ({"intValue": "12abc"}, "12abc"),              # not digits: kept as given
    ({"arrayValue": {"values": [sv("a"), {"intValue": "2"}]}}, ["a", 2]),
    ({"kvlistValue": {"values": [{"key": "k", "value": sv("v")}]}}, {"k": "v"}),
    ({}, None), ("raw", "raw"), (None, None), ({"arrayValue": {"values": None}}, []),
])
def test_any_value(value: Any, want: Any) -> None:
    assert otlp.any_value(value) == want


def test_attributes_skip_what_is_not_a_key_value() -> None:
    got = otlp.attributes([{"key": "a", "value": sv("1")}, {"key": 3, "value": sv("x")}, "junk", None,
                           {"value": sv("nokey")}, {"key": "b"}])
    assert got == {"a": "1", "b": None}
    assert otlp.attributes("not a list") == {} and otlp.attributes(None) == {}


# -- records -------------------------------------------------------------------------------------

def test_a_record_gets_its_resources_attributes_and_its_own_win() -> None:
    p = payload(rec("claude_code.api_request", **{"zen__lane": "override"}))
    [r] = otlp.records(p)
    assert r.job == "J1" and r.lane == "override" and r.ts_ns == NS
    assert r.attrs["service.name"] == "claude-code"


def test_a_short_event_name_takes_the_services_prefix() -> None:
    bare = {"timeUnixNano": str(NS), "attributes": attrs(event__name="api_request")}
    [claude] = otlp.records(payload(bare))
    [codex] = otlp.records(payload(bare, service="codex_exec"))
    assert claude.name == "claude_code.api_request" and codex.name == "codex.api_request"


def test_the_body_names_a_record_without_an_event_name_and_observed_time_stands_in() -> None:
    r = {"observedTimeUnixNano": str(NS + 5), "body": sv("claude_code.tool_result"), "attributes": []}
    [got] = otlp.records(payload(r))
    assert got.name == "claude_code.tool_result" and got.ts_ns == NS + 5
    nameless = {"body": {"kvlistValue": {"values": []}}}
    [anon] = otlp.records(payload(nameless))
    assert anon.name == "" and anon.ts_ns == 0


@pytest.mark.parametrize("junk", [None, [], "x", {"resourceLogs": None}, {"resourceLogs": ["x", None]},
                                  {"resourceLogs": [{"resource": "x", "scopeLogs": [None, {"logRecords": [1, "a"]}]}]}])
def test_unreadable_payload_parts_are_skipped(junk: Any) -> None:
    assert list(otlp.records(junk)) == []


def test_snake_case_payloads_read_like_camel_case() -> None:
    snake = {"resource_logs": [{"resource": {"attributes": [{"key": "zen.job", "value": {"string_value": "J7"}}]},
                                "scope_logs": [{"log_records": [{"time_unix_nano": str(NS),
                                                                 "body": {"string_value": "claude_code.api_error"}}]}]}]}
    [r] = otlp.records(snake)
    assert (r.name, r.job, r.ts_ns) == ("claude_code.api_error", "J7", NS)


# -- the retry key -------------------------------------------------------------------------------

def test_the_key_is_session_and_sequence_when_known_and_a_digest_otherwise() -> None:
    a = otlp.Record("claude_code.api_request", NS, {"session.id": "s1", "event.sequence": 4})
    assert otlp.record_key(a) == "s1:4:claude_code.api_request"
    codex = otlp.Record("codex.sse_event", NS, {"conversation.id": "c1", "event.sequence": 0})
    assert otlp.record_key(codex) == "c1:0:codex.sse_event"          # sequence 0 is a sequence
    b = otlp.Record("claude_code.api_request", NS, {"model": "m"})
    c = otlp.Record("claude_code.api_request", NS + 1, {"model": "m"})
    assert otlp.record_key(b) == otlp.record_key(otlp.Record(b.name, b.ts_ns, dict(b.attrs)))
    assert otlp.record_key(b) != otlp.record_key(c) and len(otlp.record_key(b)) == 20


def test_a_retried_batch_adds_nothing_and_each_job_gets_its_own() -> None:
    p = payload(rec("claude_code.api_request", session__id="s", event__sequence={"intValue": "1"},
                    model="claude-haiku-4-5", input_tokens="10"),
                rec("claude_code.user_prompt", session__id="s", event__sequence={"intValue": "2"}))
    other = payload(rec("claude_code.tool_result", session__id="t", event__sequence={"intValue": "1"},
                        tool_name="Bash", success="true"), job="J2")
    both = {"resourceLogs": p["resourceLogs"] + other["resourceLogs"]}
    seen: set[str] = set()
    first = otlp.by_job(both, seen=seen)
    assert {j: [t for t, _ in evs] for j, evs in first.items()} == {"J1": ["api.request"], "J2": ["tool.result"]}
    assert otlp.by_job(both, seen=seen) == {}
    assert len(seen) == 2
    assert otlp.by_job(both) == first                               # without `seen`: no dedupe


def test_records_of_no_job_are_left_out() -> None:
    assert otlp.by_job(payload(rec("claude_code.api_request", model="claude-haiku-4-5"), job=None)) == {}


# -- Claude Code events --------------------------------------------------------------------------

def test_a_claude_api_request_is_priced_by_zen_and_keeps_the_agents_estimate() -> None:
    [(etype, f)] = events_of(payload(rec(
        "claude_code.api_request", model="claude-sonnet-4-5-20250929", input_tokens="1000", output_tokens="100",
        cache_read_tokens="10000", cache_creation_tokens="3000", cache_creation_1h_tokens="1000",
        cost_usd="0.5", duration_ms="1234.5")))
    assert etype == "api.request"
    assert f["model"] == "claude-sonnet-4-5-20250929" and f["source"] == "otel" and f["at_ns"] == NS
    assert (f["input_tokens"], f["output_tokens"], f["cache_read_input_tokens"]) == (1000, 100, 10000)
    assert f["cache_creation_input_tokens"] == 3000 and f["cache_creation_1h_input_tokens"] == 1000
    want = (1000 * 3 + 100 * 15 + 10000 * 0.3 + 2000 * 3.75 + 1000 * 6) / 1e6
    assert f["cost_usd"] == pytest.approx(want, abs=1e-10)
    assert f["agent_cost_usd"] == 0.5 and f["duration_ms"] == 1234.5 and "unpriced" not in f


def test_an_unknown_model_is_flagged_unpriced_and_odd_figures_are_dropped() -> None:
    [(_, f)] = events_of(payload(rec("claude_code.api_request", model="claude-next", input_tokens="x",
                                     cost_usd="-1", duration_ms="n/a")))
    assert f["unpriced"] == ["claude-next"] and f["cost_usd"] == 0 and f["input_tokens"] == 0
    assert "agent_cost_usd" not in f and "duration_ms" not in f


def test_zen_yaml_prices_reach_otlp_costs() -> None:
    p = payload(rec("claude_code.api_request", model="house-model", output_tokens="1000000"))
    [(_, f)] = events_of(p, prices={"house-model": {"input": 1, "output": 2}})
    assert f["cost_usd"] == pytest.approx(2.0) and "unpriced" not in f


def test_a_claude_api_error() -> None:
    [(etype, f)] = events_of(payload(rec("claude_code.api_error", model="claude-opus-4-1", status_code="529",
                                         error="Overloaded " * 100, attempt="3", duration_ms="20")))
    assert etype == "api.error"
    assert f["status_code"] == 529 and f["attempt"] == 3 and f["duration_ms"] == 20
    assert f["error"].startswith("Overloaded") and len(f["error"]) == 500


@pytest.mark.parametrize("success,want", [("true", True), ("True", True), ({"boolValue": True}, True),
                                          ("false", False), ("yes", False), ("1", False)])
def test_a_tool_result_succeeds_only_when_it_says_true(success: Any, want: bool) -> None:
    [(etype, f)] = events_of(payload(rec("claude_code.tool_result", tool_name="Edit", success=success)))
    assert etype == "tool.result" and f["tool"] == "Edit" and f["success"] is want and "error" not in f


def test_a_failed_tool_result_carries_its_error() -> None:
    [(_, f)] = events_of(payload(rec("claude_code.tool_result", tool_name="Bash", success="false",
                                     error="exit 1", duration_ms="7")))
    assert f["error"] == "exit 1" and f["success"] is False and f["duration_ms"] == 7


@pytest.mark.parametrize("name", ["claude_code.user_prompt", "claude_code.tool_decision", "other.tool_result",
                                  "claude_code.api_request_body", ""])
def test_events_zen_sees_itself_are_not_counted(name: str) -> None:
    assert events_of(payload(rec(name))) == []


# -- Codex events --------------------------------------------------------------------------------

def test_codex_counts_only_the_completed_response_that_carries_tokens() -> None:
    bare = rec("codex.sse_event", event__kind="response.completed")
    created = rec("codex.sse_event", event__kind="response.created", input_token_count="5")
    done = rec("codex.sse_event", ts=NS + 1, event__kind="response.completed", model="gpt-5-codex",
               input_token_count="1000", cached_token_count="400", output_token_count="50",
               reasoning_token_count="30", duration_ms="900")
    got = events_of(payload(bare, created, done, service="codex_cli_rs"))
    [(etype, f)] = got
    assert etype == "api.request"
    assert (f["input_tokens"], f["cache_read_input_tokens"], f["output_tokens"]) == (600, 400, 50)
    assert f["cost_usd"] == pytest.approx((600 * 1.25 + 400 * 0.125 + 50 * 10) / 1e6, abs=1e-10)


@pytest.mark.parametrize("kv,is_error", [({"http.response.status_code": "500"}, True),
                                         ({"http.response.status_code": "429"}, True),
                                         ({"error.message": "timeout"}, True),
                                         ({"http.response.status_code": "200"}, False), ({}, False)])
def test_a_codex_api_request_is_an_error_only_when_it_failed(kv: dict[str, str], is_error: bool) -> None:
    r = {"timeUnixNano": str(NS), "attributes": attrs(event__name="codex.api_request", model="gpt-5",
                                                      **{k.replace(".", "__"): v for k, v in kv.items()})}
    got = events_of(payload(r, service="codex"))
    if is_error:
        [(etype, f)] = got
        assert etype == "api.error"
        assert f["status_code"] == int(kv.get("http.response.status_code", 0))
        assert f["error"] == kv.get("error.message", "")
    else:
        assert got == []


def test_a_codex_tool_result() -> None:
    [(etype, f)] = events_of(payload(rec("codex.tool_result", tool_name="shell", success="true"), service="codex"))
    assert etype == "tool.result" and f["tool"] == "shell" and f["success"] is True


def test_decode_is_json_and_says_when_it_is_not() -> None:
    assert otlp.decode(b'{"resourceLogs": []}') == {"resourceLogs": []}
    with pytest.raises(ValueError):
        otlp.decode(b"\x1f\x8b not json")
