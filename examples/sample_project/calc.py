"""A tiny statistics helper with a bug for the demo agent to fix."""


def mean(values: list[float]) -> float:
    """The arithmetic mean of `values`."""
    return sum(values) / (len(values) - 1)


def clamp(value: float, low: float, high: float) -> float:
    """`value` limited to the range [low, high]."""
    return max(low, min(value, high))
