"""The Python API: what code that builds jobs (KFP components, launchers, notebooks, scripts) calls.

    import kf2jobset
    result = kf2jobset.convert_job(job, target="jobset", scheduler="kueue")   # a dict or an SDK model
    result.primary       # the JobSet (or TrainJob) as a plain dict; result.companions: the rest
    result.to_yaml()     # what `kf2jobset convert` prints for it
    kf2jobset.convert_yaml(text)   # a whole file, comments kept, as `kf2jobset convert` writes it

Options are ConvertOptions' fields as keywords (the CLI's flags with underscores: ConvertKeywords); versions may
be written as the CLI takes them ("v0.12", "v2.3"). The names differ from the package's module names
(`kf2jobset.core.convert` is a module), so an import elsewhere never shadows them. Errors are the CLI's, raised:
Kf2JobSetError subclasses whose `problems` carry path, rule and hint, worded for Python (keywords where the CLI
names flags). Pure: no file, no network (kf2jobset.live talks to clusters)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from .job_input import job_document
from .resources import Resource, resource_of
from ..sources.argo_steps import ARGO_PLACEHOLDER_RE, argo_notes, argo_problem, tree_put_back, tree_with_stand_ins
from ..core.convert import is_job
from ..core.document_routing import convert_document
from ..errors import InvalidJobError, Kf2JobSetError, Location, Problem, UsageError
from ..notes import Note
from ..options import ConvertOptions, keyword_spelling, parse_trainer_version, parse_version, shared_subdomain
from ..files.pipeline import convert_source
from ..targets import target_of

if TYPE_CHECKING:
    from typing_extensions import Unpack

# convert_job(placeholders=): what a string may hold for a program to fill in before the job is applied
Placeholders = Literal["envsubst", "argo"]  # `${VAR}`/`$VAR` (always, as in files); also Argo's `{{...}}`
PLACEHOLDERS: tuple[str, ...] = ("envsubst", "argo")
_OPTION_NAMES = {f.name for f in fields(ConvertOptions)} - {
    # filled by the pipeline from the rest of a file, never by the caller
    "katib_trial_templates", "sibling_configmaps", "selector_peers"}


class ConvertKeywords(TypedDict, total=False):
    """The conversion options as keywords, for type checkers: each is the ConvertOptions field of that name
    (documented there); the choices are choices.py's (tests/test_api_typing.py holds them equal)."""

    jobset_version: str | tuple[int, int]
    scheduler: Literal["none", "kueue", "volcano", "scheduler-plugins", "yunikorn"]
    gang_scheduler_name: str
    name: str | None
    subdomain: str | None
    keep_kubeflow_labels: bool
    ssh_secret: str | None
    accept_mpi_ssh: bool
    mpi_hostfile: Literal["auto", "configmap", "generated"]
    cluster_domain: str | None
    katib: bool
    target: Literal["jobset", "trainjob"]
    trainer_version: str | tuple[int, int]
    trainer_runtime: Literal["auto", "per-job", "generated"]
    v1_pod_services: bool


@dataclass(frozen=True)
class Converted:
    """One v1 job converted.

    objects: every object to apply, as plain dicts, in the order to create them.
    notes: the report's findings: `code`, `category` (unchanged, rewritten, approximated, dropped,
        prerequisite, breaking: mildest first), `message`, `action` (what to do), `source_path` (in the v1
        job) and `target_path` (in the output), `printed` (act or know before applying).
    kind: what the job became: "JobSet" or "TrainJob".
    """

    objects: list[dict[str, Any]]
    notes: list[Note]
    kind: str = "JobSet"

    @property
    def primary(self) -> dict[str, Any]:
        """The JobSet or TrainJob (a TrainJob's ConfigMaps may come before it: objects are in apply order)."""
        return next(o for o in self.objects if o.get("kind") == self.kind)

    @property
    def companions(self) -> list[dict[str, Any]]:
        """Every other object: ConfigMaps, Services, PodGroups, a TrainJob's TrainingRuntime."""
        primary = self.primary
        return [o for o in self.objects if o is not primary]

    @property
    def printed(self) -> list[Note]:
        """The notes `kf2jobset convert` prints on stderr: act (or know) before applying."""
        return [n for n in self.notes if n.printed]

    def resources(self) -> list[tuple[Resource, dict[str, Any]]]:
        """(where it is served, object) for each object, in apply order: `Resource.group`, `.version`,
        `.plural`, `.namespaced` are what CustomObjectsApi's create calls take."""
        return [(resource_of(o), o) for o in self.objects]

    def to_yaml(self) -> str:
        """The objects as one YAML stream, each starting with `---`, as `kf2jobset convert` writes them."""
        from ..text.yamlio import dump_documents

        return dump_documents(self.objects)


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


def convert_job(job: Mapping[str, Any] | object, opts: ConvertOptions | None = None, *,
                placeholders: Placeholders = "envsubst", **kw: Unpack[ConvertKeywords]) -> Converted:
    """Convert one v1 job (any kind and apiVersion the CLI reads) into a JobSet or a TrainJob.

    job: a mapping in the API's camelCase, or an OpenAPI model (kubeflow.training's KubeflowOrgV1PyTorchJob,
        kubernetes.client's V1ObjectMeta ...) at any depth, serialized as the Kubernetes client sends it. It
        is not modified. Keys in snake_case (model.to_dict()) are refused: pass the model itself.
    opts: a ConvertOptions to start from; keywords given replace its fields.
    placeholders: "envsubst" (`${VAR}` carried where the value is only copied, as in files) or "argo"
        (Argo's `{{...}}` too, as in a resource step's manifest).

    Raises a Kf2JobSetError subclass, each with `problems` (path, rule, hint): InputError (not a value a
    client could send), InvalidJobError (v1 refused it too, or it is not a job), UnsupportedError (a
    decision only you can make: the hint names the keyword), RejectedJobSetError (the API server would
    refuse the output), UsageError (an option's value); TypeError for an unknown keyword."""
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


def in_python(err: Kf2JobSetError, flags: dict[str, str] | None = None) -> Kf2JobSetError:
    """The error as a Python caller reads it: keywords where the CLI's messages name flags (same type,
    same problems and fields), raised with the traceback of where it was found. `flags`: a front end's
    own flags and their Python spelling (options.keyword_spelling)."""
    return err.rephrased(lambda text: keyword_spelling(text, flags)).with_traceback(err.__traceback__)


def _note_in_python(note: Note) -> Note:
    return replace(note, message=keyword_spelling(note.message),
                   action=keyword_spelling(note.action) if note.action else note.action)


def convert_yaml(text: str, opts: ConvertOptions | None = None, *, path: str = "<string>",
                 **kw: Unpack[ConvertKeywords]) -> str:
    """Convert every v1 job of a YAML (or JSON) text, as `kf2jobset convert` writes the file: other
    documents byte for byte, comments kept, Argo steps and envsubst templates as the CLI reads them.
    Returns the text unchanged when it holds no job; raises the first error (its problems name `path`, the
    document, line and column). Options as for convert_job."""
    try:
        options_ = build_options(opts, **kw)
        result = convert_source(text, path, options_)
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


def _with_options_help(doc: str | None) -> str:
    """A docstring with the options' documentation (ConvertOptions') after it: what help() shows."""
    options = (ConvertOptions.__doc__ or "").split("\n\n")[1]  # the fields' paragraph
    return f"{doc}\n\n    Options (keywords, or the fields of `opts`):\n\n{options.rstrip()}\n"


convert_job.__doc__ = _with_options_help(convert_job.__doc__)
convert_yaml.__doc__ = _with_options_help(convert_yaml.__doc__)
