"""A WebShop-style text shop: search and click over a product database, pages rendered as
their visible text joined with ` [SEP] `, one purchase ends the session.

Search is BM25 with `bm25s` (Lucene variant, k1 0.9, b 0.4, English stopwords, Porter stemming)
over the WebShop document recipe; the index is built once per product file and cached.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flowstate.engine.tools import Tool
from flowstate.errors import UsageError
from flowstate_bench.arena.shopping_score import Catalog

SEP = " [SEP] "
PRODUCT_WINDOW = 10
SEARCH_RETURN_N = 50
MAX_ROUNDS = 20
MAX_SAME_ACTION = 7
BUTTONS = ("back to search", "next >", "< prev", "description", "features", "reviews", "buy now")
ACTION = re.compile(r"search\[[^\]]*\]|click\[[^\]]*\]")


@dataclass(frozen=True)
class Item:
    asin: str
    title: str
    price: float
    price_text: str
    rating: str
    description: str
    features: str
    options: dict[str, list[str]]
    category_path: str = ""

    def document(self) -> str:
        """The WebShop index document: title, description, first bullet, options."""
        opts = " ".join(
            f"{k}: {', '.join(v[:-1])}, and {v[-1]}" if len(v) > 1 else f"{k}: {v[0]}"
            for k, v in self.options.items()
            if v
        )
        first = self.features.split("\n")[0] if self.features else ""
        return " ".join([self.title, self.description, first, opts]).lower()


def _price(pricing: Any, asin: str) -> tuple[float, str]:
    amounts = [
        float(re.sub(r"[^\d.]", "", p))
        for p in str(pricing or "").split("$")
        if re.sub(r"[^\d.]", "", p)
    ]
    if not amounts:
        return 0.0, "$0.00"
    if len(amounts) == 1:
        return amounts[0], f"${amounts[0]:.2f}"
    # WebShop draws a price inside a range; seeded by the ASIN so reruns agree.
    low, high = amounts[0], amounts[1]
    return round(random.Random(asin).uniform(low, high), 2), f"${low:.2f} to ${high:.2f}"


def _item(raw: dict[str, Any], paths: dict[str, str]) -> Item | None:
    asin = str(raw.get("asin", ""))
    if not asin or asin == "nan" or len(asin) > 10:
        return None
    price, price_text = _price(raw.get("pricing"), asin)
    small = raw.get("small_description") or ""
    features = "\n".join(small) if isinstance(small, list) else str(small)
    options = {
        str(name): [
            str(v.get("value", v) if isinstance(v, dict) else v).lower().replace("/", " | ")
            for v in values
        ]
        for name, values in (raw.get("customization_options") or {}).items()
    }
    rating = raw.get("average_rating")
    return Item(
        asin=asin.upper(),
        title=str(raw.get("name", "")),
        price=price,
        price_text=price_text,
        rating="N.A." if rating in (None, "", "nan") else str(rating),
        description=str(raw.get("full_description") or ""),
        features=features,
        options=options,
        category_path=paths.get(asin.upper(), str(raw.get("product_category") or "")),
    )


class ProductDB:
    """`items_shuffle.json` and `product_catalog/*.json` of a product-database folder."""

    def __init__(self, root: Path, cache_dir: Path | None = None) -> None:
        items = root / "items_shuffle.json"
        if not items.is_file():
            raise UsageError(f"--product-db {root} has no items_shuffle.json")
        self.root, self.cache_dir = root, cache_dir
        entries: list[dict[str, Any]] = []
        for catalog in sorted((root / "product_catalog").glob("*.json")):
            entries += json.loads(catalog.read_text(encoding="utf-8"))
        # The reward's lookup (first entry of an ASIN wins); the pages show the same paths.
        self.catalog = Catalog.of(entries)
        paths = dict(self.catalog.categories)
        raw = json.loads(items.read_text(encoding="utf-8"))
        self.items: dict[str, Item] = {}
        for r in raw:
            item = _item(r, paths)
            if item is not None:
                self.items.setdefault(item.asin, item)
        self.asins = list(self.items)
        self._retriever: Any = None
        self.fingerprint = hashlib.sha256(
            items.read_bytes()[:1_000_000] + str(items.stat().st_size).encode()
        ).hexdigest()[:16]

    def search(self, keywords: str) -> list[str]:
        import bm25s

        retriever = self._index()
        query = bm25s.tokenize(
            [keywords.lower()], stopwords="en", stemmer=_stemmer(), show_progress=False
        )
        n = min(SEARCH_RETURN_N, len(self.asins))
        docs, scores = retriever.retrieve(query, k=n, show_progress=False)
        return [self.asins[int(d)] for d, s in zip(docs[0], scores[0], strict=True) if s > 0]

    def _index(self) -> Any:
        if self._retriever is not None:
            return self._retriever
        import bm25s

        cached = self.cache_dir / f"bm25s-{self.fingerprint}" if self.cache_dir else None
        if cached is not None and (cached / "params.index.json").is_file():
            self._retriever = bm25s.BM25.load(str(cached))
            return self._retriever
        corpus = [self.items[a].document() for a in self.asins]
        tokens = bm25s.tokenize(corpus, stopwords="en", stemmer=_stemmer(), show_progress=False)
        retriever = bm25s.BM25(method="lucene", k1=0.9, b=0.4)
        retriever.index(tokens, show_progress=False)
        if cached is not None:
            cached.mkdir(parents=True, exist_ok=True)
            retriever.save(str(cached))
        self._retriever = retriever
        return retriever


def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


@dataclass(frozen=True)
class Turn:
    before: str
    action: str
    after: str
    done: bool


@dataclass
class WebShop:
    """One session's state machine: start -> results -> item -> sub-page -> done."""

    db: ProductDB
    instruction: str
    page: str = "start"
    keywords: str = ""
    results: list[str] = field(default_factory=list)
    page_no: int = 1
    asin: str = ""
    sub: str = ""
    chosen: dict[str, str] = field(default_factory=dict)
    purchased: str | None = None
    done: bool = False
    trace: list[Turn] = field(default_factory=list)

    def observation(self) -> str:
        head = ["WebShop"] if self.page == "start" else []
        head += ["Instruction:", self.instruction]
        if self.page == "start":
            return SEP.join([*head, "Search"])
        if self.page == "results":
            return SEP.join([*head, *self._results_page()])
        if self.page == "item":
            return SEP.join([*head, *self._item_page()])
        if self.page == "sub":
            item = self.db.items[self.asin]
            text = {
                "description": item.description,
                "features": item.features,
                "reviews": "No reviews.",
            }[self.sub]
            return SEP.join([*head, "Back to Search", "< Prev", text or "N.A."])
        return self._summary()

    def _results_page(self) -> list[str]:
        nodes = ["Back to Search", f"Page {self.page_no} (Total results: {len(self.results)})"]
        if self.page_no > 1:
            nodes.append("< Prev")
        nodes.append("Next >")
        start = (self.page_no - 1) * PRODUCT_WINDOW
        for asin in self.results[start : start + PRODUCT_WINDOW]:
            item = self.db.items[asin]
            nodes += [asin, item.title, item.price_text]
        return nodes

    def _item_page(self) -> list[str]:
        item = self.db.items[self.asin]
        nodes = ["Back to Search", "< Prev"]
        for name, values in item.options.items():
            nodes += [name, *values]
        price = f"Price: {item.price_text}"
        return [
            *nodes,
            item.title,
            price,
            f"Rating: {item.rating}",
            "Description",
            "Features",
            "Reviews",
            "Buy Now",
        ]

    def _summary(self) -> str:
        if self.purchased is None:
            return "WEBSHOPPLUS TASK COMPLETED\nPurchases Made: 0"
        item = self.db.items[self.purchased]
        return (
            "WEBSHOPPLUS TASK COMPLETED\nPurchases Made: 1\n"
            f"Purchase #1: {item.asin} (${item.price:.2f})"
        )

    def step(self, action: str) -> str:
        """Apply `search[...]` or `click[...]` and return the observation after it."""
        before = self.observation()
        if self.done:
            return "The session is over: nothing more can be done."
        self._apply(action)
        if len(self.trace) + 1 >= MAX_ROUNDS:
            self.done = True
        recent = [t.action for t in self.trace[-(MAX_SAME_ACTION - 1) :]]
        if len(recent) == MAX_SAME_ACTION - 1 and all(a == action for a in recent):
            self.done = True
        after = self.observation() if not self.done or self.page == "done" else self._summary()
        self.trace.append(Turn(before, action, after, self.done))
        return after

    def _apply(self, action: str) -> None:
        if action.startswith("search[") and action.endswith("]"):
            self.keywords = action[7:-1].lower()
            self.results = self.db.search(self.keywords)
            self.page, self.page_no = "results", 1
            return
        if not (action.startswith("click[") and action.endswith("]")):
            return
        self._click(action[6:-1].strip().lower())

    def _click(self, x: str) -> None:
        if x == "back to search":
            self.page = "start"
        elif self.page == "results" and x == "next >":
            if self.page_no * PRODUCT_WINDOW < len(self.results):
                self.page_no += 1
        elif self.page == "results" and x == "< prev" and self.page_no > 1:
            self.page_no -= 1
        elif self.page == "results" and x in self._on_page():
            self.page, self.asin, self.chosen = "item", x.upper(), {}
        elif self.page == "item" and x == "< prev":
            self.page = "results"
        elif self.page == "item" and x in ("description", "features", "reviews"):
            self.page, self.sub = "sub", x
        elif self.page == "item" and x == "buy now":
            self.purchased, self.page, self.done = self.asin, "done", True
        elif self.page == "item":
            for name, values in self.db.items[self.asin].options.items():
                if x in values:
                    self.chosen[name] = x
        elif self.page == "sub" and x == "< prev":
            self.page = "item"

    def _on_page(self) -> set[str]:
        start = (self.page_no - 1) * PRODUCT_WINDOW
        return {a.lower() for a in self.results[start : start + PRODUCT_WINDOW]}


class ShoppingEnv:
    """The tools of a shopping task; `begin` opens the next subtask's session."""

    def __init__(self, db: ProductDB) -> None:
        self.db = db
        self.shop: WebShop | None = None

    def begin(self, instruction: str) -> str:
        self.shop = WebShop(self.db, instruction)
        return self.shop.observation()

    def act(self, action: str) -> str:
        if self.shop is None:
            raise UsageError("no shopping session is open")
        match = ACTION.search(action)
        return self.shop.step(match.group(0) if match else action)

    def tools(self) -> list[Tool]:
        def search(keywords: str) -> str:
            """search[keywords]: look products up; returns the results page."""
            return self.act(f"search[{keywords}]")

        def click(target: str) -> str:
            """click[target]: a button, a product ASIN on the page or an option value."""
            return self.act(f"click[{target}]")

        return [Tool.from_function(search), Tool.from_function(click)]
