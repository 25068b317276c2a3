"""API keys in a file only the user can read: for machines without a keychain.

``keys.json`` in the config folder (never ``settings.json``), as Pi's and Codex's
``auth.json``: a JSON object ``{"provider": "key"}``, mode 0600, replaced atomically (a
temporary file created 0600 beside it, synced, renamed). A file others can read is
narrowed to 0600 when read, with a log line. The shell's sandbox hides the whole config
folder, so a command the agent runs cannot read it either.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import tempfile
from pathlib import Path

log = logging.getLogger("desktop_agent.config.keyfile")

KEY_FILE_NAME = "keys.json"


class KeyFileError(OSError):
    """The key file could not be read or written; ``str()`` is a sentence for the user."""


class KeyFile:
    """Provider keys in one 0600 JSON file (see the module doc)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"KeyFile({str(self.path)!r})"

    def load(self) -> dict[str, str]:
        """The keys in the file ({} when there is none); a damaged file is an error."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise KeyFileError(
                f"The key file {self.path} cannot be read: {exc.strerror}."
            ) from None
        if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            log.warning("%s could be read by others: narrowed to 0600", self.path)
            with contextlib.suppress(OSError):
                os.chmod(self.path, 0o600)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise KeyFileError(
                f"The key file {self.path} cannot be read: {exc.strerror}."
            ) from None
        except ValueError:
            raise KeyFileError(
                f"The key file {self.path} is not valid JSON; it is left as it is."
            ) from None
        if not isinstance(data, dict):
            raise KeyFileError(f"The key file {self.path} does not hold an object of keys.")
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str) and v}

    def set(self, provider: str, key: str | None) -> None:
        """Keep ``key`` for ``provider`` (None: remove it), replacing the file atomically."""
        keys = self.load()
        if key is None:
            if provider not in keys:
                return
            del keys[provider]
        else:
            keys[provider] = key
        self._write(keys)

    def _write(self, keys: dict[str, str]) -> None:
        folder = self.path.parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".keys-", suffix=".tmp", dir=folder)  # 0600
        except OSError as exc:
            raise KeyFileError(
                f"The key file cannot be written in {folder}: {exc.strerror}."
            ) from None
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(keys, f, indent=2, sort_keys=True)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise KeyFileError(f"The key file {self.path} was not saved: {exc.strerror}.") from None


__all__ = ["KEY_FILE_NAME", "KeyFile", "KeyFileError"]
