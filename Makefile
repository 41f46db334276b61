.PHONY: up test bench lint

# The main job: Neo4j (fetched from Maven Central on first use), schema, model, API on :8000.
up:
	scripts/setup
	.venv/bin/sheriff up

# The whole test suite against the real Neo4j and the real embedding model.
test:
	scripts/test

lint:
	scripts/setup
	.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/mypy

bench:
	scripts/setup
	.venv/bin/python benchmarks/bench_topic_store.py
