"""What the provider stream adapters share: in-flight calls keyed by the provider's index."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._calls import Call, Provider, native_result

if TYPE_CHECKING:
    from .._session import PlanSession


def get(obj: Any, key: str) -> Any:
    """An attribute of an SDK object, or a key of its dict form."""
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


@dataclass
class _Slot:
    call_id: str
    name: str
    done: bool = False


class StreamAdapter:
    """Base of the per-provider adapters: start, feed and finish plan calls by stream key."""

    provider: Provider

    def __init__(self, session: PlanSession) -> None:
        self._session = session
        self._slots: dict[Any, _Slot] = {}
        self._results: list[dict[str, Any]] = []
        self.truncated = False
        """The model stopped at its output token limit."""

    @property
    def results(self) -> list[dict[str, Any]]:
        """Native tool results of the plan calls finished so far, in stream order."""
        return list(self._results)

    async def on_event(self, event: Any) -> None:
        """Take one stream event (or chunk) exactly as the SDK yields it."""
        raise NotImplementedError

    async def finish(self) -> list[dict[str, Any]]:
        """Finish every plan call still open; the native results of all plan calls."""
        for key in list(self._slots):
            await self._finish(key)
        return self.results

    async def _start(self, key: Any, call_id: str, name: str) -> None:
        tool = self._session.plan_tool(name)
        if tool is not None and key not in self._slots:
            self._slots[key] = _Slot(call_id, tool)
            await self._session.feed(call_id, name, b"")

    async def _feed(self, key: Any, fragment: str) -> None:
        slot = self._slots.get(key)
        if slot is not None and not slot.done and fragment:
            await self._session.feed(slot.call_id, slot.name, fragment)

    async def _finish(self, key: Any) -> None:
        slot = self._slots.get(key)
        if slot is None or slot.done:
            return
        slot.done = True
        result = await self._session.finish(slot.call_id, truncated=self.truncated)
        call = Call(self.provider, slot.call_id, slot.name, None)
        self._results.append(native_result(call, result.content, result.ok))
