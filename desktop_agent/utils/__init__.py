"""Small pure helpers every layer may use (file writes, secret redaction, ...).

This package sits below ``ai`` in the layers contract: it imports nothing of ours and no
Qt, so ``ai``, ``session``, ``tools``, ``config`` and the rest can all rely on it.
"""
