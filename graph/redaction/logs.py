"""Redacted logs: a ``logging.Filter`` that redacts a record, installed for the whole process.

:func:`install_log_redaction` wraps the log-record factory, so every record of every logger
(ours, uvicorn's access log, libraries') is redacted when it is created, before any handler,
formatter or test capture sees it, whichever handlers are configured later. Redacted: the
message and its arguments, a secret that only appears once the arguments are formatted, the
exception text (the live exception is dropped from the record so no handler re-renders it raw)
and the stack text. ``RedactingFilter`` can also be put on a handler; there it also redacts the
string fields passed with ``extra=``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from graph.redaction.rules import Redactor

__all__ = ["RedactingFilter", "install_log_redaction", "uninstall_log_redaction"]

_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}
_PLAIN = (int, float, bool, type(None))
_busy = threading.local()  # a redaction pattern that logs must not redact its own warning forever


class RedactingFilter(logging.Filter):
    """Redacts the record in place and lets it through."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def filter(self, record: logging.LogRecord) -> bool:
        """Redact ``record`` (message, arguments, exception, stack, extra strings)."""
        if getattr(_busy, "on", False):
            return True
        _busy.on = True
        try:
            self._redact(record)
            for key, value in list(vars(record).items()):
                if key not in _STANDARD and isinstance(value, str):
                    setattr(record, key, self.redactor.text(value))
        finally:
            _busy.on = False
        return True

    def _redact(self, record: logging.LogRecord) -> None:
        text = self.redactor.text
        template = record.msg if isinstance(record.msg, str) else str(record.msg)
        if not record.args:
            record.msg = text(template)
        else:  # the template alone is not redacted: "password=%s" would lose its %s
            record.args = self._arguments(record.args)
            try:
                full = record.getMessage()
            except (TypeError, ValueError, KeyError):  # a malformed call: say so, show no data
                record.msg = text(template) + " (log arguments withheld: they do not fit)"
                record.args = ()
            else:
                if text(full) != full:  # a secret in the template or across an argument
                    record.msg, record.args = text(full), ()
        if record.exc_info:
            record.exc_text = record.exc_text or logging.Formatter().formatException(
                record.exc_info
            )
            record.exc_info = None
        if record.exc_text:
            record.exc_text = text(record.exc_text)
        if record.stack_info:
            record.stack_info = text(record.stack_info)

    def _arguments(self, args: Any) -> Any:
        if isinstance(args, Mapping):
            return {k: self._argument(v) for k, v in args.items()}
        return tuple(self._argument(v) for v in args)

    def _argument(self, value: Any) -> Any:
        """Strings are redacted; numbers kept (``%d`` still works); other objects only become
        their redacted ``str`` when that holds a secret."""
        if isinstance(value, str):
            return self.redactor.text(value)
        if isinstance(value, _PLAIN):
            return value
        shown = str(value)
        redacted = self.redactor.text(shown)
        return value if redacted == shown else redacted


_base_factory: Callable[..., logging.LogRecord] | None = None


def install_log_redaction(redactor: Redactor) -> None:
    """Redact every log record of this process with ``redactor`` from now on. Installing again
    replaces the redactor (the factory is wrapped once)."""
    global _base_factory
    if _base_factory is None:
        _base_factory = logging.getLogRecordFactory()
    base, record_filter = _base_factory, RedactingFilter(redactor)

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = base(*args, **kwargs)
        record_filter.filter(record)
        return record

    logging.setLogRecordFactory(factory)


def uninstall_log_redaction() -> None:
    """Restore the record factory that was in place before :func:`install_log_redaction`."""
    global _base_factory
    if _base_factory is not None:
        logging.setLogRecordFactory(_base_factory)
        _base_factory = None
