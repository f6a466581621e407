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


def endpoint(exc: BaseException) -> str | None:
    """The URL a failed SDK call went to, when the error carries its request."""
    request = getattr(exc, "request", None) or getattr(
        getattr(exc, "response", None), "request", None
    )
    url = getattr(request, "url", None)
    return str(url) if url is not None else None


def trouble(exc: BaseException) -> str:
    """What went wrong, in a few words for the user."""
    status = getattr(exc, "status_code", None)
    if isinstance(status, int):
        return f"model API answered HTTP {status}"
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "APITimeoutError" in names:
        return "model API timed out"
    if "APIConnectionError" in names:
        return "model API unreachable"
    return "model API call failed"


OnRetry = Callable[[str], Awaitable[None]]


def _wait(state: RetryCallState) -> float:
    asked = retry_after(state.outcome.exception() if state.outcome else None)
    return asked if asked is not None else _backoff(state)


async def with_retries(
    call: Callable[[], Awaitable[T]],
    *,
    attempts: int = ATTEMPTS,
    wait: Any = _wait,
    on_retry: OnRetry | None = None,
) -> T:
    """Run `call`, again after transient errors; other errors propagate at once.

    `on_retry` hears each wait as it starts ("model API unreachable, retrying in 4 s (2/5)"),
    so a user is not left looking at nothing for the whole backoff.
    """

    async def tell(state: RetryCallState) -> None:
        if on_retry is None or state.outcome is None or state.next_action is None:
            return
        exc = state.outcome.exception()
        next_try = state.attempt_number + 1
        await on_retry(
            f"{trouble(exc) if exc else 'model API failed'}, retrying in "
            f"{state.next_action.sleep:.3g} s ({next_try}/{attempts})\n"
        )

    async for attempt in AsyncRetrying(
        stop=stop_after_attempt(attempts),
        wait=wait,
        retry=retry_if_exception(is_transient),
        before_sleep=tell,
        reraise=True,
    ):
        with attempt:
            return await call()
    raise AssertionError("unreachable: tenacity reraises the last error")
