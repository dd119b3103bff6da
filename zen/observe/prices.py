"""What an API call costs: a dated price table, overridable in zen.yaml `prices`, no network.

Prices are USD per million tokens, per class (zen/observe/tokens.py). The cost of one call is

    input·p_in + output·p_out + cache_read·p_read + write_5m·p_write + write_1h·p_write_1h

and a model with a long-context tier charges the tier's prices for *every* class of a call whose
prompt (fresh input + cache reads + cache writes) exceeds the threshold. The tier is decided per
call, on the whole prompt: not per class, and not on a session's sum.

Model ids are matched exactly after normalising what providers add around them: `anthropic/`,
Bedrock's `[region.]anthropic.` and `-v1:0`, Vertex's `@date`, Claude Code's `[1m]`, a date
suffix (`-20250929`, `-2025-08-07`). Never by a loose prefix: `gpt-5.5` is not `gpt-5`, and an
unknown model is priced from zen.yaml `prices.default` (if any) and reported as unpriced, not
silently billed as some other model.

zen.yaml, for any model (keys as below; those left out keep the table's figure, or derive from
`input` the way Anthropic does: cache reads 0.1x, 5 m writes 1.25x, 1 h writes 2x):

    prices:
      claude-sonnet-4-5: {input: 3, output: 15, cache_read: 0.3, cache_write: 3.75,
                          cache_write_1h: 6, long_context: {above: 200000, input: 6, ...}}

Stdlib only: the hook's fast path prices usage.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from zen.observe.tokens import Tokens

PRICES_DATE = "2026-12-01"


class Rates(NamedTuple):
    """USD per million tokens, by class."""

    input: float
    output: float
    cache_read: float
    cache_write: float        # 5-minute cache writes
    cache_write_1h: float


class Price(NamedTuple):
    rates: Rates
    long_above: int = 0                 # prompt tokens over which `long_rates` apply; 0 = no tier
    long_rates: Rates | None = None


def _anthropic(inp: float, out: float, read: float | None = None) -> Rates:
    """Anthropic's cache multipliers: writes 1.25x (5 m) and 2x (1 h) input, reads 0.1x."""
    return Rates(inp, out, inp * 0.1 if read is None else read, inp * 1.25, inp * 2.0)


def _openai(inp: float, cached: float, out: float) -> Rates:
    """OpenAI bills no cache writes apart: written tokens cost fresh input."""
    return Rates(inp, out, cached, inp, inp)


_SONNET = Price(_anthropic(3.0, 15.0))
_SONNET_1M = Price(_anthropic(3.0, 15.0), 200_000, _anthropic(6.0, 22.5))
_OPUS_4 = Price(_anthropic(15.0, 75.0))
_OPUS_45 = Price(_anthropic(5.0, 25.0))

# Sources (read 2026-11/12): Anthropic's pricing page as mirrored in public price tables (model
# pricing, prompt caching, long context), OpenAI's model pages and pricing page. Update the date
# above with every change; zen.yaml `prices` overrides any entry without a release.
TABLE: dict[str, Price] = {
    # Anthropic
    "claude-3-haiku": Price(_anthropic(0.25, 1.25, 0.03)),
    "claude-3-5-haiku": Price(_anthropic(0.80, 4.0)),
    "claude-haiku-4-5": Price(_anthropic(1.0, 5.0)),
    "claude-haiku-5-5": Price(_anthropic(0.10, 0.50), 100_000, _anthropic(0.50, 2.50)),
    "claude-3-5-sonnet": _SONNET,
    "claude-3-7-sonnet": _SONNET,
    "claude-sonnet-4": _SONNET_1M,
    "claude-sonnet-4-5": _SONNET_1M,
    "claude-sonnet-4-6": _SONNET_1M,
    "claude-sonnet-5": Price(_anthropic(2.0, 10.0)),
    "claude-sonnet-5-5": Price(_anthropic(2.0, 10.0, 0.10)),
    "claude-3-opus": _OPUS_4,
    "claude-opus-4": _OPUS_4,
    "claude-opus-4-1": _OPUS_4,
    "claude-opus-4-5": _OPUS_45,
    "claude-opus-4-6": Price(_anthropic(5.0, 25.0), 200_000, _anthropic(10.0, 37.5)),
    "claude-opus-4-7": _OPUS_45,
    "claude-opus-5": _OPUS_45,
    "claude-opus-5-5": Price(_anthropic(4.0, 20.0, 0.20)),
    # OpenAI (Codex)
    "gpt-5": Price(_openai(1.25, 0.125, 10.0)),
    "gpt-5-codex": Price(_openai(1.25, 0.125, 10.0)),
    "gpt-5-mini": Price(_openai(0.25, 0.025, 2.0)),
    "gpt-5-nano": Price(_openai(0.05, 0.005, 0.40)),
    "gpt-5.1": Price(_openai(1.25, 0.125, 10.0)),
    "gpt-5.1-codex": Price(_openai(1.25, 0.125, 10.0)),
    "gpt-5.1-codex-max": Price(_openai(1.25, 0.125, 10.0)),
    "gpt-5.1-codex-mini": Price(_openai(0.25, 0.025, 2.0)),
    "gpt-5.2": Price(_openai(1.75, 0.175, 14.0)),
    "gpt-5.2-codex": Price(_openai(1.75, 0.175, 14.0)),
    "gpt-5.3-codex": Price(_openai(1.75, 0.175, 14.0)),
    "gpt-5.4": Price(_openai(2.50, 0.25, 15.0)),
    "gpt-5.4-mini": Price(_openai(0.75, 0.075, 4.50)),
    "gpt-5.4-nano": Price(_openai(0.20, 0.02, 1.25)),
    "gpt-5.5": Price(_openai(5.0, 0.50, 30.0)),
}

_PROVIDER = re.compile(r"^(?:[a-z]+/)?(?:(?:us|eu|apac|global)\.)?(?:anthropic|openai)[./]")
_SUFFIX = re.compile(r"(?:\[1m\]|-v\d+(?::\d+)?|@[\w-]+)$")
_DATE = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


def normalise(model: str) -> str:
    """The table key a provider's model id stands for (lower case, wrappers and date removed)."""
    name = str(model or "").strip().lower()
    name = _PROVIDER.sub("", name)
    name = _SUFFIX.sub("", name)
    return _DATE.sub("", name)


def _num(value: Any, fallback: float) -> float:
    if isinstance(value, bool):
        return fallback
    try:
        got = float(value)
    except (TypeError, ValueError):
        return fallback
    return got if math.isfinite(got) and got >= 0 else fallback


def _rates(spec: Mapping[str, Any], base: Rates | None) -> Rates:
    """Rates from a zen.yaml mapping. A class it leaves out keeps `base`'s figure, scaled when it
    changes `input` (so a new input price keeps the model's cache ratios), or, with no base,
    follows Anthropic's multipliers."""
    inp = _num(spec.get("input"), base.input if base else 0.0)
    if base is not None and base.input > 0:
        scale = inp / base.input
        derived = Rates(inp, base.output, base.cache_read * scale, base.cache_write * scale,
                        base.cache_write_1h * scale)
    else:
        derived = _anthropic(inp, base.output if base else 0.0)
    return Rates(inp, _num(spec.get("output"), derived.output),
                 _num(spec.get("cache_read"), derived.cache_read),
                 _num(spec.get("cache_write"), derived.cache_write),
                 _num(spec.get("cache_write_1h"), derived.cache_write_1h))


def _override(spec: Mapping[str, Any], base: Price | None) -> Price:
    """A zen.yaml entry over the table's (`long_context: null` drops the tier)."""
    rates = _rates(spec, base.rates if base else None)
    if "long_context" not in spec:
        return Price(rates, base.long_above, base.long_rates) if base else Price(rates)
    long_spec = spec.get("long_context")
    if not isinstance(long_spec, Mapping):
        return Price(rates)
    above = int(_num(long_spec.get("above"), float(base.long_above if base else 0)))
    return Price(rates, above, _rates(long_spec, base.long_rates if base else rates))


def lookup(model: str, prices: Mapping[str, Any] | None = None) -> Price | None:
    """The price of `model`: zen.yaml's entry (merged over the table's), else the table's, else
    zen.yaml `default`; None when there is none of these."""
    prices = prices or {}
    key = normalise(model)
    base = TABLE.get(key)
    for name in (model, key):
        spec = prices.get(name)
        if isinstance(spec, Mapping) and name != "default":
            return _override(spec, base)
    if base is not None:
        return base
    default = prices.get("default")
    return _override(default, None) if isinstance(default, Mapping) else None


def known(model: str, prices: Mapping[str, Any] | None = None) -> bool:
    """Whether `model` has a price of its own (not the `default` fallback)."""
    prices = prices or {}
    key = normalise(model)
    return key in TABLE or any(isinstance(prices.get(n), Mapping) for n in (model, key) if n != "default")


def cost(model: str, tokens: Tokens, prices: Mapping[str, Any] | None = None,
         price: Price | None = None) -> float:
    """USD for one API call (0.0 when the model has no price at all)."""
    if price is None:
        price = lookup(model, prices)
    if price is None:
        return 0.0
    rates = price.rates
    if price.long_rates is not None and price.long_above and tokens.prompt > price.long_above:
        rates = price.long_rates
    micro = (tokens.input * rates.input + tokens.output * rates.output
             + tokens.cache_read * rates.cache_read + tokens.cache_write_5m * rates.cache_write
             + tokens.cache_write_1h * rates.cache_write_1h)
    return micro / 1_000_000
