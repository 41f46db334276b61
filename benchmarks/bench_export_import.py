"""Export and import throughput on a LoCoMo conversation (docs/export.md).

    .venv/bin/python benchmarks/bench_export_import.py [--sample conv-42] [--data ...]

The conversation is replayed with its session dates through the production path (what
``sheriff ingest`` does: ``Conversation.append`` with the sleep policy), untimed. Then, timed:

1. export to JSON Lines (without vectors, then with them);
2. import of each document into a fresh namespace, from the text: validation of every line, id
   planning, then the one write transaction. Without vectors every topic is embedded again, by
   an embedder with a cold cache (a second container: the replay's cache would otherwise hold
   every one-liner); with vectors none is.

Throughput is messages of the conversation per second of wall time (other records ride along:
the counts are printed). The round trip is checked: the re-exported document must equal the
first (ids aside). The machine is shared: compare figures from one run.
"""

from __future__ import annotations

import argparse
import json
import time
import uuid
from pathlib import Path
from typing import Any

from api.container import Container
from api.settings import Settings
from service.importer import parse_document
from sleepwake.replay import locomo_sessions

ID_FIELDS = {"message": "message_id", "topic": "topic_id", "event": "event_id",
             "wake_packet": "packet_id", "skill_run": "run_id"}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=Path("../shared/data/locomo/locomo-dev.json"))
    parser.add_argument("--sample", default="conv-42")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    sample = next(s for s in json.loads(args.data.read_text()) if s["sample_id"] == args.sample)
    source = Container(Settings())
    source.migrate()
    source.embedder.embed(["warm-up"])
    spaces = [f"bench-export-{uuid.uuid4().hex[:8]}" for _ in range(3)]
    try:
        turns = _replay(source, spaces[0], sample)
        plain, plain_s = _export(source, spaces[0], vectors=False)
        rich, rich_s = _export(source, spaces[0], vectors=True)
        counts = json.loads(plain.splitlines()[-1])["counts"]
        print(f"conversation {args.sample}: {turns} messages; export holds {counts}")
        for label, text, took in (("export", plain, plain_s), ("export +vectors", rich, rich_s)):
            print(f"{label}: {took:.2f} s = {turns / took:.0f} messages/s "
                  f"({len(text) / 1e6:.1f} MB, {len(text.splitlines()) / took:.0f} lines/s)")  # fmt: skip
        target = Container(Settings())  # a cold embedding cache, as on another server
        target.embedder.embed(["warm-up"])
        for label, text, space in (("import", plain, spaces[1]),
                                   ("import +vectors", rich, spaces[2])):  # fmt: skip
            report, took = _import(target, space, text)
            print(f"{label}: {took:.2f} s = {turns / took:.0f} messages/s "
                  f"(embedded {report.embedded} topics, vectors used {report.vectors_imported})")  # fmt: skip
        again, _ = _export(target, spaces[1], vectors=False)
        same = _normalised(again) == _normalised(plain, _ids(target, plain, spaces[1]))
        print(f"round trip export -> import -> export: {'same document' if same else 'DIFFERS'}")
        target.close()
    finally:
        if not args.keep:
            for space in spaces:
                source.forget.store.delete_namespace(space)
        source.close()


def _replay(c: Container, namespace: str, sample: dict[str, Any]) -> int:
    started = time.perf_counter()
    turns = 0
    for _, messages in locomo_sessions(sample):
        c.conversation.append(namespace, messages)
        turns += len(messages)
    print(
        f"replayed {turns} messages with the sleep policy in {time.perf_counter() - started:.0f} s"
    )
    return turns


def _export(c: Container, namespace: str, vectors: bool) -> tuple[str, float]:
    started = time.perf_counter()
    text = "".join(c.exporter.lines(namespace, vectors=vectors))
    return text, time.perf_counter() - started


def _import(c: Container, namespace: str, text: str) -> tuple[Any, float]:
    started = time.perf_counter()
    report = c.importer.run(namespace, parse_document(text.splitlines()))
    took = time.perf_counter() - started
    refused = sum(k.refused for k in report.counts.values())
    assert refused == 0, report.refused
    return report, took


def _ids(c: Container, text: str, target: str) -> dict[str, str]:
    rows = [json.loads(line) for line in text.splitlines()]
    remap = c.importer.import_id
    return {r[ID_FIELDS[r["kind"]]]: remap(target, r["kind"], r[ID_FIELDS[r["kind"]]])
            for r in rows if r["kind"] in ID_FIELDS}  # fmt: skip


def _normalised(text: str, ids: dict[str, str] | None = None) -> dict[str, list[str]]:
    def rename(value: Any) -> Any:
        if isinstance(value, str):
            return (ids or {}).get(value, value)
        if isinstance(value, list):
            return [rename(v) for v in value]
        if isinstance(value, dict):
            return {k: rename(v) for k, v in value.items()}
        return value

    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        record = json.loads(line)
        if record["kind"] == "header":
            continue
        out.setdefault(record["kind"], []).append(json.dumps(rename(record), sort_keys=True))
    return {k: sorted(v) for k, v in out.items()}


if __name__ == "__main__":
    main()
