"""Background sleep over REST and the CLI: an append that fills the buffer returns at once with
``sleep_due``; ``POST /v1/sleep?wait=false`` answers 202 with the queued run; the worker runs
it under that id; ``/v1/sleep-runs`` lists every attempt of the caller's namespace only, a page
at a time; ``sheriff sleep-runs`` prints the same. The hashing embedder: this is about the
routes, not what a sleep finds."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from api.cli import app
from api.container import Container
from api.settings import Settings
from tests.fakes import HashEmbedder
from tests.integration.api_support import api_client, bearer, new_key

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _talk(n: int) -> dict[str, Any]:
    line = "The Harbor Project ships the new cranes from dock four on the ninth of May. " * 6
    return {"messages": [{"role": "user", "content": f"{i}: {line}",
                          "at": (T0 + timedelta(minutes=i)).isoformat()} for i in range(n)]}  # fmt: skip


def test_sleep_runs_over_rest_and_the_cli(
    settings: Settings,
    tmp_path: Path,
    namespace: str,
    other_namespace: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with api_client(settings, HashEmbedder(), tmp_path, sleep_mode="background") as client:
        auth, stranger = (
            bearer(new_key(client, namespace)),
            bearer(new_key(client, other_namespace)),
        )
        appended = client.post("/v1/messages", json=_talk(50), headers=auth).json()
        assert appended["sleeps"] == [] and appended["sleep_due"] is True
        assert client.get("/v1/sleep-runs", headers=auth).json() == {
            "runs": [],
            "next_before": None,
        }

        queued = client.post("/v1/sleep", params={"wait": "false"}, headers=auth)
        assert queued.status_code == 202 and queued.json()["outcome"] == "queued"
        run_id = queued.json()["run_id"]
        container: Container = client.app.state.container  # type: ignore[attr-defined]
        ran = container.sleep_worker().run_once()
        assert ran is not None and ran.run_id == run_id and ran.outcome == "done"

        done = client.get(f"/v1/sleep-runs/{run_id}", headers=auth).json()
        assert done["outcome"] == "done" and done["messages_compacted"] > 0
        assert client.get(f"/v1/sleep-runs/{run_id}", headers=stranger).status_code == 404
        assert client.get("/v1/sleep-runs", headers=stranger).json()["runs"] == []

        slept = client.post("/v1/sleep", json={"now": (T0 + timedelta(hours=2)).isoformat()},
                            headers=auth)  # fmt: skip
        assert slept.status_code == 200 and "messages_compacted" in slept.json()
        first = client.get("/v1/sleep-runs", params={"limit": 1}, headers=auth).json()
        assert [r["trigger"] for r in first["runs"]] == ["explicit"] and first["next_before"]
        rest = client.get("/v1/sleep-runs", headers=auth,
                          params={"limit": 1, "before": first["next_before"]}).json()  # fmt: skip
        assert [r["run_id"] for r in rest["runs"]] == [run_id]
        assert (
            client.get("/v1/sleep-runs", params={"before": "nope"}, headers=auth).status_code == 404
        )

    uri, user, password = settings.connection()
    for name, value in (("NEO4J_URI", uri), ("NEO4J_USER", user), ("NEO4J_PASSWORD", password)):
        monkeypatch.setenv(name, value)
    printed = CliRunner().invoke(app, ["sleep-runs", "-n", namespace])
    assert printed.exit_code == 0, printed.output
    assert [r["outcome"] for r in json.loads(printed.stdout)] == ["done", "done"]
