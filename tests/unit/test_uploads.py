"""Uploads without a server: the spool moves to disk past its memory share and refuses a blank
body; one import per namespace; the import thread runs at a lower priority and hands back its
result or its error; an import commit splits into bounded batches in reference order."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from datetime import UTC, datetime
from typing import IO, Any

import pytest
from starlette.requests import Request

from api.uploads import (
    SPOOL_MEMORY_BYTES,
    ImportSlots,
    ImportStatus,
    in_background,
    receive_import,
    spool_body,
    spooled,
)
from graph.errors import AlreadyRunning, ValidationFailed
from graph.models import Message, TopicEdge
from graph.transfer import ImportCommit
from service.importer import parse_document

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _request(chunks: list[bytes]) -> Request:
    pending = [{"type": "http.request", "body": c, "more_body": True} for c in chunks]
    pending.append({"type": "http.request", "body": b"", "more_body": False})

    async def receive() -> dict[str, Any]:
        return pending.pop(0)

    return Request({"type": "http", "method": "POST", "headers": []}, receive)


def test_a_large_upload_is_spooled_to_disk_and_read_back_whole() -> None:
    chunk = b"x" * 65_536
    count = SPOOL_MEMORY_BYTES // len(chunk) + 2
    slots = ImportSlots()
    with slots.claim("ns") as status, spooled() as spool:
        asyncio.run(spool_body(_request([chunk] * count), spool, status))
        assert spool._rolled  # type: ignore[attr-defined]  # on disk, not in memory
        assert status.received_bytes == count * len(chunk)
        assert spool.read() == chunk * count


def test_a_blank_upload_is_refused() -> None:
    with spooled() as spool, pytest.raises(ValidationFailed, match="body: empty"):
        asyncio.run(spool_body(_request([b"  \n", b"\r\n"]), spool, ImportSlots().status("n")))


def test_one_import_per_namespace_and_its_status() -> None:
    slots = ImportSlots()
    with slots.claim("a") as status:
        status.phase, status.written, status.total = "writing", 500, 2000
        refused = pytest.raises(AlreadyRunning, match=r"already running \(500 of 2000 records")
        with refused, slots.claim("a"):
            pass
        with slots.claim("b"):  # another namespace is not held
            assert slots.status("b").running
        assert slots.status("a").written == 500
    assert not slots.status("a").running
    with slots.claim("a"):  # free again
        pass


def test_the_import_thread_runs_at_a_lower_priority_and_returns_its_result() -> None:
    own = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    def work() -> tuple[int, str]:
        tid = threading.get_native_id()
        return os.getpriority(os.PRIO_PROCESS, tid), threading.current_thread().name

    priority, name = asyncio.run(in_background(work, 5))
    assert priority == min(own + 5, 19) and name == "sheriff-import"
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == own  # ours unchanged


def test_the_import_threads_error_reaches_the_request() -> None:
    def work() -> None:
        raise ValidationFailed("line 3: bad")

    with pytest.raises(ValidationFailed, match="line 3"):
        asyncio.run(in_background(work, 0))


def test_an_upload_holds_its_slot_while_its_work_reads_the_spooled_body() -> None:
    slots = ImportSlots()

    def work(spool: IO[bytes], status: ImportStatus) -> tuple[bytes, str | None, int]:
        with pytest.raises(AlreadyRunning), slots.claim("ns"):  # a second import meanwhile
            pass
        return spool.read(), slots.status("ns").phase, status.received_bytes

    upload = receive_import(_request([b"ab", b"cd"]), slots, "ns", "validating", work, 0)
    assert asyncio.run(upload) == (b"abcd", "validating", 4)
    assert not slots.status("ns").running  # released after


def test_an_upload_refused_for_its_body_leaves_the_slot_free() -> None:
    slots = ImportSlots()
    ran: list[bool] = []
    upload = receive_import(
        _request([b" "]), slots, "ns", "writing", lambda *_: ran.append(True), 0
    )
    with pytest.raises(ValidationFailed, match="body: empty"):
        asyncio.run(upload)
    assert not ran and not slots.status("ns").running


def test_a_commit_splits_into_bounded_batches_in_reference_order() -> None:
    messages = [Message(message_id=f"m{i}", namespace="n", role="user", content=f"hi {i}",
                        at=T0, seq=i) for i in range(5)]  # fmt: skip
    edges = [
        TopicEdge(from_topic_id="a", to_topic_id="b", type="NEXT", weight=1.0, last_updated_at=T0)
    ] * 3
    commit = ImportCommit(namespace="n", now=T0, messages=messages, next_seq=9,
                          mentions={"t1": ["m0"], "t2": ["m1"], "t3": ["m2"]}, edges=edges)  # fmt: skip
    batches = list(commit.batches(2))
    assert [b.size() for b in batches] == [2, 2, 1, 2, 1, 2, 1] and commit.size() == 11
    assert [b.next_seq for b in batches[:3]] == [2, 4, 9]  # a re-run continues the numbering
    assert [m.message_id for b in batches[:3] for m in b.messages] == [f"m{i}" for i in range(5)]
    assert [sorted(b.mentions) for b in batches[3:5]] == [["t1", "t2"], ["t3"]]
    assert all(len(b.edges) == b.size() for b in batches[5:])


def _lines(topics: int, said: int) -> list[str]:
    header = {"kind": "header", "format": "sheriff-claw-export", "version": 1, "namespace": "x",
              "exported_at": T0.isoformat(), "embedding": {"model": "m", "dimensions": 384},
              "vectors": False}  # fmt: skip
    span = {"first_seen_at": T0.isoformat(), "last_seen_at": T0.isoformat()}
    rows = [{"kind": "topic", "topic_id": f"t{i}", "name": f"n{i}", "time": span}
            for i in range(topics)]  # fmt: skip
    end = {"kind": "end", "counts": {"topic": said}}
    return [json.dumps(r) for r in (header, *rows, end)]


def test_a_first_pass_validates_the_whole_file_keeping_nothing() -> None:
    assert parse_document(_lines(3, 3), keep=False).count() == 0
    assert parse_document(_lines(3, 3)).count() == 3
    with pytest.raises(ValidationFailed, match="says 2 but the file holds 3"):
        parse_document(_lines(3, 2), keep=False)


def test_a_process_runs_at_most_its_limit_of_imports_in_all_namespaces() -> None:
    slots = ImportSlots(limit=2)
    with slots.claim("a"), slots.claim("b"):
        full = pytest.raises(AlreadyRunning, match=r"as many imports as it takes at once \(2\)")
        with full, slots.claim("c"):
            pass
        assert not slots.status("c").running
    with slots.claim("c"):  # the slots are free again
        assert slots.status("c").running
