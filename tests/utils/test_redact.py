"""The redactor: every known shape replaced by its marker, code left alone, streams."""

from __future__ import annotations

import logging
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_agent.utils import (
    RedactingFilter,
    Redactor,
    is_secret_variable,
    marker,
)
from tests.helpers.canaries import Canary, env_lines, make_canaries

CANARIES = make_canaries(seed=11)


@pytest.mark.parametrize("canary", CANARIES, ids=lambda c: c.name)
def test_every_shape_is_redacted_with_its_kind(canary: Canary) -> None:
    text = f"before {canary.planted} after"
    out = Redactor().redact(text)
    assert canary.value not in out
    assert canary.value[-16:] not in out
    assert marker(canary.kind) in out
    assert out.startswith("before ") and out.endswith(" after")
    assert Redactor().redact(out) is out  # idempotent: a marker is never redacted again


def test_surroundings_are_kept_byte_for_byte() -> None:
    r = Redactor()
    by_name = {c.name: c for c in CANARIES}
    url = by_name["database url"]
    assert r.redact(f"DATABASE_URL={url.planted}") == (
        "DATABASE_URL=postgres://app:[redacted: password]@db.internal:5432/app"
    )
    bearer = by_name["bearer"].value
    assert r.redact(f"curl -H 'Authorization: Bearer {bearer}'") == (
        "curl -H 'Authorization: Bearer [redacted: bearer token]'"
    )
    openai = by_name["openai"].value
    assert r.redact(f'{{"api_key": "{openai}", "n": 1}}') == (
        '{"api_key": "[redacted: openai key]", "n": 1}'
    )
    assert r.redact(f"OPENAI_API_KEY={openai}\nPATH=/usr/bin") == (
        "OPENAI_API_KEY=[redacted: openai key]\nPATH=/usr/bin"
    )
    assert r.redact("aws_secret_access_key = abcdEFGH1234/abcdEFGH1234+abcdEFGH1234ab") == (
        "aws_secret_access_key = [redacted: aws secret key]"
    )


def test_an_aws_secret_that_begins_with_a_slash_is_a_secret_not_a_path() -> None:
    """AWS secret keys are 40 base64 characters, "/" and "+" among them: one in 64 begins
    with "/", and was kept as "a path" (the canaries test failed ~1.6% of its runs); a
    path in a key-named variable stays as it is."""
    r = Redactor()
    for value in (
        "/2UXRXiUOoRYacsXpJHtFdnLq7Mben6qds825o55",
        "/YqqvEz6j/3ZgKo0ub409s7iGs71VKJXWvbmxoJ6",
    ):
        assert r.redact(f"AWS_SECRET_ACCESS_KEY={value}\n") == (
            "AWS_SECRET_ACCESS_KEY=[redacted: aws secret key]\n"
        )
    for line in (
        "SSH_KEY=/home/me/.ssh/id_rsa",
        "KEY_PATH=/etc/ssl/private/server.key",
        "TOKEN_FILE=/run/secrets/token",
        "API_KEY_DIR=/Users/JohnSmith/Library/Keys",
    ):
        assert r.redact(line) == line


def test_an_env_dump_keeps_nothing_secret() -> None:
    out = Redactor().redact(env_lines(CANARIES) + "HOME=/home/me\nPWD=/work\nLANG=C.UTF-8\n")
    for canary in CANARIES:
        assert canary.value not in out, canary.name
    assert "HOME=/home/me\nPWD=/work\nLANG=C.UTF-8\n" in out


def test_private_key_without_its_end_line_is_cut_to_the_end() -> None:
    pem = next(c for c in CANARIES if c.name == "private key").planted
    truncated = "key:\n" + pem.rsplit("\n", 2)[0]
    assert Redactor().redact(truncated) == "key:\n[redacted: private key]"


CODE = [
    "token = get_token()",
    "self.token = token",
    "password=password",
    "api_key = settings.API_KEY",
    "PWD=/home/me",
    "token_type: bearer",
    "connect(user=u, password=pw)",
    'if token == "(":',
    "x := token",
    "max_tokens=4096",
    '"inputTokens": 12, "thinkingSignature": "abc"',
    "password: HiddenText | None = None",
    "token: A reference to a previous Context.",
    "the --password option sets it",
    "--token $TOKEN",
    'api_key = os.environ["OPENAI_API_KEY"]',
    "secret = None",
    "def check(password: str) -> bool:",
    "see https://example.com:8080/path?q=1",
    "TOKEN = 0",
    "Token: '#cccccc',",
    "sk-learn and risk-taking",
]


@pytest.mark.parametrize("line", CODE)
def test_code_and_prose_are_left_alone(line: str) -> None:
    assert Redactor().redact(line) is line


def test_literal_secrets_are_redacted_whatever_their_shape() -> None:
    r = Redactor()
    odd = "local-server-key-0f3a9"
    assert r.redact(f"key {odd}!") == f"key {odd}!"
    r.add_secret(odd, "local server key")
    assert r.redact(f"key {odd}!") == "key [redacted: local server key]!"
    r.add_secret("short")  # under 8 characters: ignored (would redact ordinary words)
    assert r.redact("a short text") == "a short text"
    # shapes=False (redaction turned off for a session) still removes the app's own keys
    openai = CANARIES[0].value
    assert r.redact(f"{odd} {openai}", shapes=False) == f"[redacted: local server key] {openai}"


def test_redact_json_keeps_identity_and_skipped_fields() -> None:
    r = Redactor()
    clean = {"a": ["x", {"b": 1}], "c": "text"}
    assert r.redact_json(clean) is clean
    openai = CANARIES[0].value
    value = {"id": openai, "args": {"content": f"KEY={openai}"}, "n": [1, openai]}
    out = r.redact_json(value, skip=lambda key, _parent: key == "id")
    assert out == {
        "id": openai,
        "args": {"content": "KEY=[redacted: openai key]"},
        "n": [1, "[redacted: openai key]"],
    }
    assert value["args"] == {"content": f"KEY={openai}"}  # the input is not modified


def test_findings_name_each_secret() -> None:
    text = "\n".join(c.planted for c in CANARIES)
    kinds = [f.kind for f in Redactor().findings(text)]
    assert kinds == [c.kind for c in CANARIES]


# ----------------------------------------------------------------------------- streams


def _feed(data: bytes, sizes: list[int]) -> bytes:
    stream = Redactor().stream()
    out = b""
    i = 0
    for size in sizes:
        out += stream.feed(data[i : i + size])
        i += size
    out += stream.feed(data[i:])
    return out + stream.finish()


def test_stream_in_any_chunking_equals_redacting_the_whole() -> None:
    text = (
        "line one\n"
        + "\n".join(c.planted for c in CANARIES)
        + "\nünïcödé ✓ tail without newline "
        + CANARIES[1].value
    )
    data = text.encode()
    whole = Redactor().redact(text).encode()
    rng = random.Random(3)
    for _ in range(30):
        sizes = [rng.randint(1, 40) for _ in range(rng.randint(1, 60))]
        assert _feed(data, sizes) == whole
    assert _feed(data, [1] * len(data)) == whole


def test_stream_keeps_bytes_that_are_not_utf8() -> None:
    data = b"\xff\xfe binary \x80\n" + CANARIES[0].value.encode() + b"\n\xc3"
    out = _feed(data, [3, 5, 7])
    assert out.startswith(b"\xff\xfe binary \x80\n[redacted: openai key]\n")
    assert out.endswith(b"\xc3")


def test_stream_private_key_over_many_feeds_becomes_one_marker() -> None:
    pem = next(c for c in CANARIES if c.name == "private key").planted
    data = f"start\n{pem}\nend\n".encode()
    out = _feed(data, [10] * (len(data) // 10))
    assert out == b"start\n[redacted: private key]\nend\n"


def test_stream_long_line_never_cuts_through_a_secret() -> None:
    key = CANARIES[1].value
    filler = "x" * (70 * 1024 - 10)
    data = (filler + " " + key + " " + filler).encode()
    for first in (len(filler) - 4096 + 5, 64 * 1024 + 1, 4096):
        out = _feed(data, [first, 30, 70_000])
        assert key.encode() not in out
        assert b"[redacted: anthropic key]" in out


# ----------------------------------------------------------------------------- property


_SEPARATORS = st.sampled_from([" ", "\n", "\t", '"', "'", "=", ": ", "(", ")", ",", ";"])


@settings(max_examples=200, deadline=None)
@given(
    before=st.text(max_size=40),
    after=st.text(max_size=40),
    left=_SEPARATORS,
    right=_SEPARATORS,
    index=st.integers(min_value=0, max_value=len(CANARIES) - 1),
)
def test_a_canary_between_any_text_never_survives(
    before: str, after: str, left: str, right: str, index: int
) -> None:
    canary = CANARIES[index]
    text = before + left + canary.planted + right + after
    out = Redactor().redact(text)
    assert canary.value not in out
    assert Redactor().redact(out) == out


# ----------------------------------------------------------------------------- env, logs


def test_secret_variables() -> None:
    assert is_secret_variable("OPENAI_API_KEY", "x")
    assert is_secret_variable("MY_SERVICE_TOKEN", "x")
    assert is_secret_variable("DATABASE_URL", "sqlite:///x.db")
    assert is_secret_variable("REDIS_URL", "redis://:pw123456@cache:6379/0")
    assert is_secret_variable("SOMETHING", CANARIES[2].value)
    assert not is_secret_variable("HOME", "/home/me")
    assert not is_secret_variable("PWD", "/work")
    assert not is_secret_variable("TOKENIZERS_PARALLELISM", "false")
    # Proxies keep their credentials: network tools need them to work at all.
    assert not is_secret_variable("https_proxy", "http://me:pw123456@proxy:3128")


def test_logging_filter_redacts_message_args_and_traceback() -> None:
    key = CANARIES[1].value
    filt = RedactingFilter()
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "sending %s", (key,), None)
    assert filt.filter(record)
    assert key not in record.getMessage() and "[redacted: anthropic key]" in record.getMessage()
    try:
        raise RuntimeError(f"401 from server; X-Api-Key: {key}")
    except RuntimeError as exc:
        record = logging.LogRecord(
            "x", logging.ERROR, __file__, 1, "failed", (), (type(exc), exc, exc.__traceback__)
        )
    assert filt.filter(record)
    formatted = logging.Formatter().format(record)
    assert key not in formatted and "RuntimeError" in formatted
    odd = "local-key-1234567"
    filt.add_secrets([odd, None])
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "k=%r", (odd,), None)
    filt.filter(record)
    assert odd not in record.getMessage()
