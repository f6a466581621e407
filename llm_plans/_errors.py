"""Exceptions for mistakes in the code that uses llm_plans.

Problems in a model's tool arguments are never raised: they come back as a `ToolResult`
with `ok=False` for the model to read. Only misuse of the library raises::

    LLMPlansError
     ├── ConfigurationError   a session or helper was set up wrongly
     ├── StreamError          feed/finish called out of order for a streamed call
     └── ReentrancyError      a session called from inside its own send or on_commit
"""

from __future__ import annotations


class LLMPlansError(Exception):
    """Base class of every exception llm_plans raises."""


class ConfigurationError(LLMPlansError, ValueError):
    """A session or helper was given arguments it cannot work with."""


class StreamError(LLMPlansError, RuntimeError):
    """A streamed tool call was fed or finished out of order."""


class ReentrancyError(LLMPlansError, RuntimeError):
    """A session's method was called from inside its own `send` or `on_commit`, where it
    would wait for itself."""
