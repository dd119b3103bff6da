"""Prices, token classes and totals: what a call costs, model by model, and how the figures of
many calls add up (zen/observe/prices.py, tokens.py, ledger.py), called in-process."""

from __future__ import annotations

import math

import pytest

from zen.observe import prices
from zen.observe.ledger import Totals, add_fields, total_of
from zen.observe.tokens import Tokens, anthropic_usage, count, signed

M = 1_000_000


# -- model ids ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("raw", "key"), [
    ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"),                 # a router's prefix
    ("eu.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5"),  # Bedrock, regional
    ("anthropic.claude-opus-4-5-v1", "claude-opus-4-5"),                 # Bedrock, no region
    ("global.anthropic.claude-sonnet-4-6", "claude-sonnet-4-6"),
    ("openai/gpt-5.1-codex", "gpt-5.1-codex"),
    ("  Claude-Opus-4-1  ", "claude-opus-4-1"),                          # case and blanks
    ("gpt-5-mini-2025-08-07", "gpt-5-mini"),                             # OpenAI's date form
    ("", ""),
])
def test_provider_wrappers_are_removed_from_model_ids(raw: str, key: str) -> None:
    assert prices.normalise(raw) == key


def test_normalising_is_idempotent_over_the_whole_table() -> None:
    for key in prices.TABLE:
        assert prices.normalise(key) == key, key
        assert prices.normalise(prices.normalise(f"anthropic/{key}-20250101")) == key


@pytest.mark.parametrize("model", ["gpt-5.5-pro", "gpt-5-codex-mini", "claude-opus-4-2",
                                   "claude-sonnet", "gpt", "sonnet", "claude-haiku-4-5-turbo"])
def test_a_model_is_never_priced_as_its_prefix_or_a_near_name(model: str) -> None:
    assert prices.lookup(model) is None
    assert not prices.known(model)
    assert prices.cost(model, Tokens(input=M, output=M)) == 0.0


def test_a_none_model_is_unpriced_not_a_crash() -> None:
    assert prices.normalise(None) == ""  # type: ignore[arg-type]
    assert prices.lookup("") is None


# -- the cost of one call ------------------------------------------------------------------------

@pytest.mark.parametrize(("model", "inp", "out", "read", "write", "write_1h"), [
    ("claude-sonnet-4-5", 3.0, 15.0, 0.30, 3.75, 6.0),
    ("claude-opus-4-1", 15.0, 75.0, 1.50, 18.75, 30.0),
    ("claude-opus-4-5", 5.0, 25.0, 0.50, 6.25, 10.0),
    ("claude-haiku-4-5", 1.0, 5.0, 0.10, 1.25, 2.0),
    ("claude-3-haiku", 0.25, 1.25, 0.03, 0.3125, 0.5),     # its own cache-read price
    ("gpt-5", 1.25, 10.0, 0.125, 1.25, 1.25),              # OpenAI: writes cost fresh input
    ("gpt-5.4-mini", 0.75, 4.50, 0.075, 0.75, 0.75),
])
def test_each_class_is_billed_at_its_own_rate(model: str, inp: float, out: float, read: float,
                                              write: float, write_1h: float) -> None:
    n = 10_000      # small enough to stay under any long-context tier, all classes together
    assert prices.cost(model, Tokens(input=n)) == pytest.approx(inp * n / M)
    assert prices.cost(model, Tokens(output=n)) == pytest.approx(out * n / M)
    assert prices.cost(model, Tokens(cache_read=n)) == pytest.approx(read * n / M)
    assert prices.cost(model, Tokens(cache_write_5m=n)) == pytest.approx(write * n / M)
    assert prices.cost(model, Tokens(cache_write_1h=n)) == pytest.approx(write_1h * n / M)
    # classes add up: one call with all of them is the sum of the five
    every = Tokens(n, n, n, n, n)
    assert prices.cost(model, every) == pytest.approx((inp + out + read + write + write_1h) * n / M)


def test_wrapped_ids_cost_what_the_bare_model_costs() -> None:
    t = Tokens(input=12_345, output=678, cache_read=90_000, cache_write_5m=1_000, cache_write_1h=2_000)
    bare = prices.cost("claude-sonnet-4-5", t)
    assert bare > 0
    for wrapped in ("claude-sonnet-4-5-20250929", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                    "claude-sonnet-4-5@20250929", "claude-sonnet-4-5[1m]", "anthropic/claude-sonnet-4-5"):
        assert prices.cost(wrapped, t) == pytest.approx(bare), wrapped


def test_an_empty_call_costs_nothing() -> None:
    assert prices.cost("claude-opus-4-1", Tokens()) == 0.0


def test_the_long_context_tier_is_decided_on_the_whole_prompt_of_one_call() -> None:
    # 200k exactly is not over the threshold; one more token is, and then every class pays the tier
    at = Tokens(input=100_000, cache_read=60_000, cache_write_5m=30_000, cache_write_1h=10_000, output=1_000)
    assert at.prompt == 200_000
    base = (100_000 * 3 + 60_000 * 0.3 + 30_000 * 3.75 + 10_000 * 6 + 1_000 * 15) / M
    assert prices.cost("claude-sonnet-4-5", at) == pytest.approx(base)
    over = Tokens(input=100_001, cache_read=60_000, cache_write_5m=30_000, cache_write_1h=10_000, output=1_000)
    tier = (100_001 * 6 + 60_000 * 0.6 + 30_000 * 7.5 + 10_000 * 12 + 1_000 * 22.5) / M
    assert prices.cost("claude-sonnet-4-5", over) == pytest.approx(tier)


def test_output_does_not_push_a_call_into_the_long_context_tier() -> None:
    t = Tokens(input=150_000, output=100_000)
    assert t.prompt == 150_000 and t.total == 250_000
    assert prices.cost("claude-sonnet-4-5", t) == pytest.approx((150_000 * 3 + 100_000 * 15) / M)


def test_a_model_without_a_tier_pays_its_base_rate_at_any_size() -> None:
    t = Tokens(input=900_000)
    assert prices.cost("claude-opus-4-5", t) == pytest.approx(900_000 * 5 / M)


def test_the_haiku_5_5_tier_starts_at_its_own_threshold() -> None:
    assert prices.cost("claude-haiku-5-5", Tokens(input=100_000)) == pytest.approx(100_000 * 0.10 / M)
    assert prices.cost("claude-haiku-5-5", Tokens(input=100_001)) == pytest.approx(100_001 * 0.50 / M)


def test_two_calls_under_the_threshold_are_not_tiered_though_their_sum_is_over() -> None:
    one = Tokens(input=150_000)
    totals = total_of([("claude-sonnet-4-5", one), ("claude-sonnet-4-5", one)])
    assert totals.cost_usd == pytest.approx(2 * 150_000 * 3 / M)
    assert prices.cost("claude-sonnet-4-5", one.plus(one)) == pytest.approx(300_000 * 6 / M)


# -- zen.yaml `prices` ------------------------------------------------------------------------

def test_a_new_input_price_scales_the_cache_rates_and_keeps_output_and_tier() -> None:
    price = prices.lookup("claude-sonnet-4-5", {"claude-sonnet-4-5": {"input": 6}})
    assert price is not None
    assert price.rates == pytest.approx(prices.Rates(6.0, 15.0, 0.6, 7.5, 12.0))
    assert price.long_above == 200_000 and price.long_rates == prices.TABLE["claude-sonnet-4-5"].long_rates


def test_an_override_for_a_model_not_in_the_table_follows_anthropic_multipliers() -> None:
    spec = {"house-model": {"input": 2, "output": 8}}
    price = prices.lookup("house-model", spec)
    assert price is not None and price.rates == pytest.approx(prices.Rates(2.0, 8.0, 0.2, 2.5, 4.0))
    assert prices.known("house-model", spec)
    assert price.long_rates is None


def test_an_override_is_found_by_the_raw_id_or_the_normalised_one() -> None:
    by_key = {"claude-opus-4-1": {"output": 1}}
    by_raw = {"us.anthropic.claude-opus-4-1-v1:0": {"output": 2}}
    model = "us.anthropic.claude-opus-4-1-v1:0"
    assert prices.cost(model, Tokens(output=M), by_key) == pytest.approx(1.0)
    assert prices.cost(model, Tokens(output=M), by_raw) == pytest.approx(2.0)
    # the raw id wins when both are given
    assert prices.cost(model, Tokens(output=M), {**by_key, **by_raw}) == pytest.approx(2.0)


@pytest.mark.parametrize("bad", [-1, "lots", None, True, float("inf"), float("nan"), [3]])
def test_a_bad_figure_in_zen_yaml_keeps_the_table_figure(bad: object) -> None:
    price = prices.lookup("claude-haiku-4-5", {"claude-haiku-4-5": {"input": bad, "output": bad}})
    assert price is not None and price.rates == prices.TABLE["claude-haiku-4-5"].rates


def test_a_numeric_string_in_zen_yaml_is_a_price() -> None:
    assert prices.cost("claude-haiku-4-5", Tokens(output=M), {"claude-haiku-4-5": {"output": "2.5"}}) \
        == pytest.approx(2.5)


def test_an_override_that_is_not_a_mapping_is_ignored() -> None:
    assert prices.lookup("gpt-5", {"gpt-5": 3}) == prices.TABLE["gpt-5"]
    assert prices.lookup("mystery", {"mystery": "cheap"}) is None


def test_a_tier_added_to_a_model_without_a_base_derives_from_the_models_rates() -> None:
    spec = {"house": {"input": 1, "output": 4, "long_context": {"above": 1_000, "input": 2}}}
    small, big = Tokens(input=1_000, output=10), Tokens(input=1_001, output=10)
    assert prices.cost("house", small, spec) == pytest.approx((1_000 * 1 + 10 * 4) / M)
    # the tier doubles input and scales the cache rates with it; output keeps the base figure
    assert prices.cost("house", big, spec) == pytest.approx((1_001 * 2 + 10 * 4) / M)
    tier = prices.lookup("house", spec)
    assert tier is not None and tier.long_rates is not None
    assert tier.long_rates.cache_read == pytest.approx(0.2)


def test_a_tier_that_is_not_a_mapping_drops_the_tables_tier() -> None:
    price = prices.lookup("claude-sonnet-4-5", {"claude-sonnet-4-5": {"long_context": "off"}})
    assert price is not None and price.long_rates is None and price.long_above == 0


def test_the_default_price_applies_only_to_unknown_models_and_they_stay_unpriced() -> None:
    spec = {"default": {"input": 10, "output": 10}}
    assert prices.cost("claude-haiku-4-5", Tokens(input=M), spec) == pytest.approx(1.0)   # table's own
    assert prices.cost("mystery", Tokens(input=M), spec) == pytest.approx(10.0)
    assert prices.known("claude-haiku-4-5", spec) and not prices.known("mystery", spec)
    assert not prices.known("default", spec)         # `default` is not a model


# -- token counts -----------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "want"), [
    (12, 12), (12.9, 12), ("12", 12), ("1e3", 1000), ("2.5", 2), (" 7 ", 7),
    (-3, 0), ("-3", 0), (0, 0), (None, 0), (True, 0), (False, 0), ("twelve", 0), ("", 0),
    (float("nan"), 0), (float("inf"), 0), ([], 0), ({"n": 1}, 0), (10**15, 10**15),
])
def test_a_token_count_from_any_producer(value: object, want: int) -> None:
    assert count(value) == want


def test_signed_counts_keep_a_numeric_correction_negative() -> None:
    assert signed(-40) == -40 and signed(-2.7) == -2 and signed(40) == 40
    assert signed(True) == 0 and signed(None) == 0 and signed(-math.inf) == 0


def test_tokens_arithmetic_and_derived_figures() -> None:
    a = Tokens(10, 20, 30, 40, 50)
    b = Tokens(1, 25, 3, 45, 5)
    assert a.plus(b) == Tokens(11, 45, 33, 85, 55)
    assert a.minus(b) == Tokens(9, -5, 27, -5, 45)
    assert a.widest(b) == Tokens(10, 25, 30, 45, 50)
    assert a.cache_write == 90 and a.prompt == 130 and a.total == 150
    assert bool(a) and not bool(Tokens()) and bool(Tokens(cache_write_1h=1))
    assert a.plus(b).minus(b) == a
    assert hash(Tokens(1, 2, 3, 4, 5)) == hash(Tokens(1, 2, 3, 4, 5)) and a != (10, 20, 30, 40, 50)
    assert repr(a) == "Tokens(10, 20, 30, 40, 50)"


def test_fields_round_trip_and_write_is_reported_as_the_sum() -> None:
    t = Tokens(5, 6, 7, 8, 9)
    f = t.fields()
    assert f["cache_creation_input_tokens"] == 17 and f["cache_creation_1h_input_tokens"] == 9
    assert Tokens.from_fields(f) == t
    assert Tokens.fromlist(t.tolist()) == t
    neg = Tokens(-5, 0, 0, -3, -1)
    assert Tokens.from_fields(neg.fields()) == neg      # a correction survives its event


@pytest.mark.parametrize("bad", [None, "1,2,3,4,5", [1, 2, 3, 4], [1, 2, 3, 4, 5, 6], {"a": 1}])
def test_a_bad_list_is_no_tokens(bad: object) -> None:
    assert Tokens.fromlist(bad) == Tokens()


def test_non_integer_items_of_a_list_count_zero() -> None:
    assert Tokens.fromlist([1, True, "3", 4.0, 5]) == Tokens(1, 0, 0, 0, 5)


def test_anthropic_usage_splits_cache_writes_by_lifetime() -> None:
    base = {"input_tokens": 3, "output_tokens": 4, "cache_read_input_tokens": 5}
    # no split: every write is a 5-minute one
    assert anthropic_usage({**base, "cache_creation_input_tokens": 100}) == Tokens(3, 4, 5, 100, 0)
    # a full split
    full = {**base, "cache_creation_input_tokens": 100,
            "cache_creation": {"ephemeral_5m_input_tokens": 30, "ephemeral_1h_input_tokens": 70}}
    assert anthropic_usage(full) == Tokens(3, 4, 5, 30, 70)
    # a split short of the sum leaves the rest at 5 minutes
    short = {**base, "cache_creation_input_tokens": 100, "cache_creation": {"ephemeral_1h_input_tokens": 60}}
    assert anthropic_usage(short) == Tokens(3, 4, 5, 40, 60)
    # a split over the sum wins
    over = {**base, "cache_creation_input_tokens": 10,
            "cache_creation": {"ephemeral_5m_input_tokens": 30, "ephemeral_1h_input_tokens": 70}}
    assert anthropic_usage(over) == Tokens(3, 4, 5, 30, 70)


@pytest.mark.parametrize("usage", [None, [], "usage", {"input_tokens": None, "cache_creation": "x"}])
def test_anthropic_usage_of_garbage_is_zero(usage: object) -> None:
    assert anthropic_usage(usage) == Tokens()


# -- totals of many calls ---------------------------------------------------------------------

def test_totals_price_each_call_by_its_own_model_and_count_calls_per_model() -> None:
    calls = [("claude-opus-4-1", Tokens(input=1_000)), ("claude-haiku-4-5", Tokens(input=1_000)),
             ("claude-haiku-4-5", Tokens(output=1_000)), ("mystery", Tokens(input=1_000))]
    totals = total_of(calls, errors=2)
    assert totals.cost_usd == pytest.approx((1_000 * 15 + 1_000 * 1 + 1_000 * 5) / M)
    assert totals.models == {"claude-opus-4-1": 1, "claude-haiku-4-5": 2, "mystery": 1}
    assert totals.unpriced == {"mystery"}
    assert totals.api_calls == 4 and totals.api_errors == 2
    assert totals.tokens == Tokens(input=3_000, output=1_000)
    f = totals.fields()
    assert f["api_calls"] == 4 and f["api_errors"] == 2 and f["input_tokens"] == 3_000


def test_totals_of_no_calls() -> None:
    totals = total_of([])
    assert totals.api_calls == 0 and totals.cost_usd == 0.0 and totals.models == {}
    assert totals.minus({}) is None


def test_the_change_between_two_totals_is_what_was_added() -> None:
    first = total_of([("claude-haiku-4-5", Tokens(input=100, output=10))])
    recorded = first.fields()
    assert first.minus(recorded) is None                 # nothing new: no event
    second = total_of([("claude-haiku-4-5", Tokens(input=100, output=10)),
                       ("claude-haiku-4-5", Tokens(input=50))], errors=1)
    delta = second.minus(recorded)
    assert delta is not None
    assert delta["input_tokens"] == 50 and delta["output_tokens"] == 0
    assert delta["api_calls"] == 1 and delta["api_errors"] == 1
    assert delta["cost_usd"] == pytest.approx(50 * 1 / M)
    # the recorded events sum to the truth
    summed = add_fields(add_fields({}, recorded), delta)
    for key, value in second.fields().items():
        assert summed[key] == pytest.approx(value), key


def test_a_replay_found_later_is_recorded_as_a_negative_change() -> None:
    before = total_of([("claude-haiku-4-5", Tokens(input=100)), ("claude-haiku-4-5", Tokens(input=100))])
    after = total_of([("claude-haiku-4-5", Tokens(input=100))])
    delta = after.minus(before.fields())
    assert delta is not None and delta["input_tokens"] == -100 and delta["api_calls"] == -1
    assert delta["cost_usd"] == pytest.approx(-100 / M)


def test_a_garbled_recorded_cost_counts_as_nothing_spent() -> None:
    totals = total_of([("claude-haiku-4-5", Tokens(input=M))])
    delta = totals.minus({"cost_usd": "lots", "input_tokens": M, "api_calls": 1})
    assert delta is not None and delta["cost_usd"] == pytest.approx(1.0) and delta["input_tokens"] == 0


def test_the_price_cache_memoises_a_lookup_even_a_missing_one() -> None:
    cache: dict[str, prices.Price | None] = {}
    t = Totals()
    t.add_call("mystery", Tokens(input=1), None, cache)
    t.add_call("claude-haiku-4-5", Tokens(input=M), None, cache)
    assert cache == {"mystery": None, "claude-haiku-4-5": prices.TABLE["claude-haiku-4-5"]}
    # a cached price is used as is (the cache is trusted over a changed table)
    cache["claude-haiku-4-5"] = prices.Price(prices.Rates(100.0, 0, 0, 0, 0))
    assert t.add_call("claude-haiku-4-5", Tokens(input=M), None, cache) == pytest.approx(100.0)


def test_add_fields_sums_odd_values_and_fills_every_field() -> None:
    into = add_fields({}, {"input_tokens": 5, "output_tokens": "7", "cost_usd": "0.25",
                           "api_calls": 1.0, "cache_read_input_tokens": None})
    assert into["input_tokens"] == 5 and into["output_tokens"] == 7 and into["api_calls"] == 1
    assert into["cache_read_input_tokens"] == 0 and into["api_errors"] == 0
    assert into["cost_usd"] == pytest.approx(0.25)
    add_fields(into, {"input_tokens": -2, "cost_usd": [1]})
    assert into["input_tokens"] == 3 and into["cost_usd"] == pytest.approx(0.25)
    add_fields(into, {"cost_usd": 1})
    assert into["cost_usd"] == pytest.approx(1.25)
