"""Secret redaction for text that is about to become durable memory.

Everything a conversation contributes to a Topic passes through :func:`redact` first, so
credentials pasted into a chat never reach Neo4j. A secret is replaced by
``[REDACTED:<kind>]``; for ``key=value`` style assignments, ``Bearer <token>`` headers and
``scheme://user:password@host`` URLs the surrounding label is kept and only the value goes.

Kinds: ``private_key``, ``url_password``, ``jwt``, ``anthropic_key``, ``openai_key``,
``stripe_key``, ``aws_access_key_id``, ``aws_secret_access_key``, ``github_token``,
``slack_token``, ``slack_webhook``, ``google_api_key``, ``bearer_token``, ``basic_auth``,
``password``, ``secret``, ``token``, ``api_key``.

The rules favour precision on prose and code: ``max_tokens=4096``, ``password=password``,
``token = os.environ["TOKEN"]``, "the secret: nobody knew" and "sk-learn" are left alone.
Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["contains_secret", "redact", "redaction_markers"]

_MARKER = re.compile(r"\[REDACTED:[a-z_]+\]")
_NOT_REDACTED = r"(?!\[REDACTED:)"
_MAX_PASSES = 5


def _mark(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def _keep_prefix(kind: str) -> Callable[[re.Match[str]], str]:
    """Replacement that keeps group 1 (a label such as ``Bearer ``) and drops the rest."""
    return lambda m: m.group(1) + _mark(kind)


_Replacement = str | Callable[[re.Match[str]], str]

# Order matters: the most specific shapes go first so their marker names the right kind.
_TOKEN_RULES: tuple[tuple[re.Pattern[str], _Replacement], ...] = (
    (
        re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----.*?"
            r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
            re.S,
        ),
        _mark("private_key"),
    ),
    (
        re.compile(
            r"\b([a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@\[\]]{1,256}:)"
            + _NOT_REDACTED
            + r"[^\s@/]{1,256}(?=@)"
        ),
        _keep_prefix("url_password"),
    ),
    (
        re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"),
        _mark("slack_webhook"),
    ),
    (
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
        _mark("jwt"),
    ),
    (
        re.compile(r"(?<![A-Za-z0-9_-])sk-ant-(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"),
        _mark("anthropic_key"),
    ),
    (
        re.compile(
            r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}"
        ),
        _mark("openai_key"),
    ),
    (
        re.compile(r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"),
        _mark("stripe_key"),
    ),
    (
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        _mark("aws_access_key_id"),
    ),
    (
        re.compile(
            r"(?i)((?:aws_?)?secret_?access_?key['\"]?\s*[=:]\s*['\"]?)"
            + _NOT_REDACTED
            + r"[A-Za-z0-9/+=]{16,}"
        ),
        _keep_prefix("aws_secret_access_key"),
    ),
    (
        re.compile(r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
        _mark("github_token"),
    ),
    (
        re.compile(r"(?<![A-Za-z0-9])xox[abposre]-[A-Za-z0-9-]{10,}"),
        _mark("slack_token"),
    ),
    (
        re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"),
        _mark("google_api_key"),
    ),
    (
        re.compile(
            r"\b((?:Bearer|bearer|BEARER)\s+)"
            + _NOT_REDACTED
            + r"(?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{12,}=*"
        ),
        _keep_prefix("bearer_token"),
    ),
    (
        re.compile(r"(?i)(authorization\s*[:=]\s*['\"]?basic\s+)" + r"[A-Za-z0-9+/]{8,}={0,2}"),
        _keep_prefix("basic_auth"),
    ),
)

_PASSWORD_WORDS = ("password", "passwd", "passphrase", "pwd")
_KEY_CORE = r"password|passwd|passphrase|pwd|secret|token|api[_-]?key|apikey|access[_-]?key"
_ASSIGNMENT = re.compile(
    r"(?<![A-Za-z0-9_.-])"
    rf"(?P<key>(?:[A-Za-z0-9]+[_.-])*(?:{_KEY_CORE})(?:[_-](?:key|token|secret))?)"
    r"(?![A-Za-z0-9])"
    r"(?P<sep>['\"]?\s*(?:==?|:)\s*)"
    r"(?:(?P<q>['\"])(?P<qv>[^'\"\n]{1,200})(?P=q)|(?P<uv>[^\s'\"`,;)}\]]{1,200}))",
    re.I,
)
_SPOKEN_PASSWORD = re.compile(
    r"(?i)\b(pass(?:word|code|phrase)|pin)(\s+(?:is|was|will\s+be)\s+)(['\"]?)"
    + _NOT_REDACTED
    + r"([^\s'\",;]*[^\s'\",;.!?:)])"
)
_CODE_LITERALS = frozenset({"none", "null", "nil", "true", "false", "undefined", "os", "env"})
_CODE_REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+.*|[A-Za-z_]\w*[(\[].*|\$.*|<.*>")


def _looks_secret(value: str) -> bool:
    """True when a bare word has the texture of a credential rather than an English word."""
    if len(value) >= 20:
        return True
    has_digit = any(c.isdigit() for c in value)
    has_symbol = any(not c.isalnum() for c in value)
    mixed_case = any(c.isupper() for c in value[1:]) and any(c.islower() for c in value)
    return len(value) >= 6 and (has_digit or has_symbol or mixed_case)


def _assignment_kind(key: str) -> str:
    low = key.lower()
    if any(word in low for word in _PASSWORD_WORDS):
        return "password"
    if re.search(r"api[_-]?key|apikey|access[_-]?key", low):
        return "api_key"
    return "secret" if "secret" in low else "token"


def _is_code_reference(value: str, kind: str) -> bool:
    """``token=self.token``, ``password=None``, ``api_key=os.environ[...]`` are code, not secrets."""
    low = value.lower()
    if low in _CODE_LITERALS or _CODE_REFERENCE.fullmatch(value):
        return True
    core = "pass" if kind == "password" else kind.replace("api_key", "key")
    return bool(re.fullmatch(r"[A-Za-z_]\w*", value)) and core in low


def _redact_assignment(m: re.Match[str]) -> str:
    key, sep, quote = m["key"], m["sep"], m["q"] or ""
    value = m["qv"] if m["qv"] is not None else m["uv"]
    kind = _assignment_kind(key)
    if value.startswith("[REDACTED:") or set(value) <= set("*xX.-_ "):
        return m.group(0)
    if not quote:
        if _is_code_reference(value, kind):
            return m.group(0)
        if ":" in sep and kind != "password" and not _looks_secret(value):
            return m.group(0)
    return f"{key}{sep}{quote}{_mark(kind)}{quote}"


def _redact_spoken_password(m: re.Match[str]) -> str:
    if not _looks_secret(m.group(4)):
        return m.group(0)
    return f"{m.group(1)}{m.group(2)}{m.group(3)}{_mark('password')}"


def _one_pass(text: str) -> str:
    for pattern, replacement in _TOKEN_RULES:
        text = pattern.sub(replacement, text)
    text = _ASSIGNMENT.sub(_redact_assignment, text)
    return _SPOKEN_PASSWORD.sub(_redact_spoken_password, text)


def redact(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by ``[REDACTED:<kind>]``.

    Idempotent (``redact(redact(t)) == redact(t)``) and total: it never raises on any string.
    Ordinary prose and code identifiers are returned unchanged.
    """
    for _ in range(_MAX_PASSES):
        redacted = _one_pass(text)
        if redacted == text:
            break
        text = redacted
    return text


def contains_secret(text: str) -> bool:
    """True when :func:`redact` would change ``text``, i.e. it holds at least one secret."""
    return redact(text) != text


def redaction_markers(text: str) -> list[str]:
    """The ``[REDACTED:<kind>]`` markers present in ``text``, in order of appearance."""
    return _MARKER.findall(text)
