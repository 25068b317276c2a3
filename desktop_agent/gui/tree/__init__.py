"""The branch tree: every entry of a session as a foldable tree, current path marked."""

from desktop_agent.gui.tree._model import SessionTreeModel, TreeRole
from desktop_agent.gui.tree._widget import BranchTree, LabelTagDelegate

__all__ = [
    "BranchTree",
    "LabelTagDelegate",
    "SessionTreeModel",
    "TreeRole",
]
