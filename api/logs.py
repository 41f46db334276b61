"""JSON log lines (``SHERIFF_LOG_FORMAT=json``): one object a line, with the trace and span ids.

Each line has ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message`` (redacted as every
record is: graph/redaction/logs.py), the structured fields a call passed with ``extra=``
(``request_id``, ``route``, ``status``, ``duration_ms``, ``tool``, ...; their text redacted
too), ``exception`` when there is one, and ``trace_id`` / ``span_id`` (hex, as a tracing
backend shows them) when the line was written inside a recorded span (api/telemetry.py), so a
log line leads to its trace and back.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from opentelemetry import trace

from graph.redaction import DEFAULT, Redactor

_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
    "taskName",
}
_PLAIN = (int, float, bool, type(None))


class JsonFormatter(logging.Formatter):
    """A record as one JSON object (see the module docstring)."""

    def __init__(self, redactor: Redactor | None = None) -> None:
        super().__init__()
        self.redactor = redactor or DEFAULT

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key in _STANDARD or key in line:
                continue
            line[key] = value if isinstance(value, _PLAIN) else self.redactor.text(str(value))
        context = trace.get_current_span().get_span_context()
        if context.is_valid:
            line["trace_id"] = trace.format_trace_id(context.trace_id)
            line["span_id"] = trace.format_span_id(context.span_id)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exception"] = record.exc_text
        return json.dumps(line, ensure_ascii=False)
