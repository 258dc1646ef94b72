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

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from .api_input import job_document
from .argo_steps import ARGO_PLACEHOLDER_RE, argo_notes, argo_problem, tree_put_back, tree_with_stand_ins
from .convert import is_job
from .document_routing import convert_document
from .errors import InvalidJobError, Kf2JobSetError, Location, Problem, UsageError
from .notes import Note
from .options import ConvertOptions, keyword_spelling, parse_trainer_version, parse_version, shared_subdomain
from .pipeline import convert_text
from .targets import target_of

# convert_job(placeholders=): what a string may hold for a program to fill in before the job is applied
PLACEHOLDERS = ("envsubst", "argo")  # `${VAR}`/`$VAR` (always, as in files); also Argo's `{{...}}`
_OPTION_NAMES = {f.name for f in fields(ConvertOptions)} - {
    # filled by the pipeline from the rest of a file, never by the caller
    "katib_trial_templates", "sibling_configmaps", "selector_peers"}


@dataclass(frozen=True)
class Converted:
    """One v1 job converted: the objects to apply and what the report says about them."""

    objects: list[dict]
    notes: list[Note]
    kind: str = "JobSet"  # what the job became (the target's kind): JobSet or TrainJob

    @property
    def primary(self) -> dict:
        """The JobSet or TrainJob (a TrainJob's ConfigMaps may come before it: objects are in apply order)."""
        return next(o for o in self.objects if o.get("kind") == self.kind)

    @property
    def companions(self) -> list[dict]:
        """Every other object: ConfigMaps, Services, PodGroups, a TrainJob's TrainingRuntime."""
        primary = self.primary
        return [o for o in self.objects if o is not primary]

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


def convert_job(job: Mapping, opts: ConvertOptions | None = None, *, placeholders: str = "envsubst",
                **kw: Any) -> Converted:
    """Convert one v1 job given as a mapping (it is not modified). Raises a Kf2JobSetError subclass:
    InvalidJobError (v1 refused it too, or it is not a job), UnsupportedError (needs a decision: see
    the message's hint), RejectedJobSetError (the output would be refused by the API server)."""
    try:
        options_ = build_options(opts, **kw)
        if placeholders not in PLACEHOLDERS:
            raise UsageError(f"placeholders={placeholders!r}: choose one of {', '.join(map(repr, PLACEHOLDERS))}")
        doc = job_document(job)
        if not is_job(doc):
            raise InvalidJobError(Problem(
                f"not a Kubeflow v1 job: apiVersion {doc.get('apiVersion')!r}, kind {doc.get('kind')!r}",
                Location(path=("kind",)), rule="not-a-job"))
        back: dict[str, str] = {}
        if placeholders == "argo":
            doc, back = tree_with_stand_ins(doc)
        result = convert_document(doc, options_)
        if result.errors:
            err = result.errors[0]
            raise type(err)([argo_problem(p, back) if back else _argo_hint(p) for p in err.problems])
    except Kf2JobSetError as err:
        raise in_python(err) from None
    notes = argo_notes(result.conversions[0].notes, back) if back else result.conversions[0].notes
    return Converted(objects=tree_put_back(result.outputs, back), notes=[_note_in_python(n) for n in notes],
                     kind=target_of(options_).kind_written)


def _argo_hint(p: Problem) -> Problem:
    """A value refused for holding `{{...}}`: name the switch that reads it as the Argo placeholder it is."""
    if not ARGO_PLACEHOLDER_RE.search(p.message):
        return p
    switch = "if Argo fills it in, convert with placeholders='argo'"
    return replace(p, hint=f"{p.hint}; {switch}" if p.hint else switch)


def in_python(err: Kf2JobSetError) -> Kf2JobSetError:
    """The error as a Python caller reads it: keywords where the CLI's messages name flags (same type,
    same problems and fields), raised with the traceback of where it was found."""
    return err.rephrased(keyword_spelling).with_traceback(err.__traceback__)


def _note_in_python(note: Note) -> Note:
    return replace(note, message=keyword_spelling(note.message),
                   action=keyword_spelling(note.action) if note.action else note.action)


def convert_yaml(text: str, opts: ConvertOptions | None = None, *, path: str = "<string>", **kw: Any) -> str:
    """Convert every v1 job of a YAML (or JSON) text, as `kf2jobset convert` writes the file: other
    documents byte for byte, comments kept. Returns the text unchanged when it holds no job; raises the
    first error (its problems name `path`, the document, line and column)."""
    try:
        options_ = build_options(opts, **kw)
        result = convert_text(text, path, options_)
        if result.errors:
            raise result.errors[0]
        if options_.name and len(result.conversions) > 1:  # given as a keyword or in ConvertOptions
            raise UsageError("name= applies to a single job, but several were converted")
        clash = shared_subdomain(options_, [c.job.namespace for c in result.conversions])
        if clash is not None:
            raise clash
    except Kf2JobSetError as err:
        raise in_python(err) from None
    return result.new_text if result.new_text is not None else text
