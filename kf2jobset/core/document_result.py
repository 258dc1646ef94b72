"""What happened to one document (DocumentResult), and an error moved under the path of the object that holds
the job it is about (a List item, a Katib trial, an AppWrapper component)."""
from __future__ import annotations

from dataclasses import dataclass, field

from .emit import Conversion
from ..errors import Kf2JobSetError, Location, Problem
from ..sources.held_jobs import EmbeddedJob


@dataclass
class DocumentResult:
    """What happened to one document. `outputs` None = pass it through unchanged."""

    outputs: list[dict] | None = None
    conversions: list[Conversion] = field(default_factory=list)
    errors: list[Kf2JobSetError] = field(default_factory=list)
    # paths (within this document) of embedded jobs, parallel to conversions/errors for Katib/List
    embedded_paths: list[tuple] = field(default_factory=list)
    # v1 jobs inside objects kf2jobset does not rewrite (AppWrapper components, ConfigMap values):
    # never converted silently, never passed silently either — the shells name each one
    unconverted: list[EmbeddedJob] = field(default_factory=list)
    # the document's own text with job text converted inside a string scalar (kf2jobset/sources/jobs_in_strings.py):
    # written as it is, instead of dumping `outputs`
    new_text: str | None = None

    @property
    def changed(self) -> bool:
        return self.outputs is not None or self.new_text is not None


def under_path(err: Kf2JobSetError, prefix: tuple) -> Kf2JobSetError:
    fixed = [Problem(p.message, Location(p.location.file, p.location.document, p.location.line, p.location.column,
                                         prefix + tuple(p.location.path)), p.rule, p.hint) for p in err.problems]
    return type(err)(fixed)
