"""Secret redaction before anything is stored or logged (pure: no Neo4j, no I/O but logging).

Every store in ``graph/`` redacts what it writes with a :class:`Redactor` (the built-in shapes
plus the operator's patterns from settings), so no writer above can forget it; the sleep's
extraction and the LLM extractor redact again on their own text. ``install_log_redaction``
redacts every log record of the process. Lives in ``graph/`` (the lowest layer that writes) so
every writer can import it without an upward dependency. See docs/security.md, "Redaction".
"""

from graph.redaction.custom import CustomPattern, compile_pattern, load_patterns
from graph.redaction.logs import RedactingFilter, install_log_redaction, uninstall_log_redaction
from graph.redaction.rules import (
    DEFAULT,
    MARKER,
    Redactor,
    contains_secret,
    mark,
    redact,
    redaction_markers,
)

__all__ = [
    "DEFAULT",
    "MARKER",
    "CustomPattern",
    "RedactingFilter",
    "Redactor",
    "compile_pattern",
    "contains_secret",
    "install_log_redaction",
    "load_patterns",
    "mark",
    "redact",
    "redaction_markers",
    "uninstall_log_redaction",
]
