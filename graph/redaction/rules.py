"""The built-in secret shapes, and :class:`Redactor`, which applies them (and operator patterns).

A secret is replaced by ``[REDACTED:<kind>]``; for ``key=value`` assignments, ``Bearer <token>``
headers and ``scheme://user:password@host`` URLs the label is kept and only the value goes.

Kinds: ``private_key``, ``url_password``, ``slack_webhook``, ``jwt``, ``anthropic_key``,
``openai_key``, ``stripe_key``, ``aws_access_key_id``, ``aws_secret_access_key``,
``github_token``, ``gitlab_token``, ``slack_token``, ``google_api_key``, ``bearer_token``,
``basic_auth``, ``card_number``, ``password``, ``secret``, ``token``, ``api_key``.

Precision on prose and code matters as much as recall (a false positive damages memory):
``max_tokens=4096``, ``password=password``, ``token = os.environ["TOKEN"]``, "the secret: nobody
knew", "sk-learn", UUIDs, git SHAs, dates, prices and phone numbers are left alone; a card
number must pass the Luhn check.

Linear time on any input: every rule starts at a token boundary (a look-behind that fails inside
a run of token characters, so a run is tried once, not once per character), repetitions are
bounded or run over that one run, and there are no nested quantifiers. A rule only runs when its
trigger (a literal such as ``sk-`` or ``password``) occurs in the text, so ordinary text costs
one lower-casing and a few substring tests. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["MARKER", "Redactor", "contains_secret", "mark", "redact", "redaction_markers"]

MARKER = re.compile(r"\[REDACTED:[a-z][a-z0-9_]*\]")
_NOT_REDACTED = r"(?!\[REDACTED:)"
_MAX_PASSES = 5


def mark(kind: str) -> str:
    """The marker that replaces a secret of ``kind``."""
    return f"[REDACTED:{kind}]"


def _keep_prefix(kind: str) -> Callable[[re.Match[str]], str]:
    """Replacement that keeps group 1 (a label such as ``Bearer ``) and drops the rest."""
    return lambda m: m.group(1) + mark(kind)


_Replacement = str | Callable[[re.Match[str]], str]


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    replacement: _Replacement
    triggers: tuple[str, ...]  # lower-case literals; the rule runs only when one occurs


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _card(m: re.Match[str]) -> str:
    """A 13-19 digit number (bare or in 4-digit groups) is a card only when Luhn-valid."""
    digits = re.sub(r"[ -]", "", m.group(0))
    if 13 <= len(digits) <= 19 and _luhn_ok(digits):
        return mark("card_number")
    return m.group(0)


def _unlabelled_aws_secret(m: re.Match[str]) -> str:
    """40 base64 characters are an AWS secret only near the word "secret" and with the texture
    of one (upper and lower case and a digit or ``/+``): a git SHA after "secret" stays."""
    value = m.group(0)
    before = m.string[max(0, m.start() - 80) : m.start()].lower()
    textured = (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() or c in "/+" for c in value)
    )
    return mark("aws_secret_access_key") if textured and "secret" in before else value


def _r(pattern: str, replacement: _Replacement, *triggers: str, flags: int = 0) -> _Rule:
    return _Rule(re.compile(pattern, flags), replacement, triggers)


# Order matters: the most specific shapes go first so their marker names the right kind.
_TOKEN_RULES: tuple[_Rule, ...] = (
    _r(
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----.*?"
        r"(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----|\Z)",
        mark("private_key"),
        "-----begin",
        flags=re.S,
    ),
    _r(
        r"\b([a-zA-Z][a-zA-Z0-9+.-]{1,20}://[^\s:/@\[\]]{0,256}:)"
        + _NOT_REDACTED
        + r"[^\s@/]{1,256}(?=@)",
        _keep_prefix("url_password"),
        "://",
    ),
    _r(
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]++",
        mark("slack_webhook"),
        "hooks.slack.com",
    ),
    _r(
        r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]*+",
        mark("jwt"),
        "eyj",
    ),
    _r(
        r"(?<![A-Za-z0-9_-])sk-ant-(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}+",
        mark("anthropic_key"),
        "sk-ant-",
    ),
    _r(
        r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_-]*\d)[A-Za-z0-9_-]{20,}+",
        mark("openai_key"),
        "sk-",
    ),
    _r(
        r"(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}+",
        mark("stripe_key"),
        "_live_",
        "_test_",
    ),
    _r(
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])",
        mark("aws_access_key_id"),
        "akia",
        "asia",
    ),
    _r(
        r"(?i)((?:aws_?)?secret_?access_?key['\"]?[ \t]{0,16}[=:][ \t]{0,16}['\"]?)"
        + _NOT_REDACTED
        + r"[A-Za-z0-9/+=]{16,}+",
        _keep_prefix("aws_secret_access_key"),
        "secret",
    ),
    _r(
        r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
        _unlabelled_aws_secret,
        "secret",
    ),
    _r(
        r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{20,}+|github_pat_[A-Za-z0-9_]{20,}+)",
        mark("github_token"),
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
    ),
    _r(
        r"(?<![A-Za-z0-9_-])gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|oas)-[A-Za-z0-9_.-]{20,}(?<!\.)",
        mark("gitlab_token"),
        "gl",
    ),
    _r(
        r"(?<![A-Za-z0-9])xox[abposre]-[A-Za-z0-9-]{10,}+",
        mark("slack_token"),
        "xox",
    ),
    _r(
        r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])",
        mark("google_api_key"),
        "aiza",
    ),
    _r(
        r"\b((?:Bearer|bearer|BEARER)[ \t]{1,16})"
        + _NOT_REDACTED
        + r"(?=[A-Za-z0-9._~+/-]*\d)[A-Za-z0-9._~+/-]{12,}+=*+",
        _keep_prefix("bearer_token"),
        "bearer",
    ),
    _r(
        r"(?i)(authorization[ \t]{0,16}[:=][ \t]{0,16}['\"]?basic[ \t]{1,16})"
        r"[A-Za-z0-9+/]{8,}+={0,2}",
        _keep_prefix("basic_auth"),
        "authorization",
    ),
    # 13-19 digits as groups (4-4-4-4[-3], 4-6-5, 4-6-4, 4-4-4-1) with one kind of separator,
    # or 15-19 bare digits (shorter bare runs are phone numbers as often as cards); issuer
    # digits 2-6 (Visa, Mastercard, Amex, Discover, JCB, UnionPay); "+" before means a phone.
    # The digit comes first and the look-behind after it, so the engine skips non-digits fast.
    _r(
        r"[2-6](?<![\w.,+-][2-6])(?:\d{14,18}|\d{3}(?P<s>[ -])\d{4,6}(?P=s)\d{4,5}(?:(?P=s)\d{1,4})?"
        r"(?:(?P=s)\d{3})?)(?![\w]|[.,-]\d)",
        _card,
    ),
)

_PASSWORD_WORDS = ("password", "passwd", "passphrase", "pwd")
_PASSWORD_CORE = r"password|passwd|passphrase|pwd"  # noqa: S105 (key names, not a password)
_OTHER_CORE = r"secret|token|api[ _-]?key|apikey|access[_-]?key"
_KEY_CORE = rf"{_PASSWORD_CORE}|{_OTHER_CORE}"
# The key is matched from its core word ("DB_PASSWORD" matches at "PASSWORD"; the prefix stays
# in the text untouched), so the key needs no repeated group. A password word may be glued to
# its prefix (PGPASSWORD, DBPASS-less shapes); the others must start a word (not "mytokens").
_ASSIGNMENT = re.compile(
    rf"(?P<key>(?:{_PASSWORD_CORE}|(?<![A-Za-z0-9])(?:{_OTHER_CORE}))"
    r"(?:[_-](?:key|token|secret))?)(?![A-Za-z0-9])"
    r"(?P<sep>['\"]?[ \t]{0,16}(?:==?|:)[ \t]{0,16})"
    r"(?:(?P<q>['\"])(?P<qv>[^'\"\n]{1,200})(?P=q)|(?P<uv>[^\s'\"`,;)}\]]{1,200}))",
    re.I,
)
_ASSIGNMENT_TRIGGERS = ("pass", "pwd", "secret", "token", "key")
_SPOKEN_PASSWORD = re.compile(
    r"(?i)\b(?P<word>pass(?:word|code|phrase|wd)|pwd|pin)"
    r"(?P<mid>[ \t]{1,16}(?:(?:is|was|will[ \t]{1,16}be)(?P<colon>:?)[ \t]{1,16})?)(?P<q>['\"]?)"
    + _NOT_REDACTED
    + r"(?P<value>[^\s'\",;]{0,200}[^\s'\",;.!?:)])"
)
_SPOKEN_TRIGGERS = ("pass", "pwd", "pin")
_ALL_TRIGGERS = tuple(
    sorted(
        {t for rule in _TOKEN_RULES for t in rule.triggers}
        | {*_ASSIGNMENT_TRIGGERS, *_SPOKEN_TRIGGERS}
    )
)
_CODE_LITERALS = frozenset({"none", "null", "nil", "true", "false", "undefined", "os", "env"})
_CODE_REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+.*|[A-Za-z_]\w*[(\[].*|\$.*|<.*>")
# A JSON key that names a secret: the whole string under it goes (``{"db_password": "x"}``).
_SECRET_KEY = re.compile(
    rf"(?:^|[^A-Za-z0-9])(?:{_KEY_CORE}|authorization|private[_-]?key)"
    r"(?:[_-](?:key|token|secret))?$",
    re.I,
)


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
    if re.search(r"api[ _-]?key|apikey|access[_-]?key", low):
        return "api_key"
    return "secret" if "secret" in low else "token"


def _is_placeholder(value: str) -> bool:
    return not value.strip() or value.startswith("[REDACTED:") or set(value) <= set("*xX.-_ ")


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
    if _is_placeholder(value):
        return m.group(0)
    if not quote:
        if _is_code_reference(value, kind):
            return m.group(0)
        if ":" in sep and kind != "password" and not _looks_secret(value):
            return m.group(0)
    return f"{key}{sep}{quote}{mark(kind)}{quote}"


def _redact_spoken_password(m: re.Match[str]) -> str:
    """ "my password is Tr0ub4dor&3" and "the password Tr0ub4dor&3" go; "the password is wrong"
    and "the password manager" stay. A quoted value or one after "is:" is taken as given."""
    if not (m["q"] or m["colon"]) and not _looks_secret(m["value"]):
        return m.group(0)
    return f"{m['word']}{m['mid']}{m['q']}{mark('password')}"


class TextRule(Protocol):
    """An extra rule (an operator's pattern): ``apply`` returns the text with matches marked."""

    @property
    def kind(self) -> str: ...

    def apply(self, text: str) -> str: ...


class Redactor:
    """The built-in rules plus any operator rules; immutable and safe to share between threads."""

    def __init__(self, extra: Sequence[TextRule] = ()) -> None:
        self.extra = tuple(extra)

    def text(self, text: str) -> str:
        """``text`` with every recognised secret replaced by ``[REDACTED:<kind>]``.

        Idempotent (``text(text(t)) == text(t)``) and total: it never raises on any string.
        Ordinary prose and code identifiers are returned unchanged.
        """
        for _ in range(_MAX_PASSES):
            redacted = self._one_pass(text)
            if redacted == text:
                break
            text = redacted
        return text

    def _one_pass(self, text: str) -> str:
        low = text.lower()
        present = {t for t in _ALL_TRIGGERS if t in low}  # one substring test per literal
        for rule in _TOKEN_RULES:
            if not rule.triggers or not present.isdisjoint(rule.triggers):
                text = rule.pattern.sub(rule.replacement, text)
        if not present.isdisjoint(_ASSIGNMENT_TRIGGERS):
            text = _ASSIGNMENT.sub(_redact_assignment, text)
        if not present.isdisjoint(_SPOKEN_TRIGGERS):
            text = _SPOKEN_PASSWORD.sub(_redact_spoken_password, text)
        for extra in self.extra:
            text = extra.apply(text)
        return text

    def value(self, data: Any) -> Any:
        """A copy of a JSON-like value (dicts, lists, strings, numbers) with every string
        redacted, and the string under a secret-named key (``password``, ``api_key``,
        ``client_secret``, ``Authorization``...) replaced whole. Iterative: any depth."""
        root: list[Any] = [data]
        stack: list[tuple[Any, Any, str | None]] = [(root, 0, None)]
        while stack:
            parent, slot, key = stack.pop()
            item = parent[slot]
            if isinstance(item, str):
                parent[slot] = self._keyed(key, item) if key is not None else self.text(item)
            elif isinstance(item, dict):
                copy: dict[Any, Any] = {}
                for k, v in item.items():
                    name = self.text(k) if isinstance(k, str) else k
                    copy[name] = v
                    stack.append((copy, name, name if isinstance(name, str) else None))
                parent[slot] = copy
            elif isinstance(item, list | tuple):
                items = list(item)
                stack.extend((items, i, None) for i in range(len(items)))
                parent[slot] = items
        return root[0]

    def _keyed(self, key: str, value: str) -> str:
        if len(key) <= 100 and _SECRET_KEY.search(key) and not _is_placeholder(value):
            low = key.lower()
            if "private" in low:
                return mark("private_key")
            return mark("token" if "author" in low else _assignment_kind(key))
        return self.text(value)

    def contains_secret(self, text: str) -> bool:
        """True when :meth:`text` would change ``text``, i.e. it holds at least one secret."""
        return self.text(text) != text


DEFAULT = Redactor()


def redact(text: str) -> str:
    """``text`` redacted with the built-in rules (see :meth:`Redactor.text`)."""
    return DEFAULT.text(text)


def contains_secret(text: str) -> bool:
    """True when :func:`redact` would change ``text``, i.e. it holds at least one secret."""
    return DEFAULT.contains_secret(text)


def redaction_markers(text: str) -> list[str]:
    """The ``[REDACTED:<kind>]`` markers present in ``text``, in order of appearance."""
    return MARKER.findall(text)
