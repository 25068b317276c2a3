"""The environment of tool subprocesses, without provider keys or other secrets."""

from __future__ import annotations

import re
from collections.abc import Mapping

SECRET_NAMES = frozenset(
    {
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "AZURE_OPENAI_API_KEY",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "MISTRAL_API_KEY",
        "GROQ_API_KEY",
        "OPENROUTER_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "HF_TOKEN",
    }
)
"""Names always removed."""

_SECRET_NAME = re.compile(
    r"(?:_API_KEY|APIKEY|_TOKEN|_SECRET|_SECRET_KEY|_ACCESS_KEY|_PASSWORD|_PASSWD"
    r"|_CREDENTIALS?|_PRIVATE_KEY)$|^(?:API_KEY|TOKEN|SECRET|PASSWORD)$",
    re.IGNORECASE,
)
"""Name shapes removed (``*_API_KEY``, ``*_TOKEN``, ``*_SECRET``, ...)."""

_SECRET_VALUE = re.compile(
    r"""
    ^(?:
        sk-[A-Za-z0-9_-]{16,}                 # OpenAI / Anthropic (sk-ant-...) style keys
      | (?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}  # GitHub tokens
      | github_pat_[A-Za-z0-9_]{20,}
      | glpat-[A-Za-z0-9_-]{20,}              # GitLab
      | xox[abprs]-[A-Za-z0-9-]{10,}          # Slack
      | AKIA[0-9A-Z]{16}                      # AWS access key id
      | AIza[0-9A-Za-z_-]{35}                 # Google API key
      | hf_[A-Za-z0-9]{30,}                   # Hugging Face
    )$
    """,
    re.VERBOSE,
)
"""Value shapes of known keys, removed whatever the variable is called."""

EXTRA_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}
"""Set for tool subprocesses: no pager waiting for a key, no credential prompt."""


def is_secret_variable(name: str, value: str) -> bool:
    """Whether an environment variable looks like a key, token or password."""
    return (
        name.upper() in SECRET_NAMES
        or _SECRET_NAME.search(name) is not None
        or _SECRET_VALUE.match(value.strip()) is not None
    )


def scrub_environment(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` without secret-looking variables, plus `EXTRA_ENV`."""
    clean = {k: v for k, v in env.items() if not is_secret_variable(k, v)}
    clean.update(EXTRA_ENV)
    return clean
