"""Harness tests use the real Pi package to check the files they produce."""

from tests.interop.conftest import pi

__all__ = ["pi"]
