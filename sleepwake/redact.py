"""Secret redaction for text that is about to become durable memory.

The rules live in :mod:`graph.redaction` (the stores apply them to everything they write); this
module keeps the sleep pipeline's name for them: ``redact`` replaces a secret by
``[REDACTED:<kind>]``, ``contains_secret`` says whether ``redact`` would change a text, and
``redaction_markers`` lists the markers in a text.
"""

from __future__ import annotations

from graph.redaction import contains_secret, redact, redaction_markers

__all__ = ["contains_secret", "redact", "redaction_markers"]
