"""Errors of the tools package."""

from __future__ import annotations


class ToolError(Exception):
    """An expected tool failure; its message is shown to the user and the model."""


class PathRefused(ToolError):
    """A path argument that resolves outside the workspace or into a protected place."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        shown = path if len(path) <= 200 else path[:199] + "…"
        super().__init__(f"Path refused: {shown!r}: {reason}")
