"""The Python API: what code that builds jobs as dicts (KFP components, scripts) calls.

    import kf2jobset
    result = kf2jobset.convert_job(job_dict, target="jobset", scheduler="kueue")
    result.objects       # [JobSet, companions...] as plain dicts
    kf2jobset.convert_yaml(text)   # a whole file, comments kept, as `kf2jobset convert` writes it

Options are ConvertOptions' fields as keywords (the CLI's flags with underscores); versions may be
written as the CLI takes them ("v0.12", "v2.3"). The names differ from the package's module names
(`kf2jobset.convert` is a module), so an import elsewhere never shadows them. Errors are the CLI's: Kf2JobSetError subclasses whose
`problems` carry the path, raised instead of mapped to an exit code. Pure: no file, no network."""
from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from .convert import is_job
from .document_routing import convert_document
from .errors import InvalidJobError, Location, Problem, UsageError
from .notes import Note
from .options import ConvertOptions, parse_trainer_version, parse_version, shared_subdomain
from .pipeline import convert_source

_OPTION_NAMES = {f.name for f in fields(ConvertOptions)} - {
    # filled by the pipeline from the rest of a file, never by the caller
    "katib_trial_templates", "sibling_configmaps", "selector_peers"}


@dataclass(frozen=True)
class Converted:
    """One v1 job converted: the objects to apply and what the report says about them."""

    objects: list[dict]
    notes: list[Note]

    @property
    def printed(self) -> list[Note]:
        """The notes `kf2jobset convert` prints on stderr: act (or know) before applying."""
        return [n for n in self.notes if n.printed]


def build_options(base: ConvertOptions | None = None, **kw: Any) -> ConvertOptions:
    """ConvertOptions from keywords; unknown names are a TypeError (a typo must not pass silently)."""
    unknown = sorted(set(kw) - _OPTION_NAMES)
    if unknown:
        raise TypeError(f"unknown conversion option(s): {', '.join(unknown)}; known: {', '.join(sorted(_OPTION_NAMES))}")
    if isinstance(kw.get("jobset_version"), str):
        kw["jobset_version"] = parse_version(kw["jobset_version"])
    if isinstance(kw.get("trainer_version"), str):
        kw["trainer_version"] = parse_trainer_version(kw["trainer_version"])
    return replace(base or ConvertOptions(), **kw)


def convert_job(job: Mapping, opts: ConvertOptions | None = None, **kw: Any) -> Converted:
    """Convert one v1 job given as a mapping (it is not modified). Raises a Kf2JobSetError subclass:
    InvalidJobError (v1 refused it too, or it is not a job), UnsupportedError (needs a decision: see
    the message's hint), RejectedJobSetError (the output would be refused by the API server)."""
    options_ = build_options(opts, **kw)
    doc = copy.deepcopy(dict(job))
    if not is_job(doc):
        raise InvalidJobError(Problem(
            f"not a Kubeflow v1 job: apiVersion {doc.get('apiVersion')!r}, kind {doc.get('kind')!r}",
            Location(path=("kind",)), rule="not-a-job"))
    result = convert_document(doc, options_)
    if result.errors:
        raise result.errors[0]
    conv = result.conversions[0]
    return Converted(objects=result.outputs, notes=list(conv.notes))


def convert_yaml(text: str, opts: ConvertOptions | None = None, *, path: str = "<string>", **kw: Any) -> str:
    """Convert every v1 job of a YAML (or JSON) text, as `kf2jobset convert` writes the file: other
    documents byte for byte, comments kept. Returns the text unchanged when it holds no job; raises the
    first error (its problems name `path`, the document, line and column)."""
    options_ = build_options(opts, **kw)
    result = convert_source(text, path, options_)
    if result.errors:
        raise result.errors[0]
    if options_.name and len(result.conversions) > 1:  # given as a keyword or in ConvertOptions
        raise UsageError("name= applies to a single job, but several were converted")
    clash = shared_subdomain(options_, [c.job.namespace for c in result.conversions])
    if clash is not None:
        raise clash
    return result.new_text if result.new_text is not None else text
