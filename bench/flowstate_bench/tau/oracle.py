"""Scripted agents for offline runs: an ORACLE and a FORGETFUL one, served through litellm
(`ScriptedModel.policy`) so they drive the real FlowState engine or a baseline loop.

Both know the task's reference actions (that is what makes them scripted). What they may NOT
know is carried state: a change confirmed in a later turn was planned in turn 0, and its
arguments must be read back from the prompt, i.e. from the strategy's memory. The oracle
writes its plan where the strategy keeps things (a FlowState state, or its message to the
user) and reads it back: under FlowState it finds the plan state in the index and accesses it.
The forgetful agent never looks, so it calls the tool without the arguments it forgot.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from flowstate.engine.protocol import INDEX_ONCE
from flowstate.llm.client import LiteLLMClient
from flowstate.llm.scripted import ScriptedModel, unregister
from flowstate.models import ids
from flowstate_bench.reader import Opener
from flowstate_bench.tau.data import Action
from flowstate_bench.tau.env import TRANSFER_MESSAGE
from flowstate_bench.tau.plan import Plan
from flowstate_bench.tau.strategies import SUMMARY_SYSTEM

Message = dict[str, Any]
Style = Literal["flowstate", "loop"]
LOST = "I'm sorry, I no longer have the details of what we agreed. Could you repeat them?"
MAX_ACCESS = 8
SUMMARY_CHARS = 200  # Limits.max_summary_chars: the longest one-line summary the rules take


def plan_line(k: int, calls: list[Action]) -> str:
    payload = [{"name": a.name, "arguments": a.arguments} for a in calls]
    return f"PLAN {k}: {json.dumps(payload, ensure_ascii=False, sort_keys=True)}"


def short_plan_line(k: int, calls: list[Action]) -> str:
    """The plan as call lines, `name {arguments}` joined by ` | `: what fits a one-line
    summary more often than `plan_line`'s JSON."""
    said = " | ".join(f"{a.name} {_compact(a.arguments)}" for a in calls)
    return f"PLAN {k}: {said}"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def recall(text: str, k: int) -> list[dict[str, Any]] | None:
    """The calls planned for turn k, if a PLAN line for it is anywhere in `text` (as
    `plan_line` or `short_plan_line` writes it)."""
    found = re.findall(rf"^.*?PLAN {k}: (.*?)\s*$", text, flags=re.MULTILINE)
    for said in reversed(found):
        calls = _calls_of(said)
        if calls is not None:
            return calls
    return None


def _calls_of(said: str) -> list[dict[str, Any]] | None:
    """A PLAN line's calls, or None when it holds none (a summary naming only the calls)."""
    if said.startswith("["):
        try:
            return json.loads(said)
        except ValueError:
            return None
    decode, calls, at = json.JSONDecoder().raw_decode, [], 0
    while at < len(said):
        name = re.match(r"(\w+) ", said[at:])
        if name is None:
            return None
        try:
            arguments, end = decode(said, at + name.end())
        except ValueError:
            return None
        calls.append({"name": name.group(1), "arguments": arguments})
        at = end + len(" | ") if said.startswith(" | ", end) else end
        if at == end and at < len(said):
            return None
    return calls or None


class ScriptedAgent:
    """One task's scripted agent; the runner calls `begin_turn` before each user turn.

    `reader`: what it opens under FlowState comes only from the prompt text, ranked by lexical
    match with the user's turn (`flowstate_bench.reader`), not from knowing where the plan is;
    its actions stay the oracle's given what it opened. `one_step`: access and act in one step
    when the action does not need what is opened (here every action after an access needs
    the plan's arguments, so the agent waits either way)."""

    def __init__(
        self,
        name: str,
        plan: Plan,
        style: Style,
        forgetful: bool = False,
        reader: bool = False,
        one_step: bool = True,
    ) -> None:
        self.plan, self.style, self.forgetful = plan, style, forgetful
        self.reader = Opener() if reader else None
        self.one_step = one_step
        self.model = ScriptedModel.policy(name, self._reply)
        self.turn = 0
        self.found: dict[int, bool] = {}  # turn -> was its plan in what it was shown
        self._reset()

    def client(self) -> LiteLLMClient:
        return self.model.client()

    def close(self) -> None:
        unregister(self.model.name)

    def begin_turn(self, turn: int) -> None:
        self.turn = turn
        self._reset()

    def _reset(self) -> None:
        self.done = 0  # calls made in this turn
        self.gave_up = False
        self.accessed: set[str] = set()
        if self.reader is not None:
            self.reader.reset()

    # -- the policy -------------------------------------------------------------------------

    def _reply(self, messages: list[Message]) -> dict[str, Any]:
        text = "\n".join(str(m.get("content", "")) for m in messages)
        if messages and SUMMARY_SYSTEM in str(messages[0].get("content", "")):
            return {"summary": _keep_plans(text)}
        calls = self._calls(text)
        if calls is None and not self.forgetful and self.style == "flowstate":
            wanted = self._to_access(text)
            if wanted:
                self.accessed.update(wanted)
                # The next action is the planned call, which needs the plan's arguments.
                return {"access": wanted, "action": None}
        if self.turn > 0 and self.turn not in self.found and self.plan.segments[self.turn]:
            self.found[self.turn] = calls is not None
        if calls is None:
            return self._lost(text)
        if self.done < len(calls):
            call = calls[self.done]
            self.done += 1
            step = self._step(
                {"type": "tool", "name": call["name"], "arguments": call["arguments"]}
            )
            return self._keep_plan(messages, text, step)
        return self._final(text, calls)

    def _keep_plan(
        self, messages: list[Message], text: str, step: dict[str, Any]
    ) -> dict[str, Any]:
        """`step` opening the plan it read off an index line, where the protocol says later
        calls will not show the index: the turn's later steps read the plan again."""
        if self.style != "flowstate" or INDEX_ONCE.strip() not in str(messages[0]["content"]):
            return step
        tid = re.escape(self.plan.task.id)
        line = rf"^  (r\d+\.plan_{self.turn}) \[decision\] Step {self.turn} of task {tid}:"
        listed = [i for i in re.findall(line, text, re.MULTILINE) if i not in self.accessed]
        if not listed:
            return step
        self.accessed.add(listed[-1])
        return {**step, "access": [listed[-1]]}

    def _calls(self, text: str) -> list[dict[str, Any]] | None:
        if self.turn == 0:
            return [{"name": a.name, "arguments": a.arguments} for a in self.plan.segments[0]]
        if self.forgetful:
            return None
        if self.style == "flowstate":  # one memory may hold other tasks' plans: not theirs
            text = _own_task(text, self.plan.task.id)
        return recall(text, self.turn)

    def _to_access(self, text: str) -> list[str]:
        """FlowState: the plan state's id from the index, else collapsed requests to open;
        the reader: what its lexical ranking picks."""
        if self.reader is not None:
            return self.reader.pick(text, self.plan.turns[self.turn])
        tid = re.escape(self.plan.task.id)
        ids = re.findall(
            rf"(r\d+\.plan_{self.turn}) \[decision\] Step {self.turn} of task {tid}:", text
        )
        if ids:
            return [ids[-1]] if ids[-1] not in self.accessed else []
        collapsed = re.findall(r"^(r\d+): .*collapsed: access r\d+\]$", text, re.MULTILINE)
        # The oldest requests may be folded into one range line: "r1-r40: 40 older requests".
        for first, last in re.findall(r"^r(\d+)-r(\d+): .*folded", text, re.MULTILINE):
            collapsed = [f"r{n}" for n in range(int(first), int(last) + 1)] + collapsed
        fresh = [r for r in reversed(collapsed) if r not in self.accessed]
        return fresh[:MAX_ACCESS]

    def _lost(self, text: str) -> dict[str, Any]:
        """Without the plan: try the step's first tool with what is at hand (nothing), then
        apologise."""
        segment = self.plan.segments[self.turn]
        if segment and not self.gave_up:
            self.gave_up = True
            return self._step({"type": "tool", "name": segment[0].name, "arguments": {}})
        return self._finish(text, LOST, [])

    def _final(self, text: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
        lines = []
        if any(c["name"] == "transfer_to_human_agents" for c in calls):
            lines.append(TRANSFER_MESSAGE)
        if self.turn == 0 and self.plan.last > 0:
            lines.append("Here is what I will do, one change at a time, once you confirm:")
            lines += [plan_line(k, self.plan.segments[k]) for k in range(1, self.plan.last + 1)]
            lines.append("Shall I proceed with the first change (yes)?")
        elif self.turn < self.plan.last:
            lines.append(f"Done with change {self.turn}. Shall I proceed with the next one?")
        else:
            lines.append("All done.")
        if self.turn == self.plan.last and self.plan.task.communicate_info:
            lines.append("For your information: " + "; ".join(self.plan.task.communicate_info))
        return self._finish(text, "\n".join(lines), calls)

    # -- output formats ---------------------------------------------------------------------

    def _step(self, action: dict[str, Any]) -> dict[str, Any]:
        return {"action": action} if self.style == "flowstate" else action

    def _finish(self, text: str, answer: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
        if self.style == "loop":
            return {"type": "final", "answer": answer}
        summary = f"Task {self.plan.task.id}, turn {self.turn}"
        delta = self._delta(text, calls) if calls or self.turn == 0 else []
        return {"delta": delta, "action": {"type": "final", "answer": answer, "summary": summary}}

    def _delta(self, text: str, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """What the oracle records in FlowState: the plan (turn 0), what each later turn did,
        with the observations as evidence. Who the user is and what they asked stay in the
        request's own text, which the request's id opens."""
        tid, k = self.plan.task.id, self.turn
        observations = _own_observations(text)
        names = ", ".join(c["name"] for c in calls) or "nothing"
        ops: list[dict[str, Any]] = []
        if k == 0:
            for j in range(1, self.plan.last + 1):
                planned, head = self.plan.segments[j], f"Step {j} of task {tid}: "
                # The plan itself where it fits the one-line summary: a later turn then reads
                # it off its index line, with no call to open it; else the calls' names.
                short = short_plan_line(j, planned)
                fits = len(head + short) <= SUMMARY_CHARS
                summary = head + (short if fits else ", ".join(a.name for a in planned))
                ops.append(_add(f"plan_{j}", "decision", summary, plan_line(j, planned)))
        if observations:
            done = f"Task {tid} turn {k} ran: {names}"
            detail = "\n".join(json.dumps(c, ensure_ascii=False, sort_keys=True) for c in calls)
            shown = re.findall(rf"(r\d+\.plan_{k}) \[decision\] Step {k} of task ", text)
            plans = sorted({a for a in self.accessed if ids.is_state_id(a)} | set(shown[-1:]))
            relations = [{"type": "DERIVED_FROM", "target": a} for a in plans]
            ops.append(
                _add(
                    f"ran_{k}", "artifact", done, detail, evidence=observations, relations=relations
                )
            )
        return ops


def _add(key: str, category: str, summary: str, content: str, **extra: Any) -> dict[str, Any]:
    one_line = " ".join(summary.split())
    return {
        "op": "add",
        "key": key,
        "category": category,
        "summary": one_line[:SUMMARY_CHARS],
        "content": content or summary,
        **{k: v for k, v in extra.items() if v},
    }


def _own_observations(text: str) -> list[str]:
    """This request's observation ids, from the engine's "Actions so far" section."""
    current = re.search(r"# User request \((r\d+)\)", text)
    if current is None:
        return []
    rid = re.escape(current.group(1))
    return list(dict.fromkeys(re.findall(rf"^\s+- ({rid}\.o\d+) ", text, re.MULTILINE)))


def _own_task(text: str, tid: str) -> str:
    """`text` without another task's states: a line that names another task, and the lines
    of its state block under it (its content and relations)."""
    kept, other = [], False
    for line in text.splitlines():
        named = re.search(r"\bof task (\S+?):", line)
        if named:
            other = named.group(1) != tid
        elif not line.startswith("  "):
            other = False  # the block of the last named state ended
        if not other:
            kept.append(line)
    return "\n".join(kept)


def _keep_plans(text: str) -> str:
    """The scripted summariser keeps every PLAN line it is shown, and nothing else."""
    plans = re.findall(r"PLAN \d+: \[.*\]\s*$", text, flags=re.MULTILINE)
    return "\n".join(dict.fromkeys(p.strip() for p in plans)) or "(nothing pending)"
