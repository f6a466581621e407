"""What the client holds: no repeats, resync after failures, the legacy list included."""

from __future__ import annotations

from llm_plans import Limits, WireForm
from llm_plans._book import Stored
from llm_plans._legacy import Flattener, read_plan_file
from llm_plans._outbox import Outbox
from llm_plans.testing import RecordingSend

PLAN = Stored("markdown", "m", content="- [ ] a")


def outbox(form: WireForm, send: RecordingSend) -> Outbox:
    return Outbox(send, "s", form, Flattener(Limits(), None, read_plan_file))


async def test_an_update_the_client_holds_is_not_sent_again() -> None:
    send = RecordingSend()
    box = outbox(WireForm.SCHEMA, send)
    assert await box.show({"m": PLAN}, ["m"]) is None
    assert await box.show({"m": Stored("markdown", "m", content="- [ ] a")}, ["m"]) is None
    assert len(send.sent) == 1
    await box.show({}, ["m"])
    await box.show({}, ["m"])
    assert send.updates[1:] == [{"sessionUpdate": "plan_removed", "planId": "m"}]
    await box.show({}, ["never-shown"])
    assert len(send.sent) == 2


async def test_what_did_not_arrive_goes_out_with_the_next_change() -> None:
    send = RecordingSend()
    box = outbox(WireForm.DOCUMENTS, send)
    send.fail_with = ConnectionError("down")
    failure = await box.show({"m": PLAN}, ["m"])
    assert isinstance(failure, ConnectionError)
    assert box.stale
    send.fail_with = None
    other = Stored("markdown", "n", content="x")
    await box.show({"m": PLAN, "n": other}, ["n"])
    assert [u["plan"]["id"] for u in send.updates] == ["m", "n"]
    assert not box.stale


async def test_the_legacy_list_is_resent_until_it_arrives_even_when_empty() -> None:
    send = RecordingSend()
    box = outbox(WireForm.LEGACY, send)
    await box.show({"m": PLAN}, ["m"])
    send.fail_with = ConnectionError("down")
    assert await box.show({}, ["m"]) is not None
    send.fail_with = None
    await box.show({}, [], force=True)
    assert send.updates[-1] == {"sessionUpdate": "plan", "entries": []}
