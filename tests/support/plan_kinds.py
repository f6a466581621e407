"""A plan as the kind a test made it: `session.plans` maps ids to any kind of plan, and a test
that made an items plan reads its entries through `items_plan` (a file plan's uri through
`file_plan`), which fails on any other kind."""

from __future__ import annotations

from llm_plans import FilePlan, ItemsPlan, MarkdownPlan


def items_plan(plan: ItemsPlan | MarkdownPlan | FilePlan) -> ItemsPlan:
    assert isinstance(plan, ItemsPlan), plan
    return plan


def file_plan(plan: ItemsPlan | MarkdownPlan | FilePlan) -> FilePlan:
    assert isinstance(plan, FilePlan), plan
    return plan
