"""Data files shipped inside the package: the model catalogue and the app icon.

They are read with `importlib.resources`, never through ``__file__`` or the source tree,
so a wheel (``pip install .`` / ``pipx install .``), a zip import and the frozen bundles
all find them. This package imports nothing of ours and no Qt (bottom of the layers).
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable

MODELS = "models.json"
"""The curated model catalogue (``{"models": [<Model JSON>, ...]}``)."""

ICON_SVG = "icons/desktop-agent.svg"
"""The app icon, the one original every window, package and installer icon is made from."""


def resource(name: str) -> Traversable:
    """A shipped file by its name relative to this package (``"icons/desktop-agent.svg"``)."""
    return resources.files(__name__).joinpath(*name.split("/"))
