"""The Browser extras: saved queries compile and run, the style file covers every label."""

from __future__ import annotations

import re

import pytest

from flowstate.models import Category, RelationType
from flowstate.store.catalog import cypher_dir

pytestmark = pytest.mark.neo4j

SAVED = sorted((cypher_dir() / "saved").glob("*.cypher"))


def test_there_are_saved_queries():
    assert {p.stem for p in SAVED} >= {"request_states", "evidence_chain", "namespace"}


@pytest.mark.parametrize("path", SAVED, ids=[p.stem for p in SAVED])
def test_saved_query_documents_its_parameters_and_runs(path, repo, make, raw):
    text = path.read_text()
    header = "\n".join(line for line in text.splitlines() if line.startswith("//"))
    for name in set(re.findall(r"\$([a-z_]+)", text)):
        assert f":param {name} =>" in header, f"{path.name} does not document ${name}"
    raw.rows("EXPLAIN " + text)
    repo.commit(make.bundle(1, states=["a"], observations=1, evidence=[("r1.a", "r1.o1")]))
    repo.commit(
        make.bundle(2, states=["b"], relations=[(RelationType.DERIVED_FROM, "r2.b", "r1.a")])
    )
    rows = raw.rows(text, namespace=repo.namespace, id="r2.b" if "evidence" in path.stem else "r2")
    assert rows


def test_style_file_colours_every_label():
    grass = (cypher_dir() / "browser" / "flowstate.grass").read_text()
    others = ["Request", "Observation", "ActionDecision", "Draft"]
    for label in [c.label for c in Category] + others:
        assert re.search(rf"node\.{label} \{{[^}}]*color:[^}}]*caption:", grass), label


def test_style_file_is_rules_only_and_captions_show_ids():
    """Browser's grass parser takes no comments: a header comment made it drop the first rule
    (`node`). Two states of the same key must not look identical, so captions show the id."""
    grass = (cypher_dir() / "browser" / "flowstate.grass").read_text()
    rule = r"\s*[A-Za-z][\w.]*\s*\{(?:'[^']*'|[^{}'])*\}\s*"  # braces only in quoted values
    assert re.fullmatch(rf"({rule})+", grass)
    assert "/*" not in grass and "//" not in grass
    assert grass.lstrip().startswith("node {")
    for label in ["State", *(c.label for c in Category)]:
        found = re.search(rf"node\.{label} \{{((?:'[^']*'|[^{{}}'])*)\}}", grass)
        assert found and "caption: '{id}'" in found.group(1), label
