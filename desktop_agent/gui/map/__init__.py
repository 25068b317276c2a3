"""The branch map pane: a commit-graph view of the session tree (lanes, one per branch),
the Branches list, and their filter (BRANCH_MAP.md)."""

from desktop_agent.gui.map._model import BranchesModel, MapModel, MapRole, Previews
from desktop_agent.gui.map._pane import MapPane
from desktop_agent.gui.map._view import LaneColors, MapDelegate, MapView

__all__ = [
    "BranchesModel",
    "LaneColors",
    "MapDelegate",
    "MapModel",
    "MapPane",
    "MapRole",
    "MapView",
    "Previews",
]
