"""Reading a FlowState prompt back, for scripted policies.

A scripted policy sees only what a real model would see: the prompt text. This parser turns
the sections `flowstate.engine.prompt` writes into lookups, so a policy can find state ids in
the index and read revealed content, and fails visibly if memory did not deliver.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from flowstate.engine.protocol import INDEX_ONCE

_INDEX_LINE = re.compile(
    r"^  (r\d+)\.([a-z][a-z0-9_]*) \[(\w+)\] (.*?)(?: content: (.*?))?"
    r"(?:  \(SUPERSEDED by ([^,\s)]+)(?:, \w+)?\))?$",
    re.M,
)
# A revealed state: its category and summary are left off while its index line shows.
_REVEALED = re.compile(
    r"^- (r\d+)\.([a-z][a-z0-9_]*)(?: \[\w+\] (.*?))?"
    r"(?: \(SUPERSEDED by ([^:\s]+): stale, do not rely on it\))?\n  content: (.*)$",
    re.M,
)
_OWN = re.compile(r"^- (r\d+)\.([a-z][a-z0-9_]*) \[\w+\] .*\n  content: (.*)$", re.M)
_COLLAPSED = re.compile(r"^(r\d+): .*\[\d+ states?; collapsed: access \1\]$", re.M)
_OBSERVATION = re.compile(r"^  - (r\d+\.o\d+) (\w+)\(.*?\) \[(ok|error)\]\n  output: (.*)$", re.M)


@dataclass
class PromptView:
    request_id: str
    request: str
    step: int
    # id -> key, summary, superseded_by
    index: dict[str, dict[str, str | None]] = field(default_factory=dict)
    revealed: dict[str, str] = field(default_factory=dict)  # id -> content
    inline: dict[str, str] = field(default_factory=dict)  # id -> content its index line shows
    own: dict[str, str] = field(default_factory=dict)  # key -> content
    observations: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (tool, out)
    rejections: str = ""
    collapsed: list[str] = field(default_factory=list)  # request ids not opened yet
    read: set[str] = field(default_factory=set)  # past states whose content was read
    index_once: bool = False  # the protocol says later calls do not show the index again

    def current(self, key: str) -> str | None:
        """The id of the newest state with this key that nothing supersedes."""
        found = [
            sid
            for sid, line in self.index.items()
            if line["key"] == key and not line["superseded_by"]
        ]
        return max(found, key=lambda s: int(s.split(".")[0][1:]), default=None)

    def content(self, key: str) -> Any:
        """Revealed content of the current state with this key, parsed as JSON."""
        sid = self.current(key)
        text = None if sid is None else self.revealed.get(sid, self.inline.get(sid))
        if sid is None or text is None:
            raise LookupError(f"{key} is not revealed")
        self.read.add(sid)
        try:
            return json.loads(text)
        except ValueError:
            return text  # a content that is just its text

    def summary(self, key: str) -> str:
        """The index line's summary of the current state with this key."""
        sid = self.current(key)
        if sid is None:
            raise LookupError(f"the index lists no current {key}")
        return str(self.index[sid]["summary"])

    def last_output(self, tool: str) -> Any:
        outputs = [out for t, out in self.observations.values() if t == tool]
        if not outputs:
            raise LookupError(f"no {tool} output yet")
        return json.loads(outputs[-1])

    def last_observation(self, tool: str) -> str:
        return [oid for oid, (t, _) in self.observations.items() if t == tool][-1]


def parse(messages: list[dict[str, Any]]) -> PromptView:
    text = messages[-1]["content"]
    request = re.search(r"^# User request \((r\d+)\)\n(.*?)(?=\n\n# |\n\nStep )", text, re.M | re.S)
    step = re.search(r"^Step (\d+) of \d+", text, re.M)
    if request is None or step is None:
        raise ValueError("not a FlowState prompt")
    view = PromptView(request.group(1), request.group(2), int(step.group(1)))
    view.index_once = INDEX_ONCE.strip() in messages[0]["content"]
    # Index lines and the state lists of opened (collapsed) requests share one format.
    for rid, key, _cat, summary, content, superseded in _INDEX_LINE.findall(text):
        view.index[f"{rid}.{key}"] = {
            "key": key,
            "summary": summary,
            "superseded_by": superseded or None,
        }
        if content:  # a short content is on its index line: read without opening it
            view.inline[f"{rid}.{key}"] = content
    for rid, key, summary, superseded, content in _REVEALED.findall(
        _section(text, "Revealed past states")
    ):
        view.revealed[f"{rid}.{key}"] = content
        if summary:  # no index line in this prompt says it: the revealed head does
            view.index.setdefault(
                f"{rid}.{key}",
                {"key": key, "summary": summary, "superseded_by": superseded or None},
            )
    for _rid, key, content in _OWN.findall(_section(text, "States of this request")):
        view.own[key] = content
    for oid, tool, _status, output in _OBSERVATION.findall(text):
        view.observations[oid] = (tool, output)
    opened = set(re.findall(r"^(r\d+):$", text, re.M))
    view.collapsed = [r for r in _COLLAPSED.findall(text) if r not in opened]
    if "# Rejected at your previous step" in text:
        view.rejections = text.split("# Rejected at your previous step", 1)[1]
    return view


def _section(text: str, title: str) -> str:
    """One `## title` section of the Active State ("" when the prompt has none)."""
    found = re.search(rf"^## {re.escape(title)}\b.*?\n(.*?)(?=^## |^# |\Z)", text, re.M | re.S)
    return found.group(1) if found else ""
