"""Pure text, below sleep and retrieval: sentences, words and stems, noun phrases, time
expressions and phrases, memory cues, redaction. No Neo4j, no model (tests/unit/test_layers.py)."""
