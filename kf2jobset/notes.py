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


# Lines one code may take without --verbose: its texts most jobs share; the jobs with rarer texts are
# named on one more line (a code whose text names a per-job value must not print a line per job).
TEXTS_PER_CODE = 8


def warning_lines(items: list, verbose: bool = False) -> list[str]:
    """`warning: ...` lines for the printed notes of a run, items [(where, job name, Note)] in order.

    One line per code and text: the jobs whose notes read the same (each job's own name written
    <job>) share a line naming them, so ten alike jobs print one line, and a line never states one
    job's value (another runtime, another port) for jobs it does not hold for. A text of one job:
    that job's own line; `verbose`: each job's own line. A job with several notes of one code (three
    env entries replaced) still gets one line: the first note's text and where the others are.
    """
    by_code: dict[str, dict] = {}
    for where, job, note in items:
        by_code.setdefault(note.code, {}).setdefault((where, job), []).append(note)
    out = []
    for code, jobs in by_code.items():
        if verbose:
            out += [_job_line(where, job, notes) for (where, job), notes in jobs.items()]
            continue
        by_text: dict[str, list] = {}
        for (where, job), notes in jobs.items():
            by_text.setdefault(_generic(_one_job_text(notes), job), []).append((where, job, notes))
        texts = sorted(by_text.items(), key=lambda t: -len(t[1]))  # most jobs first; ties as met
        shown = texts if len(texts) <= TEXTS_PER_CODE + 1 else texts[:TEXTS_PER_CODE]
        for text, alike in shown:
            if len(alike) == 1:
                out.append(_job_line(*alike[0]))
            else:
                out.append(f"warning: {code} in {len(alike)} jobs ({_names(alike)}; each on its own: --verbose): "
                           + text[len(code) + 1:])
        rest = [job for _, alike in texts[len(shown):] for job in alike]
        if rest:
            out.append(f"warning: {code} in {len(rest)} more jobs, each with a text of its own "
                       f"({_names(rest)}): each on its own: --verbose")
    return out


def _job_line(where: str, job: str, notes: list) -> str:
    return f"warning: {where}: " + (f"{job}: " if job else "") + _one_job_text(notes)


def _generic(text: str, job: str) -> str:
    """The text with the job's own name written <job>, so that alike jobs read alike."""
    return text.replace(job, "<job>") if job and len(job) > 2 else text


def _names(jobs: list) -> str:
    names = [job or where for where, job, _ in jobs]
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _one_job_text(notes: list) -> str:
    text = notes[0].warning_text()
    others = list(dict.fromkeys(n.source_path or n.message for n in notes[1:]))
    if others:
        text += f" (and {len(others)} more {notes[0].code}: " + ", ".join(others[:3]) + (", ..." if len(others) > 3 else "") + ")"
    return text
