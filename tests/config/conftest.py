"""Keyring backends for the config tests: a dict in memory (tests/helpers/keyring.py),
and keyring's own "fail" backend."""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import keyring.backend
import keyring.errors
import pytest
from keyring.backends import fail

from tests.helpers.keyring import MemoryKeyring


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """A `MemoryKeyring` installed as keyring's backend for the test."""
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def fail_keyring() -> Iterator[fail.Keyring]:
    """keyring's "no backend" backend, as on a headless Linux box."""
    previous = keyring.get_keyring()
    backend = fail.Keyring()  # type: ignore[no-untyped-call]
    keyring.set_keyring(backend)
    try:
        yield backend
    finally:
        keyring.set_keyring(previous)
