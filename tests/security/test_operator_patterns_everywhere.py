"""The operator's redaction patterns reach every store the container builds (issue "One door":
every write redacted the same way): a store built apart with only the built-in shapes would
write an operator-defined secret (an employee id here) as it came."""

from __future__ import annotations

from neo4j import Driver

from api.container import Container
from api.settings import Settings
from tests.fakes.embedder import HashEmbedder

EMPLOYEE = "EMP-" + "730915"


def test_every_store_with_a_redactor_uses_the_operator_patterns(
    settings: Settings, driver: Driver
) -> None:
    container = Container(
        settings.model_copy(update={"redact_patterns": {"employee_id": r"EMP-\d{6}"}}),
        driver=driver,
        embedder=HashEmbedder(),
    )
    stores = {
        "topics": container.topics,
        "events": container.events,
        "messages": container.messages,
        "passages": container.passages,
        "sleep": container.sleep_store,
        "skills": container._skills_in("alice").store,
    }
    written = {name: store.redactor.text(f"badge {EMPLOYEE}") for name, store in stores.items()}
    assert written == dict.fromkeys(stores, "badge [REDACTED:employee_id]")
