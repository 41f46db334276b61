"""Namespace-wide queries read the namespace label by label, each through an index: the label
list must hold every label the product creates nodes of (a label left out would be kept by a
forget of the whole namespace), and each label needs an index that starts with ``namespace``."""

from __future__ import annotations

import re
from pathlib import Path

from graph.cypher import query

ROOT = Path(__file__).resolve().parents[2]
CREATED = re.compile(r"\b(?:CREATE|MERGE) \(\w+:(\w+)")
LISTED = re.compile(r"MATCH \(n:(\w+)\) WHERE n\.namespace = \$namespace")
INDEXED = re.compile(r"FOR \(\w+:(\w+)\) (?:ON|REQUIRE) \(?\w+\.namespace\b")
NOT_NAMESPACED = {"SchemaMigration"}  # the schema's own record (graph/migrations.py)


def created_labels() -> set[str]:
    texts = [p.read_text() for p in (ROOT / "cypher" / "queries").glob("*.cypher")]
    texts += [p.read_text() for p in (ROOT / "graph").rglob("*.py")]
    return {label for text in texts for label in CREATED.findall(text)} - NOT_NAMESPACED


def test_every_label_the_product_creates_is_read_by_the_namespace_wide_queries() -> None:
    created = created_labels()
    assert {"Topic", "Message", "SuppressionSession", "ApiKey"} <= created  # the scan works
    assert set(LISTED.findall(query("delete_namespace"))) == created
    assert set(LISTED.findall(query("delete_namespace_data"))) == created - {"ApiKey"}
    assert set(LISTED.findall(query("count_namespace_nodes"))) == created - {"ApiKey"}


def test_every_such_label_has_an_index_starting_with_namespace() -> None:
    schema = "\n".join(p.read_text() for p in (ROOT / "cypher" / "schema").glob("*.cypher"))
    assert created_labels() <= set(INDEXED.findall(schema))
