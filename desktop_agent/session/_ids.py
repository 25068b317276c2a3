"""Identifiers: UUIDv7 for sessions, 8 random hex characters for entries."""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Container
from datetime import UTC, datetime

_lock = threading.Lock()
_last_ms = -1
_sequence = 0


def uuidv7() -> str:
    """A monotonic UUIDv7 (48-bit ms clock, 32-bit counter), as Pi generates them."""
    global _last_ms, _sequence
    rand = os.urandom(16)
    with _lock:
        now = time.time_ns() // 1_000_000
        if now > _last_ms:
            _sequence = int.from_bytes(rand[6:10], "big")
            _last_ms = now
        else:
            _sequence = (_sequence + 1) & 0xFFFFFFFF
            if _sequence == 0:
                _last_ms += 1
        ms, seq = _last_ms, _sequence
    b = bytearray(16)
    b[0:6] = ms.to_bytes(6, "big")
    b[6] = 0x70 | ((seq >> 28) & 0x0F)
    b[7] = (seq >> 20) & 0xFF
    b[8] = 0x80 | ((seq >> 14) & 0x3F)
    b[9] = (seq >> 6) & 0xFF
    b[10] = ((seq & 0x3F) << 2) | (rand[10] & 0x03)
    b[11:16] = rand[11:16]
    h = b.hex()
    return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def new_entry_id(taken: Container[str]) -> str:
    """8 random hex characters not in ``taken`` (a full UUIDv7 after 100 collisions).

    Pi's own scheme takes the first 8 characters of a UUIDv7 and collides constantly
    (SESSION_FORMAT quirk Q1); random ids are format-compatible and collision-checked.
    """
    for _ in range(100):
        candidate = secrets.token_hex(4)
        if candidate not in taken:
            return candidate
    return uuidv7()


def now_iso() -> str:
    """The current time as JavaScript's ``new Date().toISOString()`` writes it."""
    now = datetime.now(UTC)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def iso_to_ms(value: str) -> int | None:
    """``Date.parse`` of an ISO-8601 timestamp, in ms; None when it is not a date."""
    try:
        text = value[:-1] + "+00:00" if value.endswith("Z") else value
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000)
