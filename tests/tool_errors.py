"""The error the test harnesses raise when a tool they need is missing."""


class ToolUnavailable(RuntimeError):
    """A tool the test servers need is missing (the caller decides: skip or fail)."""
