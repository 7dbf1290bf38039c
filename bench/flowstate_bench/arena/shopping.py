"""bundled_shopping: six purchases per bundle, each step's constraints refer to earlier ones."""

from __future__ import annotations

import re
from typing import Any

from flowstate.engine.tools import Tool
from flowstate.models.records import Usage
from flowstate_bench.arena.data import ArenaTask
from flowstate_bench.arena.domain import Call, Scored
from flowstate_bench.arena.shopping_env import ProductDB, ShoppingEnv, WebShop
from flowstate_bench.arena.shopping_score import Scoring, Step, step_reward

POLICY = (
    "You shop in a text web store, one product per session. Act with the tools: search "
    "(keywords) and click (a button label, a product ASIN shown on the page, or an option "
    "value shown on the page). Follow the step's goal and its compatibility and Avoid notes, "
    "which refer to the items bought in earlier steps. Buy exactly one item with click "
    "'Buy Now', then answer with the ASIN you bought."
)
ASIN = re.compile(r"\bB0[A-Z0-9]{8}\b")


def split_question(question: str, k: int) -> tuple[str, str]:
    """(the global-rules preamble, the `Product k:` section) of a question."""
    at = question.find(f"Product {k}:")
    if at < 0:
        return "", question
    return question[: question.find("Product ")], question[at:]


class ShoppingTask:
    def __init__(self, task: ArenaTask, db: ProductDB, scoring: Scoring = "code") -> None:
        self.task, self.db, self.scoring = task, db, scoring
        self.usage = Usage()  # its tools call no model
        self.env = ShoppingEnv(db)
        self._tools = self.env.tools()

    def tools(self) -> list[Tool]:
        return self._tools

    def base_chunks(self) -> list[str]:
        return []

    def base_request(self) -> str | None:
        return None

    def prompt(self, k: int) -> str:
        preamble, _ = split_question(self.task.questions[0], 1)
        _, section = split_question(self.task.questions[k - 1], k)
        n = len(self.task)
        header = (
            f"Current step: product {k} of {n}. Buy only this item, with one purchase; "
            "earlier steps are not restated.\n\n"
        )
        self.env.begin(header + section)
        return preamble + header + section

    def chunks(self, k: int, answer: str) -> list[str]:
        assert self.env.shop is not None
        return [
            f"Step {t}:\nUser Instruction: {turn.before}\nAgent Action: {turn.action}\n"
            f"Env Observation: {turn.after}\nDone: {turn.done}"
            for t, turn in enumerate(self.env.shop.trace, 1)
        ]

    def gold_chunks(self, j: int) -> list[str]:
        """One synthetic turn: the target's item page, then its purchase."""
        _, section = split_question(self.task.questions[j - 1], j)
        shop = WebShop(self.db, section, page="item", asin=self._target(j))
        if shop.asin not in self.db.items:
            return [
                f"Step 1:\nAgent Action: click[Buy Now]\nEnv Observation: Purchase #1: {shop.asin}"
            ]
        shop.step("click[Buy Now]")
        turn = shop.trace[0]
        return [
            f"Step 1:\nUser Instruction: {turn.before}\nAgent Action: {turn.action}\n"
            f"Env Observation: {turn.after}\nDone: {turn.done}"
        ]

    def note(self, k: int, answer: str) -> str:
        bought = self._bought()
        if bought is None:
            return f"Step {k}: nothing was bought."
        item = self.db.items.get(bought)
        title = item.title if item else ""
        return f"Step {k}: {title}. Purchase #1: {bought}. {answer}"

    def _bought(self) -> str | None:
        return self.env.shop.purchased if self.env.shop is not None else None

    def outcome(self, k: int, answer: str) -> str:
        bought = self._bought()
        return f"PURCHASED {bought}" if bought else "NO PURCHASE"

    def score(self, answers: list[str]) -> Scored:
        """Each step as MemoryArena's reward code scores it, names and categories from the
        product catalog; no price bound (the HF rows have none)."""
        passed, graded = [], []
        for answer, gold in zip(answers, self.task.answers, strict=False):
            step = Step(gold["target_asin"], gold.get("attributes") or [], _purchase(answer))
            reward = step_reward(step, self.db.catalog, self.scoring)
            passed.append(reward.success)
            graded.append(reward.reward)
        return Scored(passed, graded)

    def gold_fact(self, j: int) -> str:
        return f"Purchase #1: {self._target(j)}"

    def _target(self, k: int) -> str:
        return str(self.task.answers[k - 1]["target_asin"]).upper()

    def next_call(self, k: int, good: bool, text: str, done: int) -> Call | None:
        target = self._target(k)
        if done == 0:
            return _call("search", keywords=self._keywords(target))
        if done == 1:
            pick = target if good else _other(text, target)
            return _call("click", target=pick) if pick else None
        if done == 2:
            return _call("click", target="Buy Now")
        return None

    def _keywords(self, asin: str) -> str:
        item = self.db.items.get(asin)
        return " ".join((item.title if item else asin).lower().split()[:8])

    def final(self, k: int, good: bool, text: str) -> str:
        bought = ASIN.findall(text.split("Purchase #1:")[-1]) if "Purchase #1:" in text else []
        return f"Bought {bought[0]}." if bought else "Nothing bought."


def _other(text: str, target: str) -> str | None:
    """The forgetful pick: the first result on the last results page that is not the target."""
    page = text.rsplit("Total results:", 1)[-1] if "Total results:" in text else ""
    return next((a for a in ASIN.findall(page) if a != target), None)


def _purchase(answer: str) -> str | None:
    """The ASIN of an `outcome` record."""
    found = re.match(r"PURCHASED (\S+)$", answer)
    return found.group(1).upper() if found else None


def _call(name: str, **arguments: Any) -> Call:
    return {"name": name, "arguments": arguments}
