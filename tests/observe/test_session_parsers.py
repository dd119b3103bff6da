"""Each agent's session file reduced to distinct API calls (Claude Code transcripts, Codex
rollouts, Gemini CLI chats, aider analytics logs): one rule per test, on hand-made lines, plus
the invariants every parser keeps (a file fed in pieces, or through a saved state, gives the
figures of the file read at once; garbage never crashes)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from zen.observe import codex_rollout
from zen.observe.aider_log import AiderLog
from zen.observe.claude_transcript import ClaudeSession, session_files, usage_of
from zen.observe.codex_rollout import CodexRollout
from zen.observe.gemini_chat import GeminiChat, chat_tokens
from zen.observe.tokens import Tokens


def j(obj: Any) -> str:
    return json.dumps(obj)


# -- Claude Code -------------------------------------------------------------------------------

def asst(msg_id: str = "msg_1", req: str = "req_1", *, model: str = "claude-haiku-4-5", inp: int = 10,
         out: int = 5, read: int = 0, write: int = 0, side: bool = False, uuid: str = "",
         usage: Any = None, **extra: Any) -> str:
    message: dict[str, Any] = {"model": model}
    if msg_id:
        message["id"] = msg_id
    message["usage"] = usage if usage is not None else {
        "input_tokens": inp, "output_tokens": out, "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write}
    line: dict[str, Any] = {"type": "assistant", "isSidechain": side, "message": message, **extra}
    if req:
        line["requestId"] = req
    if uuid:
        line["uuid"] = uuid
    return j(line)


def claude_calls(*lines: str) -> list[tuple[str, Tokens]]:
    s = ClaudeSession()
    s.feed(lines)
    return list(s.calls())


def test_content_blocks_of_one_response_are_one_call_at_the_largest_figures() -> None:
    calls = claude_calls(asst(out=1), asst(out=40), asst(out=12, read=7))
    assert calls == [("claude-haiku-4-5", Tokens(input=10, output=40, cache_read=7))]


def test_the_same_message_id_under_two_requests_is_two_calls() -> None:
    assert len(claude_calls(asst(req="req_1"), asst(req="req_2"))) == 2


def test_a_sidechain_replay_of_a_main_chain_message_is_not_a_call_whatever_the_order() -> None:
    main = asst("msg_a", "req_main")
    replay = asst("msg_a", "req_side", side=True)
    assert len(claude_calls(main, replay)) == 1
    assert len(claude_calls(replay, main)) == 1
    # a sidechain message of its own is a call
    assert len(claude_calls(main, asst("msg_b", "req_side", side=True))) == 2


def test_a_response_seen_on_both_chains_counts_as_main_chain() -> None:
    # the same (message, request) written once as sidechain and once as main: one call, kept
    assert len(claude_calls(asst(side=True), asst(side=False))) == 1


def test_synthetic_lines_and_lines_without_usage_are_not_calls() -> None:
    assert claude_calls(asst(model="<synthetic>"), j({"type": "assistant", "message": {"id": "m"}})) == []


def test_api_errors_are_counted_once_each_and_are_not_calls() -> None:
    s = ClaudeSession()
    err = j({"type": "assistant", "isApiErrorMessage": True, "uuid": "u1",
             "message": {"id": "e1", "model": "<synthetic>", "usage": {"input_tokens": 0}}})
    other = j({"type": "assistant", "isApiErrorMessage": True, "uuid": "u2", "message": {}})
    s.feed([err, err, other])
    assert s.error_count == 2 and list(s.calls()) == []


def test_a_line_without_message_id_is_keyed_by_its_uuid_or_not_counted() -> None:
    with_uuid = asst(msg_id="", req="", uuid="u-1")
    assert len(claude_calls(with_uuid, with_uuid)) == 1
    assert claude_calls(asst(msg_id="", req="", uuid="")) == []


def test_user_lines_torn_lines_and_foreign_lines_are_skipped() -> None:
    s = ClaudeSession()
    good = asst()
    seen = s.feed([
        j({"type": "user", "message": {"content": "assistant said " + "x" * 1000}}),
        good[: len(good) // 2],                       # torn
        '["assistant"]', '"assistant"', "", "\x00\xff assistant",
        j({"type": "summary", "summary": "assistant"}),
        good,
    ])
    assert seen == 1 and len(list(s.calls())) == 1


def test_bytes_and_text_lines_count_the_same() -> None:
    a, b = ClaudeSession(), ClaudeSession()
    lines = [asst("m1", "r1"), asst("m2", "r2", out=99)]
    a.feed(lines)
    b.feed([x.encode() for x in lines])
    assert list(a.calls()) == list(b.calls())


def test_null_and_odd_usage_fields_count_zero() -> None:
    calls = claude_calls(asst(usage={"input_tokens": None, "output_tokens": "7", "cache_read_input_tokens": -4,
                                     "cache_creation_input_tokens": "lots"}))
    assert calls == [("claude-haiku-4-5", Tokens(output=7))]


def test_the_saved_state_continues_where_it_stopped() -> None:
    lines = [asst("m1", "r1", out=1), asst("m1", "r1", out=30), asst("m2", "r2", side=True),
             asst("m1", "r9", side=True), j({"type": "assistant", "isApiErrorMessage": True, "message": {"id": "e"}})]
    whole = ClaudeSession()
    whole.feed(lines)
    first = ClaudeSession()
    first.feed(lines[:2])
    resumed = ClaudeSession.from_json(json.loads(json.dumps(first.to_json())))
    resumed.feed(lines[2:])
    assert sorted(resumed.calls(), key=repr) == sorted(whole.calls(), key=repr)
    assert resumed.error_count == whole.error_count == 1


@pytest.mark.parametrize("state", [None, [], "x", {"responses": {"k": [1, 2]}}, {"responses": None, "errors": None}])
def test_a_garbled_saved_state_is_an_empty_session(state: Any) -> None:
    s = ClaudeSession.from_json(state)
    assert list(s.calls()) == [] and s.error_count == 0


def test_session_files_lists_the_main_transcript_then_its_subagents(tmp_path: Path) -> None:
    main = tmp_path / "s.jsonl"
    main.write_text("")
    assert session_files(main) == [main]
    sub = tmp_path / "s" / "subagents"
    (sub / "agent-b" / "subagents").mkdir(parents=True)
    (sub / "agent-b.jsonl").write_text("")
    (sub / "agent-a.jsonl").write_text("")
    (sub / "agent-b" / "subagents" / "agent-c.jsonl").write_text("")
    (sub / "notes.txt").write_text("not a transcript")
    (sub / "dir.jsonl").mkdir()                       # a directory is not a file to read
    got = session_files(main)
    assert got[0] == main
    assert {p.name for p in got[1:]} == {"agent-a.jsonl", "agent-b.jsonl", "agent-c.jsonl"}
    assert got[1:] == sorted(got[1:])                 # a stable order: path order, every run


def test_usage_of_a_session_adds_its_subagents_and_names_the_most_used_model(tmp_path: Path) -> None:
    main = tmp_path / "s.jsonl"
    main.write_text(asst("m1", "r1", model="claude-opus-4-1", inp=1000, out=0) + "\n")
    sub = tmp_path / "s" / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-x.jsonl").write_text("\n".join(
        asst(f"s{i}", f"q{i}", model="claude-haiku-4-5", inp=1000, out=0) for i in range(2)) + "\n")
    got = usage_of(main)
    assert got is not None
    assert got["api_calls"] == 3 and got["input_tokens"] == 3000 and got["model"] == "claude-haiku-4-5"
    assert got["cost_usd"] == pytest.approx((1000 * 15 + 2000 * 1) / 1e6)


def test_usage_of_a_missing_or_empty_transcript(tmp_path: Path) -> None:
    assert usage_of(tmp_path / "gone.jsonl") is None
    (tmp_path / "empty.jsonl").write_text("")
    got = usage_of(tmp_path / "empty.jsonl")
    assert got is not None and got["api_calls"] == 0 and got["model"] == "" and got["cost_usd"] == 0


def test_usage_of_reads_a_huge_transcript_of_unicode_tool_output(tmp_path: Path) -> None:
    blob = "é漢🙂" * 50_000
    lines = []
    for i in range(200):
        lines.append(j({"type": "user", "message": {"content": blob if i % 50 == 0 else "ok"}}))
        lines.append(asst(f"m{i}", f"r{i}", inp=1, out=1))
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")
    got = usage_of(path)
    assert got is not None and got["api_calls"] == 200 and got["output_tokens"] == 200


# -- Codex -------------------------------------------------------------------------------------

def usage(inp: int, cached: int = 0, out: int = 0, written: int = 0) -> dict[str, int]:
    return {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
            "cache_write_input_tokens": written}


def token_count(total: dict[str, int] | None = None, last: dict[str, int] | None = None) -> str:
    info: dict[str, Any] = {}
    if total is not None:
        info["total_token_usage"] = total
    if last is not None:
        info["last_token_usage"] = last
    return j({"type": "event_msg", "payload": {"type": "token_count", "info": info}})


def turn(model: str) -> str:
    return j({"type": "turn_context", "payload": {"model": model, "cwd": "/x"}})


def record_line(rid: str | None, u: dict[str, int], model: str | None = None) -> str:
    payload: dict[str, Any] = {"usage": u}
    if rid is not None:
        payload["response_id"] = rid
    if model is not None:
        payload["model"] = model
    return j({"type": "token_usage_record", "payload": payload})


def codex_calls(*lines: str) -> list[tuple[str, Tokens]]:
    r = CodexRollout()
    r.feed(lines)
    return list(r.calls())


def test_openai_counters_map_to_zen_classes() -> None:
    # input includes cached and written tokens; output includes reasoning (not added again)
    assert codex_rollout.to_tokens((1000, 300, 200, 50)) == Tokens(input=500, output=50, cache_read=300,
                                                                   cache_write_5m=200)
    # a producer whose cached figure exceeds its input never yields negative fresh input
    assert codex_rollout.to_tokens((10, 30, 0, 1)).input == 0


def test_a_cumulative_counter_becomes_one_call_per_increase() -> None:
    calls = codex_calls(turn("gpt-5-codex"),
                        token_count(usage(100, 20, 10)),
                        token_count(usage(100, 20, 10)),          # repeated: no new call
                        token_count(usage(250, 50, 30)))
    assert calls == [("gpt-5-codex", Tokens(input=80, output=10, cache_read=20)),
                     ("gpt-5-codex", Tokens(input=120, output=20, cache_read=30))]


def test_a_counter_that_goes_down_starts_a_new_count() -> None:
    calls = codex_calls(turn("gpt-5"), token_count(usage(500, 0, 50)),
                        token_count(usage(100, 0, 10), last=usage(100, 0, 10)),
                        token_count(usage(130, 0, 12)))
    assert [t for _, t in calls] == [Tokens(input=500, output=50), Tokens(input=100, output=10),
                                     Tokens(input=30, output=2)]


def test_a_reset_without_a_last_figure_counts_the_new_total() -> None:
    calls = codex_calls(token_count(usage(500)), token_count(usage(40, 0, 4)))
    assert [t for _, t in calls] == [Tokens(input=500), Tokens(input=40, output=4)]


def test_without_a_total_each_last_usage_is_a_call() -> None:
    calls = codex_calls(token_count(last=usage(10, 0, 1)), token_count(last=usage(10, 0, 1)))
    assert len(calls) == 2


def test_rate_limit_only_events_and_zero_deltas_carry_no_usage() -> None:
    nothing = j({"type": "event_msg", "payload": {"type": "token_count", "info": None, "rate_limits": {}}})
    assert codex_calls(nothing, token_count(usage(0)), token_count(last=usage(0))) == []


def test_the_model_is_the_latest_turn_context_at_the_time_of_the_call() -> None:
    calls = codex_calls(turn("gpt-5"), token_count(usage(10)), turn("gpt-5-mini"), token_count(usage(30)),
                        j({"type": "turn_context", "payload": {"model": ""}}), token_count(usage(35)))
    assert [m for m, _ in calls] == ["gpt-5", "gpt-5-mini", "gpt-5-mini"]


def test_usage_records_win_over_token_counts_and_count_each_response_once() -> None:
    calls = codex_calls(turn("gpt-5"), token_count(usage(999, 0, 99)),
                        record_line("resp_1", usage(100, 0, 10)),
                        record_line("resp_1", usage(120, 0, 12)),          # written again: the last
                        record_line("resp_2", usage(50), model="gpt-5-mini"),
                        record_line(None, usage(7)))
    assert calls == [("gpt-5", Tokens(input=120, output=12)), ("gpt-5-mini", Tokens(input=50)),
                     ("gpt-5", Tokens(input=7))]


def test_a_record_without_usage_is_not_a_call() -> None:
    assert codex_calls(j({"type": "token_usage_record", "payload": {"response_id": "r", "usage": None}})) == []


@pytest.mark.parametrize("line", ["", "{", "[]", "null", j({"type": "event_msg"}),
                                  j({"type": "event_msg", "payload": "token_count"}),
                                  j({"type": "event_msg", "payload": {"type": "token_count", "info": [1]}})])
def test_garbled_rollout_lines_are_skipped(line: str) -> None:
    r = CodexRollout()
    assert r.feed([line]) == 0 and list(r.calls()) == []


def test_a_rollout_fed_in_pieces_through_its_saved_state_gives_the_whole_figures() -> None:
    lines = [turn("gpt-5"), token_count(usage(100, 10, 5)), token_count(usage(100, 10, 5)),
             turn("gpt-5-mini"), token_count(usage(300, 40, 9)), token_count(usage(50), last=usage(50)),
             token_count(usage(80, 0, 3))]
    whole = codex_calls(*lines)
    for cut in range(len(lines) + 1):
        first = CodexRollout()
        first.feed(lines[:cut])
        resumed = CodexRollout.from_json(json.loads(json.dumps(first.to_json())))
        resumed.feed(lines[cut:])
        assert list(resumed.calls()) == whole, cut


def test_a_garbled_saved_rollout_state_is_skipped_item_by_item() -> None:
    r = CodexRollout.from_json({"model": None, "total": [1, 2, "3", 4], "counted": [["gpt-5", [1, 0, 0, 1]],
                                                                                   ["x", [1, 2]]],
                                "records": {}})
    assert r.model == "" and r.total is None
    assert list(r.calls()) == [("gpt-5", Tokens(input=1, output=1))]
    assert list(CodexRollout.from_json("nope").calls()) == []


def test_codex_usage_of_a_rollout_file(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    path.write_text("\n".join([turn("gpt-5"), token_count(usage(1000, 0, 100)),
                               token_count(usage(2000, 500, 200))]) + "\n{torn")
    got = codex_rollout.usage_of(path)
    assert got is not None
    assert got["api_calls"] == 2 and got["model"] == "gpt-5"
    assert got["input_tokens"] == 1500 and got["cache_read_input_tokens"] == 500 and got["output_tokens"] == 200
    assert got["cost_usd"] == pytest.approx((1500 * 1.25 + 500 * 0.125 + 200 * 10) / 1e6)
    assert codex_rollout.usage_of(tmp_path / "missing.jsonl") is None


# -- Gemini CLI --------------------------------------------------------------------------------

def gem(mid: str | None, inp: int = 100, out: int = 10, cached: int = 0, thoughts: int = 0,
        tool: int = 0, model: str = "gemini-2.5-pro") -> dict[str, Any]:
    msg: dict[str, Any] = {"type": "gemini", "model": model, "content": "hi",
                           "tokens": {"input": inp, "output": out, "cached": cached, "thoughts": thoughts,
                                      "tool": tool, "total": inp + out + thoughts}}
    if mid is not None:
        msg["id"] = mid
    return msg


def test_gemini_tokens_map_cached_inside_input_and_thoughts_as_output() -> None:
    assert chat_tokens({"input": 1000, "cached": 400, "output": 50, "thoughts": 30, "tool": 5}) == \
        Tokens(input=605, output=80, cache_read=400)
    # cached over input: capped at the input, fresh input never negative
    assert chat_tokens({"input": 10, "cached": 40}) == Tokens(input=0, cache_read=10)
    # no input figure at all: the cached tokens still count as reads
    assert chat_tokens({"cached": 40}) == Tokens(cache_read=40)


def test_a_gemini_message_written_again_counts_once_with_its_last_figures() -> None:
    chat = GeminiChat()
    seen = chat.feed([j(gem("a", out=1)), j({"type": "user", "id": "u", "content": "x"}), j(gem("a", out=9))])
    assert seen == 2
    assert list(chat.calls()) == [("gemini-2.5-pro", Tokens(input=100, output=9))]


def test_a_gemini_head_rewrite_is_read_like_the_messages_it_holds() -> None:
    chat = GeminiChat()
    chat.feed([j(gem("a")), j({"$set": {"messages": [gem("a", out=20), gem("b", out=3),
                                                     {"type": "user", "tokens": {"input": 5}}]}})])
    assert sorted(t.output for _, t in chat.calls()) == [3, 20]


def test_gemini_lines_that_are_not_model_messages_are_skipped() -> None:
    chat = GeminiChat()
    good = j(gem("a"))
    assert chat.feed([good[:-5], j({"type": "gemini", "tokens": "many"}), j({"type": "info", "tokens": {}}),
                      '["tokens"]', b'{"tokens": 1}', j({"$set": {"messages": "tokens"}})]) == 0


def test_gemini_saved_state_round_trips() -> None:
    chat = GeminiChat()
    chat.feed([j(gem("a", cached=30)), j(gem("b", model="gemini-2.5-flash"))])
    back = GeminiChat.from_json(json.loads(json.dumps(chat.to_json())))
    assert list(back.calls()) == list(chat.calls())
    assert list(GeminiChat.from_json({"messages": {"x": ["m"]}}).calls()) == []


# -- aider -------------------------------------------------------------------------------------

def send(prompt: Any, completion: Any, model: str = "gpt-5") -> str:
    return j({"event": "message_send", "properties": {"main_model": model, "prompt_tokens": prompt,
                                                       "completion_tokens": completion, "cost": 0.01}})


def test_each_aider_message_send_is_one_call_with_exact_figures() -> None:
    log = AiderLog()
    seen = log.feed([j({"event": "launched", "properties": {}}), send(3012, 418), send("99", None, "o3"),
                     j({"event": "command_add", "properties": {"message_send": 1}}), j({"event": "exit"})])
    assert seen == 2
    assert list(log.calls()) == [("gpt-5", Tokens(input=3012, output=418)), ("o3", Tokens(input=99))]


def test_aider_torn_and_odd_lines_are_skipped_and_state_round_trips() -> None:
    log = AiderLog()
    line = send(10, 1)
    assert log.feed([line[:10], j({"event": "message_send", "properties": None}), '"message_send"']) == 0
    log.feed([line, line.encode()])      # aider logs no ids: two identical sends are two calls
    back = AiderLog.from_json(json.loads(json.dumps(log.to_json())))
    assert list(back.calls()) == list(log.calls()) and len(list(back.calls())) == 2
    assert list(AiderLog.from_json({"sent": [["m", [1]], "x"]}).calls()) == [("m", Tokens())]


# -- every parser ------------------------------------------------------------------------------

SAMPLES: dict[str, tuple[Callable[[], Any], list[str]]] = {
    "claude": (ClaudeSession, [asst("m1", "r1"), asst("m1", "r1", out=50), asst("m2", "r2")]),
    "codex": (CodexRollout, [turn("gpt-5"), token_count(usage(10, 0, 1)), token_count(usage(30, 5, 4))]),
    "gemini": (GeminiChat, [j(gem("a")), j(gem("b", cached=20)), j(gem("a", out=30))]),
    "aider": (AiderLog, [send(10, 1), send(20, 2)]),
}


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_line_by_line_equals_all_at_once(kind: str) -> None:
    make, lines = SAMPLES[kind]
    whole, piecemeal = make(), make()
    whole.feed(lines)
    for line in lines:
        piecemeal.feed([line])
    assert list(piecemeal.calls()) == list(whole.calls()) and list(whole.calls())
    assert whole.kind == kind


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_no_lines_and_binary_garbage_give_no_calls(kind: str) -> None:
    make, _ = SAMPLES[kind]
    p = make()
    assert p.feed([]) == 0
    assert p.feed([b"\xff\xfe\x00" * 100, b"", b"{" * 10_000]) == 0
    assert list(p.calls()) == [] and p.error_count == 0
