"""Mapping notes: every decision the planner makes that is not a plain copy.

A note is made at the moment the decision is made, so the report cannot drift from the code.
Categories, mildest first: rewritten (different text, same meaning), approximated (close, not
identical), dropped (no JobSet equivalent), breaking (the workload must change to keep working).
"""
from __future__ import annotations

from dataclasses import dataclass

CATEGORIES = ("unchanged", "rewritten", "approximated", "dropped", "breaking")


@dataclass(frozen=True)
class Note:
    code: str
    category: str
    message: str
    source_path: str | None = None
    target_path: str | None = None
    action: str | None = None
    # What runtime differences this note explains: ("env", "MASTER_ADDR"), ("init", "init-pytorch"),
    # ("lifecycle", "cleanPodPolicy") … The report's invariant uses these.
    explains: tuple = ()
    replica_type: str | None = None
    warn: bool = False  # the user must act before applying: `convert` prints it on stderr too
    # What the message asserts about the emitted objects, checkable (kf2jobset/claims.py), or why
    # nothing it asserts can be read from them (tests/test_claims.py holds every note to one of the two).
    claims: tuple = ()
    unchecked: str | None = None

    def __post_init__(self):
        if self.category not in CATEGORIES:
            raise ValueError(f"unknown note category {self.category!r}")

    @property
    def printed(self) -> bool:
        """Every front end (stream, repo mode and the hook, the plugin) prints it on stderr: the user
        must act (breaking) or must know before applying (warn)."""
        return self.category == "breaking" or self.warn

    def warning_text(self) -> str:
        return f"{self.code} {self.message}" + (f" (action: {self.action})" if self.action else "")
