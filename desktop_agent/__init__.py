"""Desktop Agent: an AI agent for a project folder with durable, branchable sessions."""

__version__ = "0.1.0"
