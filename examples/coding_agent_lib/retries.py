"""Retrying transient model-API errors with tenacity: backoff with jitter, Retry-After honoured."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_exponential_jitter

T = TypeVar("T")

# Both SDKs retry on their own; they are built with max_retries=0 so the two never multiply.
ATTEMPTS = 5
# A server asking for more than a minute is better answered by telling the user.
MAX_RETRY_AFTER = 60.0
_backoff = wait_exponential_jitter(initial=1, max=30)


def is_transient(exc: BaseException) -> bool:
    """Rate limits, timeouts, lost connections, 5xx and "overloaded" are worth another try."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return status in (408, 409, 429) or status >= 500
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"APIConnectionError", "APITimeoutError"})


def retry_after(exc: BaseException | None) -> float | None:
    """Seconds the server asked us to wait, from its Retry-After header."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for key in ("retry-after-ms", "retry-after"):
        value = headers.get(key)
        if value is None:
            continue
        try:
            seconds = float(value) / (1000 if key.endswith("ms") else 1)
        except ValueError:
            continue
        return min(max(seconds, 0.0), MAX_RETRY_AFTER)
    return None


def _wait(state: RetryCallState) -> float:
    asked = retry_after(state.outcome.exception() if state.outcome else None)
    return asked if asked is not None else _backoff(state)


async def with_retries(
    call: Callable[[], Awaitable[T]], *, attempts: int = ATTEMPTS, wait: Any = _wait
) -> T:
    """Run `call`, again after transient errors; other errors propagate at once."""
    async for attempt in AsyncRetrying(
        stop=stop_after_attempt(attempts),
        wait=wait,
        retry=retry_if_exception(is_transient),
        reraise=True,
    ):
        with attempt:
            return await call()
    raise AssertionError("unreachable: tenacity reraises the last error")
