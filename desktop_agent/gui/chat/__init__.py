"""The chat pane: the messages of the current branch as cards (ARCHITECTURE §5)."""

from desktop_agent.gui.chat._delegate import ChatDelegate
from desktop_agent.gui.chat._items import ChatItem
from desktop_agent.gui.chat._model import ChatModel
from desktop_agent.gui.chat._pane import ChatPane
from desktop_agent.gui.chat._view import ChatView

__all__ = ["ChatDelegate", "ChatItem", "ChatModel", "ChatPane", "ChatView"]
