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
    job only: each job's own line. A job with several notes of one code (three env entries replaced)
    still gets one line: the first note's text and where the others are.
    """
    by_code: dict[str, dict] = {}
    for where, job, note in items:
        by_code.setdefault(note.code, {}).setdefault((where, job), []).append(note)
    out = []
    for code, jobs in by_code.items():
        if verbose or len(jobs) == 1:
            out += [f"warning: {where}: " + (f"{job}: " if job else "") + _one_job_text(notes)
                    for (where, job), notes in jobs.items()]
            continue
        (where, job), notes = next(iter(jobs.items()))
        text = _one_job_text(notes)[len(code) + 1:]
        if job and len(job) > 2:
            text = text.replace(job, "<job>")
        names = [j or w for w, j in jobs]
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        out.append(f"warning: {code} in {len(jobs)} jobs ({shown}; each on its own: --verbose): {text}")
    return out


def _one_job_text(notes: list) -> str:
    text = notes[0].warning_text()
    others = list(dict.fromkeys(n.source_path or n.message for n in notes[1:]))
    if others:
        text += f" (and {len(others)} more {notes[0].code}: " + ", ".join(others[:3]) + (", ..." if len(others) > 3 else "") + ")"
    return text
