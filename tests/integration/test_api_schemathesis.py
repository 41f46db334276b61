"""Property-based tests of the whole REST API from its OpenAPI document (schemathesis, in-process
ASGI): for every operation, generated requests, valid and invalid, must never produce a 5xx;
statuses, content types and bodies must be the documented ones; invalid input must be refused;
and no ``/v1`` operation may answer without a key."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.config import SchemathesisConfig
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from agent.fake_responses import FakeResponses
from agent.offline_model import offline_model
from api.app import create_app
from api.container import Container
from api.settings import Settings
from retrieval.embedding import MiniLMEmbedder
from skills.config import SkillSettings
from tests.integration.api_support import bearer

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    ignored_auth,
]
# A refusal is any documented 4xx; 413 is how an oversize negative body is refused.
CONFIG = SchemathesisConfig.from_dict(
    {"checks": {"negative_data_rejection": {"expected-statuses": [
        400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429]}}}
)  # fmt: skip
EXAMPLES = {GenerationMode.POSITIVE: 25, GenerationMode.NEGATIVE: 15}
# The document needs no database: the operations are known at collection time. Invalid input
# can only be generated for operations that take some.
OPERATIONS = [
    (method.upper(), path, mode)
    for path, methods in create_app().openapi()["paths"].items()
    for method, spec in methods.items()
    for mode in EXAMPLES
    if mode is GenerationMode.POSITIVE or spec.get("parameters") or spec.get("requestBody")
]


@pytest.fixture(scope="module")
def app(
    settings: Settings, embedder: MiniLMEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[FastAPI]:
    with FakeResponses(script=offline_model) as fake:  # /v1/chat talks to a model over HTTP
        workspace = tmp_path_factory.mktemp("ws")  # generated skill runs may write files here
        container = Container(
            settings.model_copy(
                update={"openai_api_key": "sk-test", "openai_base_url": fake.base_url,
                        "extractor": "deterministic"}
            ),
            skill_settings=SkillSettings(workspaces_dir=workspace),
            embedder=embedder,
        )  # fmt: skip
        yield create_app(container)
        container.close()


@pytest.fixture(scope="module")
def api_schema(app: FastAPI) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_asgi("/openapi.json", app, config=CONFIG)  # starts lifespan


@pytest.fixture
def auth(app: FastAPI, api_schema: schemathesis.BaseSchema, namespace: str) -> dict[str, str]:
    return bearer(app.state.api_keys.create(namespace, "schemathesis")[1])


@pytest.mark.parametrize(
    ("method", "path", "mode"), OPERATIONS, ids=[f"{m} {p} {g}" for m, p, g in OPERATIONS]
)
def test_operation_keeps_its_contract(
    api_schema: schemathesis.BaseSchema,
    auth: dict[str, str],
    method: str,
    path: str,
    mode: GenerationMode,
) -> None:
    operation = api_schema[path][method]
    checks = [*CHECKS, negative_data_rejection] if mode is GenerationMode.NEGATIVE else CHECKS

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES[mode], deadline=None, suppress_health_check=list(HealthCheck))
    def check(case: schemathesis.Case) -> None:
        case.call_and_validate(headers=auth, checks=checks)

    check()
