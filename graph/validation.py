"""Input rules shared by every surface: REST schemas, the Responses tools, the CLI, later MCP.

One module so that a rule cannot hold on one surface and be missing on another (the tools once
accepted a ``now`` in year 9999 that REST refused). Pure: no Neo4j, no FastAPI. Each rule is a
plain function raising ``ValueError`` (pydantic turns it into a field error, a 422 naming the
field) plus an ``Annotated`` type that applies it, so schemas only name the type.

Rules:
- **Time**: ISO-8601 text with a zone (no Unix numbers), converted to UTC *first*, then the year
  must be in ``MIN_YEAR..MAX_YEAR`` (``3000-01-01T00:00-05:00`` is year 3000 in UTC and refused;
  an offset that overflows the calendar is refused, never a 500).
- **Plain JSON** (tool calls, skill args): finite numbers, valid Unicode, at most
  ``MAX_JSON_DEPTH`` levels and ``MAX_JSON_NODES`` values; measured without recursion, so a
  hostile depth cannot crash the check itself.
- **Text**: valid UTF-8 (no lone surrogates). Names and other one-line fields refuse every
  control character (C0, DEL, C1), line separators and the bidi embedding/override/isolate
  controls that reorder what a terminal shows; multi-line fields (facts) allow tab and newlines.
- **Weights**: a link adds ``0 < weight <= MAX_LINK_WEIGHT`` to an edge, on every surface.
- **Ids** a caller chooses (external ids, session ids, source message ids, import ids) are
  refused when they hold a secret shape (:func:`no_secret`): free text is redacted, but an id is
  never rewritten, since two ids redacted alike would become one (docs/security.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
)

from graph.redaction import contains_secret

MIN_YEAR, MAX_YEAR = 1900, 2999
MAX_INT = 2**53  # ints beyond this cannot round-trip through JSON clients or Neo4j safely
MAX_JSON_DEPTH = 32
MAX_JSON_NODES = 10_000
MAX_TOOL_CALLS = 50
MAX_LINK_WEIGHT = 100.0

_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
_BIDI = "\u202a-\u202e\u2066-\u2069"
# one-line fields: every C0/C1 control, DEL, line/paragraph separators, bidi controls
_LINE_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
# multi-line fields: the same, but tab, newline and carriage return are text
_TEXT_CONTROL = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f{_BIDI}]")


# -- time -----------------------------------------------------------------------------------------
def iso_only(value: Any) -> Any:
    """Timestamps are ISO-8601 text: no Unix numbers, which pydantic would otherwise accept."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or _NUMBER.fullmatch(value.strip()):
        raise ValueError("must be an ISO-8601 timestamp with a zone, e.g. 2026-03-02T09:00:00Z")
    return value


def check_time(value: datetime) -> datetime:
    """``value`` in UTC when its UTC year is within ``MIN_YEAR..MAX_YEAR``; else ``ValueError``."""
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise ValueError("must carry a timezone, e.g. 2026-03-02T09:00:00Z")
    try:
        utc = value.astimezone(UTC)
    except (OverflowError, ValueError) as exc:  # 9999-12-31T23:00-05:00 leaves the calendar
        raise ValueError(f"is out of range: the year must be {MIN_YEAR}-{MAX_YEAR} in UTC") from exc
    if not MIN_YEAR <= utc.year <= MAX_YEAR:
        raise ValueError(
            f"the year must be between {MIN_YEAR} and {MAX_YEAR} in UTC (got {utc.isoformat()})"
        )
    return utc


# -- JSON -----------------------------------------------------------------------------------------
def json_shape(value: Any) -> tuple[int, int]:
    """``(depth, values)`` of a JSON-like value, measured iteratively (no recursion limit).

    A scalar has depth 0, ``{}``/``[]`` depth 1, ``{"a": [1]}`` depth 2. Stops counting once
    either bound is far exceeded, so a huge value costs no more than the limits allow."""
    depth = nodes = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        nodes += 1
        if isinstance(item, dict | list):
            depth = max(depth, level + 1)
            if depth > MAX_JSON_DEPTH * 4 or nodes > MAX_JSON_NODES * 4:
                break
            children: Iterator[Any] = iter(item.values() if isinstance(item, dict) else item)
            stack.extend((child, level + 1) for child in children)
    return depth, nodes


def check_json_shape(value: Any) -> Any:
    """Refuse JSON nested deeper than ``MAX_JSON_DEPTH`` or holding more than ``MAX_JSON_NODES``
    values (before anything tries to store, serialise or walk it recursively)."""
    depth, nodes = json_shape(value)
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"nests deeper than {MAX_JSON_DEPTH} levels")
    if nodes > MAX_JSON_NODES:
        raise ValueError(f"holds more than {MAX_JSON_NODES} values")
    return value


def plain_json(value: Any) -> Any:
    """Refuse anything that is not plain JSON: bounded shape, finite numbers, valid Unicode."""
    check_json_shape(value)
    try:
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8")
    except (ValueError, TypeError, UnicodeEncodeError) as exc:
        raise ValueError(f"must be plain JSON (finite numbers, valid Unicode): {exc}") from exc
    return value


def within_json_limits(value: Any) -> bool:
    """True when ``value`` is within the depth and size limits (for values read back)."""
    depth, nodes = json_shape(value)
    return depth <= MAX_JSON_DEPTH and nodes <= MAX_JSON_NODES


# -- text -----------------------------------------------------------------------------------------
def utf8(value: str) -> str:
    """Refuse text that cannot be encoded as UTF-8 (a lone surrogate fails deep in the driver)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("text must be valid Unicode (it holds a lone surrogate)") from exc
    return value


def _refuse(pattern: re.Pattern[str], value: str) -> str:
    found = pattern.search(value)
    if found:
        raise ValueError(
            f"must not contain control characters (U+{ord(found.group()):04X} at position "
            f"{found.start()}); terminal escapes, NUL and bidi overrides are refused"
        )
    return value


def one_line(value: str) -> str:
    """Refuse control characters, line separators and bidi controls (names, ids, phrases)."""
    return _refuse(_LINE_CONTROL, utf8(value))


def text(value: str) -> str:
    """Refuse control characters and bidi controls; tab and newlines are allowed (facts)."""
    return _refuse(_TEXT_CONTROL, utf8(value))


def strip_controls(value: str) -> str:
    """``value`` without the characters :func:`one_line` refuses (for names that pipelines
    derive from conversation text, where refusing would fail a whole sleep)."""
    return _LINE_CONTROL.sub("", value).strip()


def no_secret(value: str) -> str:
    """Refuse an id that holds a secret shape (an id is matched, not read: it is never redacted)."""
    if contains_secret(value):
        raise ValueError("holds a secret-shaped string (a key, token or password); ids are "
                         "refused rather than redacted")  # fmt: skip
    return value


def not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


def _line(max_length: int, min_length: int = 1) -> Any:
    return Annotated[
        str,
        StringConstraints(min_length=min_length, max_length=max_length, strip_whitespace=True),
        AfterValidator(one_line),
    ]


# -- the types the surfaces use ---------------------------------------------------------------------
Time = Annotated[AwareDatetime, BeforeValidator(iso_only), AfterValidator(check_time)]
Name = _line(200)  # topic names and aliases
Ident = Annotated[  # external ids, session ids, source message ids
    str,
    StringConstraints(min_length=1, max_length=200, strip_whitespace=True),
    AfterValidator(one_line),
    AfterValidator(no_secret),
]
TopicId = _line(64)
Ref = _line(300)
Phrase = _line(200)  # a time phrase
OneLiner = _line(500, min_length=0)
ShortText = Annotated[  # facts, open loops
    str,
    StringConstraints(min_length=1, max_length=2000, strip_whitespace=True),
    AfterValidator(text),
]
Key = Annotated[
    str,
    StringConstraints(min_length=1, max_length=120, strip_whitespace=True),
    AfterValidator(one_line),
]
Reason = _line(300)  # why a fact was corrected or retracted (redacted when stored)
Unit = Annotated[str, StringConstraints(max_length=40), AfterValidator(one_line)]
Speaker = Annotated[str, StringConstraints(max_length=100), AfterValidator(one_line)]
QueryText = Annotated[
    str,
    StringConstraints(min_length=1, max_length=2000, strip_whitespace=True),
    AfterValidator(utf8),
]
LongText = Annotated[
    str, StringConstraints(max_length=32_000), AfterValidator(utf8), AfterValidator(not_blank)
]
MessageText = Annotated[
    str, StringConstraints(max_length=100_000), AfterValidator(utf8), AfterValidator(not_blank)
]
JsonObject = Annotated[dict[str, Any], AfterValidator(plain_json)]
ToolCalls = Annotated[list[JsonObject], Field(max_length=MAX_TOOL_CALLS)]
LinkWeight = Annotated[float, Field(gt=0, le=MAX_LINK_WEIGHT, allow_inf_nan=False)]
SourceIds = Annotated[list[Ident], Field(default_factory=list, max_length=500)]


# -- the shapes REST and import share ---------------------------------------------------------------
class StatementIn(BaseModel):
    """A fact or an open loop as a caller gives it (REST's topic writes, an import's lines)."""

    model_config = ConfigDict(extra="forbid")

    text: ShortText
    at: Time | None = None
    source_message_ids: SourceIds


class NumberIn(BaseModel):
    """A typed number as a caller gives it (REST's topic writes, an import's lines)."""

    model_config = ConfigDict(extra="forbid")

    key: Key
    value: Annotated[float, Field(allow_inf_nan=False)]
    unit: Unit | None = None
    at: Time
    source: Literal["doc", "user", "tool", "assistant"] = "user"
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    source_message_ids: SourceIds
