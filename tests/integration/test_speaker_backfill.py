"""Migration 014: messages stored before the participant lookup existed get their lower-cased
speaker, so a question about a participant of an old conversation asks memory too."""

from __future__ import annotations

from pathlib import Path

from neo4j import Driver

from graph.cypher import split_statements
from graph.messages import MessageStore

MIGRATION = Path(__file__).resolve().parents[2] / "cypher/schema/014_message_speakers.cypher"


def test_old_messages_get_their_speaker_looked_up_after_the_migration(
    driver: Driver, namespace: str
) -> None:
    # written as a store before migration 014 wrote them: no speaker_lc
    driver.execute_query(
        "CREATE (:Message {message_id: $ns + '-old', namespace: $ns, seq: 0, role: 'user', "
        "speaker: ' Caroline ', content: 'I went to the support group.', "
        "at: datetime('2023-05-08T13:56:00Z'), token_estimate: 7})",
        ns=namespace,
    )
    store = MessageStore(driver)
    assert store.speakers_named(namespace, ["Caroline"]) == set()
    for statement in split_statements(MIGRATION.read_text(encoding="utf-8")):
        driver.execute_query(statement)  # idempotent: the schema already has the index
    assert store.speakers_named(namespace, ["CAROLINE", "support group"]) == {"caroline"}
