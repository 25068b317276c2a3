"""Small pure helpers every layer may use (file writes, secret redaction, ...).

This package sits below ``ai`` in the layers contract: it imports nothing of ours and no
Qt, so ``ai``, ``session``, ``tools``, ``config`` and the rest can all rely on it.
"""

from desktop_agent.utils._redact import (
    MARKER_PREFIX,
    PROXY_VARIABLES,
    SECRET_VARIABLE_NAMES,
    Finding,
    RedactingFilter,
    Redactor,
    StreamRedactor,
    is_secret_variable,
    marker,
)

__all__ = [
    "MARKER_PREFIX",
    "PROXY_VARIABLES",
    "SECRET_VARIABLE_NAMES",
    "Finding",
    "RedactingFilter",
    "Redactor",
    "StreamRedactor",
    "is_secret_variable",
    "marker",
]
