"""bundled_shopping's step reward, rule for rule as MemoryArena's `--no-llm` reward code.

- No purchase: 0. The purchased ASIN equal to the target's after upper-casing: 1.
- Otherwise `r_type * (m + r_price) / (len(attributes) + [r_price defined])`, where m counts the
  attributes whose normalised text (lowercase, `-` and `/` to spaces, spaces collapsed) is a
  non-empty substring of the purchased product's normalised name; an attribute that
  normalises to nothing never matches. `r_price` is defined only when the step has a price
  bound: 1 within the bounds, 0 outside or without a price.
- Names and category paths come from the product catalog (`product_catalog/*.json`), the
  first entry of an ASIN winning; a product the catalog lacks has no name. A name the step's
  result carries (the runner records the title the agent saw, and the target's name) wins over
  the catalog's, for the attributes and the name similarity alike; categories always come from
  the catalog.
- The price is a number (the runner reads it from the purchase summary, see
  `shopping_summary`); with a bound it is compared as it stands, a missing price is outside
  every bound, and an upper bound below the lower one holds no price.

Success is the code's `reward == 1.0`, so a product that is not the target but carries every
attribute (and a close enough name) succeeds. The paper counts the target product only; that
reading is `scoring="paper"`.

>>> normalise("Gold-Plated / 6 FT")
'gold plated 6 ft'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from flowstate_bench.arena.choices import Scoring
from flowstate_bench.arena.shopping_summary import purchase_in


def normalise(text: str) -> str:
    return " ".join(re.sub(r"[-/]", " ", text.lower()).split())


def tokens(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", normalise(text)))


@dataclass(frozen=True)
class Catalog:
    """ASIN (upper case) -> product name and `›` category path, as the reward looks them up."""

    names: Mapping[str, str]
    categories: Mapping[str, str]

    @classmethod
    def of(cls, entries: Iterable[Mapping[str, Any]]) -> Catalog:
        """From catalog entries `{asin, name, product_category}`: the first non-empty value of
        an ASIN wins."""
        names: dict[str, str] = {}
        categories: dict[str, str] = {}
        for entry in entries:
            if not entry.get("asin"):
                continue
            asin = str(entry["asin"]).strip().upper()
            if entry.get("product_category"):
                categories.setdefault(asin, str(entry["product_category"]))
            if entry.get("name"):
                names.setdefault(asin, str(entry["name"]))
        return cls(names, categories)


def name_similarity(target: str | None, bought: str | None) -> float:
    if not target or not bought:
        return 0.0
    wanted = tokens(target)
    return len(wanted & tokens(bought)) / len(wanted) if wanted else 0.0


def _segments(path: str | None) -> set[str]:
    return {s.strip().lower() for s in (path or "").split("›") if s.strip()}


def category_similarity(target: str | None, bought: str | None) -> float:
    wanted = _segments(target)
    return len(wanted & _segments(bought)) / len(wanted) if wanted else 0.0


def type_reward(name_sim: float, category_sim: float) -> float:
    r_type = 1.0 if category_sim >= 0.5 or name_sim > 0.2 else 0.5
    if name_sim < 0.1:
        r_type = 0.1
    return 0.0 if name_sim == 0.0 else r_type


def price_reward(price: float | None, bounds: Mapping[str, Any]) -> float | None:
    upper, lower = bounds.get("price_upper"), bounds.get("price_lower")
    if upper is None and lower is None:
        return None
    if price is None:
        return 0.0
    within = (upper is None or price <= upper) and (lower is None or price >= lower)
    return 1.0 if within else 0.0


def attribute_matches(attributes: Sequence[str], name: str | None) -> int:
    text = normalise(name or "")
    return sum(1 for a in attributes if (wanted := normalise(a)) and wanted in text)


@dataclass(frozen=True)
class StepReward:
    reward: float
    success: bool  # as the scoring asked for: the code's reward == 1.0, or the paper's ASIN
    reason: str  # asin_match, no_purchase or computed
    num_attr_matches: int
    r_price: float | None
    r_type: float
    name_similarity: float
    category_similarity: float
    base_reward: float


@dataclass(frozen=True)
class Step:
    """A gold step and what was bought at it (None or "" for no purchase). `purchased_name`
    and `target_name` are the names the step's result carries, if any."""

    target_asin: str
    attributes: Sequence[str]
    purchased_asin: str | None
    purchased_price: float | None = None
    price_bounds: Mapping[str, Any] | None = None
    purchased_name: str | None = None
    target_name: str | None = None

    @classmethod
    def of(
        cls,
        gold: Mapping[str, Any],
        result: Mapping[str, Any],
        price_bounds: Mapping[str, Any] | None = None,
    ) -> Step:
        """From a gold answer `{target_asin, attributes}` and the step's result as the runner
        records it: `{purchased_asin, purchased_price}`, or `{purchase_summary}` (the final
        observation, read by `purchase_in`), with optional `purchased_name`, `target_name`
        and `target_asin`, which win over the gold's and the catalog's when not empty."""
        asin, price = result.get("purchased_asin"), result.get("purchased_price")
        if "purchase_summary" in result:
            asin, price = purchase_in(str(result["purchase_summary"]))
        return cls(
            result.get("target_asin") or gold["target_asin"],
            gold.get("attributes") or [],
            asin,
            price,
            price_bounds,
            result.get("purchased_name"),
            result.get("target_name"),
        )


def step_reward(step: Step, catalog: Catalog, scoring: Scoring = "code") -> StepReward:
    bought = str(step.purchased_asin).upper() if step.purchased_asin else None
    target = str(step.target_asin).upper() if step.target_asin else None
    attributes = list(step.attributes or [])
    # An empty name in the result falls back to the catalog's, as the code's `or` does.
    bought_name = step.purchased_name or (catalog.names.get(bought) if bought else None)
    target_name = step.target_name or catalog.names.get(target or "")
    matched = attribute_matches(attributes, bought_name)
    r_price = price_reward(step.purchased_price, step.price_bounds or {})
    name_sim = name_similarity(target_name, bought_name)
    cat_sim = category_similarity(
        catalog.categories.get(target or ""), catalog.categories.get(bought or "")
    )
    r_type = type_reward(name_sim, cat_sim)
    denominator = len(attributes) + (r_price is not None)
    base = (matched + (r_price or 0.0)) / denominator if denominator else 0.0
    reward, reason = base * r_type, "computed"
    if not bought:
        reward, reason = 0.0, "no_purchase"
    elif bought == target:
        reward, reason = 1.0, "asin_match"
    success = reason == "asin_match" if scoring == "paper" else reward == 1.0
    return StepReward(reward, success, reason, matched, r_price, r_type, name_sim, cat_sim, base)
