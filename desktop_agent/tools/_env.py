"""The environment of tool subprocesses, without provider keys or other secrets.

What counts as secret is decided in one place, `desktop_agent.utils.is_secret_variable`:
key and token names (``*_API_KEY``, ``*_TOKEN``, ``*_PASSWORD``...) and any value holding a
secret the redactor knows (a key shape, a URL with a password as in ``DATABASE_URL``).
Proxy variables are kept, credentials included, so that network tools still work.
"""

from __future__ import annotations

from collections.abc import Mapping

from desktop_agent.utils import SECRET_VARIABLE_NAMES, is_secret_variable

SECRET_NAMES = SECRET_VARIABLE_NAMES
"""Names always removed."""

EXTRA_ENV = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}
"""Set for tool subprocesses: no pager waiting for a key, no credential prompt."""


def scrub_environment(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` without secret-looking variables, plus `EXTRA_ENV`."""
    clean = {k: v for k, v in env.items() if not is_secret_variable(k, v)}
    clean.update(EXTRA_ENV)
    return clean


__all__ = ["EXTRA_ENV", "SECRET_NAMES", "is_secret_variable", "scrub_environment"]
