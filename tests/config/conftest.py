"""Keyring backends for tests: a dict in memory, and keyring's own "fail" backend."""

from __future__ import annotations

from collections.abc import Iterator

import keyring
import keyring.backend
import keyring.errors
import pytest
from keyring.backends import fail


class MemoryKeyring(keyring.backend.KeyringBackend):
    """Secrets in a dict. Not viable for auto-detection, so it never becomes anyone's
    default backend by accident; tests install it explicitly."""

    priority = 1
    viable = False

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if (service, username) not in self.store:
            raise keyring.errors.PasswordDeleteError("not found")
        del self.store[(service, username)]


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
