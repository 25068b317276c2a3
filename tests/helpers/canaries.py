"""Canary secrets: fake but well-formed keys of every shape the redactor knows.

Generated afresh for every run from random characters (no key-shaped literal sits in the
repository, so no secret scanner flags it and no test can pass by matching a fixed
string). `scan` looks for each canary's value, and for its last 16 characters, so a
partly redacted secret counts as found too.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_ALNUM = string.ascii_letters + string.digits


@dataclass(frozen=True)
class Canary:
    name: str
    value: str
    """The secret itself: must never be found on disk."""
    planted: str
    """How it appears in text (an assignment, a header, the bare key...)."""
    kind: str
    """The kind its marker names."""
    env_name: str | None = None
    """The environment variable that holds it, for ``env`` dumps."""

    @property
    def needles(self) -> tuple[str, str]:
        return self.value, self.value[-16:]


def _rand(rng: random.Random, n: int, alphabet: str = _ALNUM) -> str:
    text = "".join(rng.choice(alphabet) for _ in range(n - 1))
    return text + rng.choice(string.digits)  # a digit somewhere, as real keys have


def make_canaries(seed: int | None = None) -> list[Canary]:
    """One canary of each shape (OpenAI, Anthropic, GitHub, AWS, Slack, Google, Hugging
    Face, Stripe, JWT, Bearer, X-Api-Key, private key, password=, DATABASE_URL)."""
    rng = random.Random(seed)
    upper = string.ascii_uppercase + string.digits
    b64 = _ALNUM + "+/"
    openai = "sk-" + "proj-" + _rand(rng, 48)
    anthropic = "sk-" + "ant-" + "api03-" + _rand(rng, 48)
    github = "gh" + "p_" + _rand(rng, 36)
    github_pat = "github" + "_pat_" + _rand(rng, 40)
    aws_id = "AK" + "IA" + _rand(rng, 16, upper)
    aws_secret = _rand(rng, 40, b64)
    slack = "xo" + "xb-" + _rand(rng, 12, string.digits) + "-" + _rand(rng, 24)
    google = "AI" + "za" + _rand(rng, 35)
    hf = "hf" + "_" + _rand(rng, 34)
    stripe = "sk" + "_live_" + _rand(rng, 24)
    jwt = "ey" + "J" + _rand(rng, 20) + ".ey" + "J" + _rand(rng, 30) + "." + _rand(rng, 43)
    bearer = _rand(rng, 40)
    x_api_key = _rand(rng, 32)
    password = _rand(rng, 14) + "!x"
    db_password = _rand(rng, 18)
    pem_body = "\n".join(_rand(rng, 64, b64) for _ in range(6))
    begin = "-----" + "BEGIN RSA PRIVATE KEY-----"
    end = "-----" + "END RSA PRIVATE KEY-----"
    return [
        Canary("openai", openai, openai, "openai key", "OPENAI_API_KEY"),
        Canary("anthropic", anthropic, anthropic, "anthropic key", "ANTHROPIC_API_KEY"),
        Canary("github", github, github, "github token", "GITHUB_TOKEN"),
        Canary("github pat", github_pat, github_pat, "github token", "GH_PAT"),
        Canary("aws key id", aws_id, aws_id, "aws access key", "AWS_ACCESS_KEY_ID"),
        Canary(
            "aws secret",
            aws_secret,
            f"AWS_SECRET_ACCESS_KEY={aws_secret}",
            "aws secret key",
            "AWS_SECRET_ACCESS_KEY",
        ),
        Canary("slack", slack, slack, "slack token", "SLACK_BOT_TOKEN"),
        Canary("google", google, google, "google api key", "GOOGLE_API_KEY"),
        Canary("hugging face", hf, hf, "hugging face token", "HF_TOKEN"),
        Canary("stripe", stripe, stripe, "stripe key", "STRIPE_KEY"),
        Canary("jwt", jwt, jwt, "jwt", "SESSION_JWT"),
        Canary("bearer", bearer, f"Authorization: Bearer {bearer}", "bearer token"),
        Canary("x-api-key", x_api_key, f"X-Api-Key: {x_api_key}", "api key"),
        Canary("password", password, f"password={password}", "password", "DB_PASSWORD"),
        Canary(
            "database url",
            db_password,
            f"postgres://app:{db_password}@db.internal:5432/app",
            "password",
            "DATABASE_URL",
        ),
        Canary(
            "private key", pem_body.splitlines()[2], f"{begin}\n{pem_body}\n{end}", "private key"
        ),
    ]


def env_lines(canaries: Iterable[Canary]) -> str:
    """A ``.env`` file (or an ``env`` dump) holding every canary that has a variable."""
    lines = []
    for c in canaries:
        if c.env_name is None:
            continue
        value = c.planted if c.name == "database url" else c.value
        lines.append(f"{c.env_name}={value}")
    return "\n".join(lines) + "\n"


def env_vars(canaries: Iterable[Canary]) -> dict[str, str]:
    out: dict[str, str] = {}
    for c in canaries:
        if c.env_name is not None:
            out[c.env_name] = c.planted if c.name == "database url" else c.value
    return out


def scan_bytes(data: bytes, canaries: Iterable[Canary]) -> list[str]:
    """Names of the canaries found in ``data`` (as UTF-8, or JSON-escaped)."""
    found = []
    for c in canaries:
        for needle in c.needles:
            raw = needle.encode()
            escaped = needle.replace("/", "\\/").encode()
            if raw in data or escaped in data:
                found.append(c.name)
                break
    return found


def scan_tree(roots: Iterable[Path], canaries: list[Canary]) -> dict[str, list[str]]:
    """Every file under ``roots`` that holds a canary: path -> canary names."""
    hits: dict[str, list[str]] = {}
    for root in roots:
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in paths:
            try:
                data = path.read_bytes()
            except OSError:
                continue
            found = scan_bytes(data, canaries)
            if found:
                hits[str(path)] = found
    return hits
