"""When a failed request is tried again (Pi's auto-retry): `RetryPolicy` reads a failed
answer's `ErrorInfo` and the harness's settings, so the run loop only asks it."""

from __future__ import annotations

from dataclasses import dataclass

from desktop_agent.ai import ErrorInfo


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff from ``base_delay_ms``, at most ``max_delay_ms`` (a server's
    ``retry-after`` is honoured up to that), at most ``max_retries`` attempts."""

    enabled: bool
    max_retries: int
    base_delay_ms: int
    max_delay_ms: int

    def delay_ms(self, info: ErrorInfo, attempt: int) -> int | None:
        """The wait before attempt ``attempt`` (1, 2, ...) after an error, or None when
        the error is not retried (not retryable, retries off, or no attempts left)."""
        if not (info.retryable and self.enabled and attempt <= self.max_retries):
            return None
        delay: int = min(self.base_delay_ms * 2 ** (attempt - 1), self.max_delay_ms)
        if info.retry_after_ms is not None:
            delay = min(max(delay, info.retry_after_ms), self.max_delay_ms)
        return delay
