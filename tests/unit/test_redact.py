"""Secret redaction: every credential shape disappears, prose and code survive untouched."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graph.redaction import DEFAULT
from sleepwake.redact import contains_secret, redact, redaction_markers

# Fake credentials are assembled from pieces so the test file itself does not look like a leak.
OPENAI = "sk-" + "proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1eF"
OPENAI_LEGACY = "sk-" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9z0X1c2V3b4"
ANTHROPIC = "sk-" + "ant-api03-" + "Xy7Zq9Wr2Ts5Uv8Ab1Cd4Ef7Gh0Ij3Kl6Mn9Op2Qr5-AA"
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SESSION_ID = "ASIA" + "Y34FZKBOKMUTVV7A"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
GITHUB_CLASSIC = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_OAUTH = "gho_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
GITHUB_APP = "ghs_" + "16C7e42F292c6912E7710c838347Ae178B4a"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEF"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
SLACK_USER = "xoxp-" + "123456789012-123456789012-123456789012-abcdef0123456789"
GOOGLE = "AIza" + "SyD-9tSrke72PouQMnMX7Kh3fHgTnbEXAMPLE"[:35]
STRIPE = "sk_" + "live_" + "51H8xYzAbCdEfGhIjKlMnOpQr"
STRIPE_RESTRICTED = "rk_" + "live_" + "51H8xYzAbCdEfGhIjKlMnOpQr"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
BEARER = "a1b2c3d4e5f6g7h8i9j0k1l2"
GITLAB = "glpat-" + "xK9mP2vL7nQ4wR8tY3zB"
SLACK_HOOK = "https://hooks.slack.com/services/" + "T0AB12CDE/B0FG34HIJ/aBcDeFgHiJkLmNoPqRsTuVwX"
SLACK_APP = "xoxa-" + "2-1234567890-abcdefghij"
SLACK_REFRESH = "xoxr-" + "1234567890-abcdefghijKL"
SLACK_LEGACY = "xoxs-" + "1234567890-abcdefghijKL"
GITHUB_USER = "ghu_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
GITHUB_REFRESH = "ghr_" + "Z1x2C3v4B5n6M7a8S9d0F1g2H3j4K5l6Q7w8"
OPENSSH_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
OPENSSH = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{OPENSSH_BODY}\n-----END OPENSSH PRIVATE KEY-----"
PGP_BODY = "lQOYBGR3kLQBCADd8jZ2c9Kq"
PGP = f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{PGP_BODY}\n-----END PGP PRIVATE KEY BLOCK-----"
PEM_BODY = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    f"{PEM_BODY}\nq3xk9mQ2ZtR8vL0pW5nYs7bC4eF1gH6jK\n"
    "-----END RSA PRIVATE KEY-----"
)


REDACTED_CASES = [
    # (kind, text, secret substring that must vanish)
    ("openai_key", f"my key is {OPENAI}, keep it safe", OPENAI),
    ("openai_key", f"OPENAI={OPENAI_LEGACY}", OPENAI_LEGACY),
    ("anthropic_key", f"export ANTHROPIC_API_KEY={ANTHROPIC}", ANTHROPIC),
    ("aws_access_key_id", f"the access key id is {AWS_ID}.", AWS_ID),
    ("aws_access_key_id", f"session creds {AWS_SESSION_ID}", AWS_SESSION_ID),
    ("aws_secret_access_key", f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET),
    ("aws_secret_access_key", f'"AWS_SECRET_ACCESS_KEY": "{AWS_SECRET}"', AWS_SECRET),
    ("github_token", f"git clone https://{GITHUB_CLASSIC}@github.com/x/y", GITHUB_CLASSIC),
    ("github_token", f"token {GITHUB_OAUTH}", GITHUB_OAUTH),
    ("github_token", f"app token {GITHUB_APP} expires soon", GITHUB_APP),
    ("github_token", f"PAT: {GITHUB_PAT}", GITHUB_PAT),
    ("slack_token", f"bot token {SLACK}", SLACK),
    ("slack_token", f"user token {SLACK_USER}", SLACK_USER),
    ("google_api_key", f"maps key {GOOGLE} in the config", GOOGLE),
    ("stripe_key", f"charge with {STRIPE}", STRIPE),
    ("stripe_key", f"restricted {STRIPE_RESTRICTED}", STRIPE_RESTRICTED),
    ("jwt", f"session cookie {JWT}", JWT),
    ("bearer_token", f"Authorization: Bearer {BEARER}", BEARER),
    ("private_key", f"here is the key:\n{PEM}\nthanks", PEM_BODY),
    ("password", "password=hunter2", "hunter2"),
    ("password", "DB_PASSWORD='correct horse battery'", "correct horse battery"),
    ("password", "passwd: s3cr3t-Pa55", "s3cr3t-Pa55"),
    ("password", "my password is Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("password", 'if password == "letmein99":', "letmein99"),
    ("secret", "client_secret=Zx81mQp0Lk", "Zx81mQp0Lk"),
    ("secret", "secret=swordfish", "swordfish"),
    ("token", "token=abc123def456", "abc123def456"),
    ("token", '{"refresh_token": "r1-2f9aZ"}', "r1-2f9aZ"),
    ("api_key", "api_key=9f8e7d6c5b4a", "9f8e7d6c5b4a"),
    ("api_key", "X-API-KEY: 0a1b2c3d4e5f6a7b", "0a1b2c3d4e5f6a7b"),
    ("url_password", "postgres://admin:hunter2@db.internal:5432/app", "hunter2"),
    ("url_password", "connect to neo4j+s://neo4j:S3cretPw@abc.databases.neo4j.io", "S3cretPw"),
    *[
        (kind, text, secret)
        for kind, text, secret in [
            ("gitlab_token", f"CI uses {GITLAB} for the registry", GITLAB),
            ("slack_webhook", f"post to {SLACK_HOOK} when done", SLACK_HOOK),
            ("slack_token", f"app token {SLACK_APP}", SLACK_APP),
            ("slack_token", f"refresh {SLACK_REFRESH}", SLACK_REFRESH),
            ("slack_token", f"legacy {SLACK_LEGACY}", SLACK_LEGACY),
            ("github_token", f"user-to-server {GITHUB_USER}", GITHUB_USER),
            ("github_token", f"refresh {GITHUB_REFRESH}", GITHUB_REFRESH),
            ("aws_secret_access_key", f"my AWS secret is {AWS_SECRET}, rotate it", AWS_SECRET),
            ("private_key", f"key:\n{OPENSSH}", OPENSSH_BODY),
            ("private_key", f"{PGP}", PGP_BODY),
            ("password", "the db password: hunter2", "hunter2"),
            ("password", "pwd=abc123", "abc123"),
            ("password", "PGPASSWORD=Tr1cky psql -h db", "Tr1cky"),
            ("password", "the password is: swordfish", "swordfish"),
            ("password", 'the password is "swordfish"', "swordfish"),
            ("password", "the pwd is Sun2024!", "Sun2024"),
            ("password", "I will remember the password Quartz#Lamp77.", "Quartz#Lamp77"),
            ("api_key", "our api key: AbC123xyz987", "AbC123xyz987"),
            ("url_password", "redis://:s3cretpw@cache:6379/0", "s3cretpw"),
            ("card_number", "card 4111 1111 1111 1111, exp 12/29", "4111 1111 1111 1111"),
            ("card_number", "4111-1111-1111-1111", "4111-1111-1111-1111"),
            ("card_number", "pay with 5555555555554444 please", "5555555555554444"),
            ("card_number", "amex 3782 822463 10005", "3782 822463 10005"),
            ("card_number", "amex 378282246310005", "378282246310005"),
            ("card_number", "diners 3056 930902 5904", "3056 930902 5904"),
            ("card_number", "old visa 4222 2222 2222 2", "4222 2222 2222 2"),
        ]
    ],
]


@pytest.mark.parametrize(("kind", "text", "secret"), REDACTED_CASES)
def test_each_kind_is_redacted(kind: str, text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out
    assert f"[REDACTED:{kind}]" in out
    assert contains_secret(text)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("password=hunter2", "password="),
        ("Authorization: Bearer " + BEARER, "Authorization: Bearer "),
        ("postgres://admin:hunter2@db:5432/app", "postgres://admin:"),
        ("postgres://admin:hunter2@db:5432/app", "@db:5432/app"),
        ("api_key=9f8e7d6c5b4a and then we deploy", "and then we deploy"),
    ],
)
def test_labels_and_context_survive(text: str, kept: str) -> None:
    assert kept in redact(text)


def test_assignment_keeps_key_name_and_quotes() -> None:
    assert redact('DB_PASSWORD="hunter2"') == 'DB_PASSWORD="[REDACTED:password]"'


def test_pem_block_is_removed_whole() -> None:
    out = redact(f"before\n{PEM}\nafter")
    assert out == "before\n[REDACTED:private_key]\nafter"
    assert "BEGIN" not in out


def test_truncated_pem_block_is_removed_to_the_end() -> None:
    out = redact(f"oops: -----BEGIN PRIVATE KEY-----\n{PEM_BODY}")
    assert PEM_BODY not in out


UNCHANGED = [
    "I went to a LGBTQ support group yesterday and it was so powerful.",
    "The context window is 400000 tokens and the budget is $30.",
    "We chose Neo4j over Postgres because we need graph traversals.",
    "The password is wrong, please reset it.",
    "My password is too short.",
    "The secret: nobody knew about the party.",
    "Bearer authentication is simpler than OAuth.",
    "I use sk-learn-style pipelines for preprocessing.",
    "max_tokens=4096",
    "tokens: 400000",
    "token_count = len(tokens)",
    "password=password",
    "token = os.environ['GITHUB_TOKEN']",
    "api_key=self.api_key",
    "password=None",
    "def get_token(self) -> str:",
    "see https://example.com/docs?page=2 for details",
    "connect to bolt://localhost:7687",
    "AKIA is the prefix of an access key id.",
    "Store it in a secrets manager, never in the repo.",
    "graph.store.TopicStore uses repo_refactor internally.",
    # near misses: identifiers, dates, money, phones and numbers that are not cards
    "request 123e4567-e89b-12d3-a456-426614174000 failed",
    "fixed in da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "the secret is in commit da39a3ee5e6b4b0d3255bfef95601890afd80709",
    "on 2024-01-15T10:00:00Z and again on 15/01/2024",
    "the house cost $1,234,567.89 and the car 4,999.00 EUR",
    "call +1 (555) 123-4567 or +44 20 7946 0958 or 555-123-4567",
    "call +4915112345678 or 4915112345678",
    "ISBN 978-3-16-148410-0",
    "order 1234567890123456 shipped",
    "epoch ms 1700000000000, ns 1700000000000000000",
    "arn:aws:iam::123456789012:role/deploy",
    "bad card 4111 1111 1111 1112",
    "numbers 2345 6789 0123 4567 in a list",
    "The meeting is at 10:30, room 4111.",
    "IP 192.168.1.1, version 2.4.1",
    "https://user@example.com/path and mailto:john@example.com",
    "the pin is in the drawer",
    "the password is correct",
    "a token bucket limits the rate; tokens: 5",
    "the secret sauce is butter",
    "our api key is in the vault",
    "password: password",
    "the password manager and the password reset link",
    "",
]


@pytest.mark.parametrize("text", UNCHANGED)
def test_ordinary_text_is_unchanged(text: str) -> None:
    assert redact(text) == text
    assert not contains_secret(text)


def test_markers_are_listed_in_order() -> None:
    out = redact(f"{AWS_ID} then {JWT}")
    assert redaction_markers(out) == ["[REDACTED:aws_access_key_id]", "[REDACTED:jwt]"]


def test_already_redacted_text_is_not_a_secret() -> None:
    assert not contains_secret("password=[REDACTED:password] and [REDACTED:jwt]")


_FRAGMENTS = st.sampled_from(
    [case[1] for case in REDACTED_CASES]
    + UNCHANGED
    + ["password", "=", ":", "@", "://", "Bearer ", "sk-", "eyJ", "'", '"', "\n", " ", "[REDACTED:"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_FRAGMENTS, st.text(max_size=20)), max_size=8).map("".join))
def test_redact_is_idempotent(text: str) -> None:
    once = redact(text)
    assert redact(once) == once


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_redact_never_raises_and_never_grows_secrets(text: str) -> None:
    out = redact(text)
    assert isinstance(out, str)
    assert contains_secret(out) is False


def test_luhn_decides_whether_a_card_shaped_number_goes() -> None:
    valid = ["4111111111111111", "5500005555555559", "340000000000009", "6011000990139424"]
    for number in valid:
        assert redact(f"n {number} n") == "n [REDACTED:card_number] n"
    for number in ["4111111111111112", "5500005555555550", "340000000000001"]:
        assert redact(f"n {number} n") == f"n {number} n"


def test_grouped_card_needs_one_kind_of_separator() -> None:
    assert redact("4111 1111-1111 1111") == "4111 1111-1111 1111"


def test_json_values_under_secret_keys_go_whole() -> None:
    data = {
        "name": "deploy",
        "arguments": {"password": "correct horse", "db_password": "x9", "max_tokens": "4096"},
        "headers": [{"Authorization": "Basic dXNlcjpwYXNz"}, {"X-API-Key": "short"}],
        "note": f"use {OPENAI}",
        "count": 3,
        "ok": True,
        "nothing": None,
        "client_secret": "",
    }
    out = DEFAULT.value(data)
    assert out["arguments"] == {
        "password": "[REDACTED:password]",
        "db_password": "[REDACTED:password]",
        "max_tokens": "4096",
    }
    assert out["headers"] == [
        {"Authorization": "[REDACTED:token]"},
        {"X-API-Key": "[REDACTED:api_key]"},
    ]
    assert out["note"] == "use [REDACTED:openai_key]"
    assert (out["name"], out["count"], out["ok"], out["nothing"]) == ("deploy", 3, True, None)
    assert out["client_secret"] == ""
    assert data["arguments"]["password"] == "correct horse"  # the input is not changed


def test_json_value_of_any_depth_is_redacted_without_recursion() -> None:
    deep: object = f"key {GITHUB_CLASSIC}"
    for _ in range(5000):
        deep = [{"x": deep}]
    out = DEFAULT.value(deep)
    for _ in range(5000):
        assert isinstance(out, list)
        out = out[0]["x"]
    assert out == "key [REDACTED:github_token]"


def test_json_keys_are_redacted_too() -> None:
    assert DEFAULT.value({f"token {SLACK}": 1}) == {"token [REDACTED:slack_token]": 1}


N = 100_000
ADVERSARIAL = {
    "a": "a" * N,
    "dash": "-" * N,
    "spaces": "a" + " " * N + "b",
    "newlines": "a" + "\n" * N + "b",
    "dots": "." * N,
    "digits": "2" * N,
    "password: ": ("password: " * N)[:N],
    "password is ": ("password is " * N)[:N],
    "eyJ": ("eyJ" * N)[:N],
    "eyJ.": ("eyJaaaaaaaa." * N)[:N],
    "sk-": ("sk-" * N)[:N],
    "key_": ("a_token_" * N)[:N],
    "url": ("ab://cd:ef@" * N)[:N],
    "url user": "x://" + "u" * N,
    "card groups": ("4111 " * N)[:N],
    "secret base64": ("aB3/" * 10 + " secret ") * (N // 48),
    "BEGIN": ("-----BEGIN PRIVATE KEY-----" * N)[:N],
    "bearer": "Bearer " + "1" * N,
    "quotes": ("password='" * N)[:N],
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_text_is_redacted_in_linear_time(name: str) -> None:
    """100k characters in well under a second on a quiet machine (a quadratic rule takes
    minutes); the limit is loose because the test machine is shared."""
    started = time.perf_counter()
    redact(ADVERSARIAL[name])
    assert time.perf_counter() - started < 3.0
