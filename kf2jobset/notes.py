"""Mapping notes: every decision the planner makes that is not a plain copy.

A note is made at the moment the decision is made, so the report cannot drift from the code.
Categories, mildest first: rewritten (different text, same meaning), approximated (close, not
identical), dropped (no JobSet equivalent), prerequisite (the same once you do something before
applying: create a Secret, delete the old object), breaking (the workload must change to keep working).
"""
from __future__ import annotations

from dataclasses import dataclass

CATEGORIES = ("unchanged", "rewritten", "approximated", "dropped", "prerequisite", "breaking")


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
        must act (breaking, prerequisite) or must know before applying (warn)."""
        return self.category in ("breaking", "prerequisite") or self.warn

    def warning_text(self) -> str:
        return f"{self.code} {self.message}" + (f" (action: {self.action})" if self.action else "")


def warning_lines(items: list, verbose: bool = False) -> list[str]:
    """`warning: ...` lines for the printed notes of a run, items [(where, job name, Note)] in order.

    One line per code, naming the jobs it concerns, with the first job's text (its name written as
    <job>): ten alike jobs print one line per code, not ten. `verbose`, or a code that concerns one
    job only: each job's own line.
    """
    by_code: dict[str, list] = {}
    for item in items:
        by_code.setdefault(item[2].code, []).append(item)
    out = []
    for code, entries in by_code.items():
        if verbose or len({(w, j) for w, j, _ in entries}) == 1:  # one job (which may have several)
            out += [f"warning: {where}: " + (f"{job}: " if job else "") + note.warning_text() for where, job, note in entries]
            continue
        where, job, note = entries[0]
        text = note.warning_text()[len(code) + 1:]
        if job and len(job) > 2:
            text = text.replace(job, "<job>")
        names = [j or w for w, j in dict.fromkeys((w, j) for w, j, _ in entries)]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        out.append(f"warning: {code} in {len(names)} jobs ({shown}; each on its own: --verbose): {text}")
    return out
