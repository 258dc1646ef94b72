"""What the source conversion of a chart template says when it cannot place a construct."""
from __future__ import annotations

RULE = "helm-source"
POST_RENDERER = ("render it with the post-renderer instead: helm template CHART --post-renderer kf2jobset "
                 "--post-renderer-args convert --post-renderer-args - (docs/renderers.md)")


class Refusal(Exception):
    """A construct the source conversion cannot place: where it is and what it is."""

    def __init__(self, message: str, line: int | None = None, file: str | None = None, slot: tuple | None = None):
        super().__init__(message)
        self.message, self.line, self.file = message, line, file
        self.slot = slot  # the stand-in it is about, when one is: a helper's may be expanded instead
