"""Loading a pydantic model from a JSON file without ever failing the app.

A missing file gives the defaults. A file that is not JSON, or holds keys that are
unknown or invalid, is first copied to ``<file>.BAK-<timestamp>``; then the valid keys
are kept and the rest take their defaults (STYLE.md habit 14: reset only the bad keys).
"""

from __future__ import annotations

import copy
import json
import logging
import shutil
import time
from pathlib import Path
from typing import Any, TypeVar

from pydantic import AliasChoices, BaseModel, ValidationError

from desktop_agent.utils.atomic import atomic_write

log = logging.getLogger("desktop_agent.config")

M = TypeVar("M", bound=BaseModel)

_MAX_ROUNDS = 64


def backup_file(path: Path) -> Path | None:
    """Copy ``path`` to ``<path>.BAK-<timestamp>`` (never overwriting an older backup)."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime())
    dest = path.with_name(f"{path.name}.BAK-{stamp}")
    n = 1
    while dest.exists():
        n += 1
        dest = path.with_name(f"{path.name}.BAK-{stamp}-{n}")
    try:
        shutil.copy2(path, dest)
    except OSError as exc:
        log.warning("Could not back up %s: %s", path, exc)
        return None
    return dest


def _remove(data: dict[str, Any], loc: tuple[int | str, ...]) -> bool:
    """Remove the smallest piece the error points at: an item of a dict/list field, else
    the whole top-level key. Returns False when nothing could be removed."""
    if not loc or loc[0] not in data:
        return False
    head = loc[0]
    assert isinstance(head, str)
    container = data[head]
    key = loc[1] if len(loc) >= 2 else None
    in_dict = isinstance(container, dict) and key in container
    in_list = isinstance(container, list) and isinstance(key, int) and 0 <= key < len(container)
    if in_dict or in_list:
        del container[key]
    else:
        del data[head]
    return True


def validate_dropping(cls: type[M], data: dict[str, Any]) -> tuple[M, list[str]]:
    """Validate ``data``, dropping what fails until the rest validates.

    Returns the model and the dotted paths of what was dropped."""
    data = copy.deepcopy(data)
    removed: list[str] = []
    for _ in range(_MAX_ROUNDS):
        try:
            return cls.model_validate(data), removed
        except ValidationError as exc:
            # One at a time: removing a list item shifts the indexes of later errors.
            loc = tuple(exc.errors()[0]["loc"])
            if not _remove(data, loc):
                break
            removed.append(_dotted(loc[:2]))
    return cls(), [*removed, "(everything)"]


def _renamed(cls: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with a top-level key of an older name (a field's other
    ``AliasChoices``) under the field's own name: read, not reported as unknown."""
    out = dict(data)
    for name, field in cls.model_fields.items():
        alias = field.validation_alias
        if not isinstance(alias, AliasChoices):
            continue
        for old in alias.choices:
            if isinstance(old, str) and old != name and old in out:
                value = out.pop(old)
                out.setdefault(name, value)
    return out


def _dotted(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _dropped(original: Any, kept: Any, prefix: str) -> list[str]:
    """Dotted paths of keys in ``original`` that did not survive into ``kept``."""
    out: list[str] = []
    if isinstance(original, dict):
        if not isinstance(kept, dict):
            return [prefix or "(file)"]
        for key, value in original.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            if key not in kept:
                out.append(path)
            else:
                out.extend(_dropped(value, kept[key], path))
    elif isinstance(original, list):
        if not isinstance(kept, list) or len(kept) != len(original):
            return [prefix]
        for i, (a, b) in enumerate(zip(original, kept, strict=True)):
            out.extend(_dropped(a, b, f"{prefix}[{i}]"))
    return out


def load_model(path: Path, cls: type[M], what: str) -> M:
    """``cls`` from the JSON file at ``path``; never raises for a bad or missing file."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return cls()
    except OSError as exc:
        log.warning("Could not read the %s file %s (%s); using defaults", what, path, exc)
        return cls()
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        saved = backup_file(path)
        log.warning(
            "The %s file %s is not a JSON object; using defaults (a copy is at %s)",
            what,
            path,
            saved,
        )
        return cls()
    model, removed = validate_dropping(cls, data)
    dropped = removed + [
        p
        for p in _dropped(_renamed(cls, data), model.model_dump(mode="json"), "")
        if p not in removed
    ]
    if dropped:
        saved = backup_file(path)
        log.warning(
            "The %s file %s had unknown or invalid keys, now ignored: %s (a copy is at %s)",
            what,
            path,
            ", ".join(dropped[:20]),
            saved,
        )
    return model


def save_model(path: Path, model: BaseModel) -> None:
    """Write ``model`` as indented JSON through the atomic helper."""
    atomic_write(Path(path), (model.model_dump_json(indent=2) + "\n").encode("utf-8"))
