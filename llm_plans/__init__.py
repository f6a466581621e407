"""Plan tools for LLM coding agents, forwarded as spec-compliant ACP plan notifications."""

from . import tools
from ._core.results import ToolResult
from ._core.snapshot import SkippedPlan
from ._errors import ConfigurationError, LLMPlansError, ReentrancyError, StreamError
from ._limits import Limits
from ._models import (
    Change,
    CreatePlanArgs,
    FilePlan,
    ItemsPlan,
    MarkdownPlan,
    Plan,
    PlanEntry,
    RemovePlanArgs,
    UpdatePlanArgs,
)
from ._session import PlanSession
from ._version import __version__ as __version__
from ._wire.acp import ClientCapabilitiesRecorder, acp_send
from ._wire.forms import WireForm
from ._wire.outbox import Send

__all__ = [
    "Change",
    "ClientCapabilitiesRecorder",
    "ConfigurationError",
    "CreatePlanArgs",
    "FilePlan",
    "ItemsPlan",
    "LLMPlansError",
    "Limits",
    "MarkdownPlan",
    "Plan",
    "PlanEntry",
    "PlanSession",
    "ReentrancyError",
    "RemovePlanArgs",
    "Send",
    "SkippedPlan",
    "StreamError",
    "ToolResult",
    "UpdatePlanArgs",
    "WireForm",
    "acp_send",
    "tools",
]
