"""How repo mode ends a file: the settings of a run, what happened to each file (`Outcome`), and
`deliver()` — the one place that compares, mirrors or rewrites, used by plain files and kustomize
units alike. Every OSError becomes a failed file with a one-line message and the input exit code."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .. import exitcodes
from ..options import ConvertOptions
from . import fsio  # called through the module: tests put a failing write in its place

IN_PLACE, OUT_DIR, CHECK = "in-place", "out-dir", "check"

# file statuses
UNCHANGED = "unchanged"  # nothing to do (no v1 job, or output already up to date)
CONVERTED = "converted"  # rewritten (in-place / out-dir) or would be (check)
SKIPPED = "skipped"  # not parsed on purpose (Helm template), an envsubst template that needs values, or not YAML and no job
FAILED = "failed"  # left untouched because of an error

PARALLEL_MIN_FILES = 16  # below this, worker start-up costs more than it saves

UNPARSABLE = "unparsable"  # skip reason: not YAML, and no `kind:` names a Kubeflow job (classify.has_job_evidence)
ENVSUBST_TEMPLATE = "envsubst template"  # skip reason: placeholders where kf2jobset needs the values
ENVSUBST_HINT = ("substitute the placeholders first (VAR=... envsubst < FILE | kf2jobset convert -), "
                 "then carry the changes back into the template by hand")
RENDERED_TEMPLATE = "template to render"  # skip reason: a Go text/template or Jinja file that converts only rendered
RENDER_HINT = ("render the template first (the program, Jinja or Ansible that fills it in) and convert the result "
               "(... | kf2jobset convert -), then carry the changes back into the template by hand")
HELM_HINT = ("render the chart (helm template CHART | kf2jobset convert -), "
             "then carry the changes back into the templates by hand")


@dataclass(frozen=True)
class Settings:
    mode: str
    options: ConvertOptions = ConvertOptions()
    out_dir: str | None = None
    excludes: tuple = ()
    jobs: int = 0  # 0: one worker per CPU, when there are enough files
    fail_on_change: bool = False
    gitignore: bool = True
    progress: bool | None = None  # None: only on a terminal and for runs longer than a second
    verbose: bool = False  # every job's own warning lines, not one per code
    docs: bool = False  # directory walks take Markdown files too (--docs; named .md files are always taken)

    @property
    def again(self) -> str:
        """The command `--check` names for what is left to convert: --in-place with this run's options."""
        from .check_listing import convert_again

        return convert_again(self.options)


@dataclass
class Outcome:
    """What happened to one file (small and picklable: workers send it back)."""

    path: str
    status: str = UNCHANGED
    written: str | None = None  # the file written (in-place: path; out-dir: the mirror)
    findings: list[str] = field(default_factory=list)  # check: what is still in the tree, one line each
    left: list[str] = field(default_factory=list)  # the category of each finding (repo.check_listing)
    problems: list[str] = field(default_factory=list)  # errors, formatted file:line:col: ...
    codes: list[int] = field(default_factory=list)
    reason: str | None = None  # skip reason
    notes: list[str] = field(default_factory=list)  # warnings that do not fail the file
    stale: int = 0  # converted objects an edit left stale (resized, reshaped): converting cannot fix them
    warnings: list = field(default_factory=list)  # [(path, job name, Note)] the user must know: printed grouped by code
    katib_unconverted: int = 0  # Experiments embedding v1 jobs, left alone without --katib
    runtimes: list = field(default_factory=list)  # (ClusterTrainingRuntime, bundle flavour or None) the file's TrainJobs name

    def finding(self, category: str, line: str) -> None:
        self.findings.append(line)
        self.left.append(category)


def read_bytes(path: str | None) -> bytes | None:
    if path is None:
        return None
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


def deliver(out: Outcome, source: str, data: bytes, target: str | None, settings: Settings,
            pending: "PendingWrites | None" = None) -> None:
    """--check: compare with the --out-dir mirror; --out-dir: write the mirror when it differs;
    --in-place: rewrite `source`. Writes are atomic (fsio); with `pending`, the write joins that
    batch and the outcome is settled when the batch is finished."""

    if settings.mode == CHECK:
        current = read_bytes(target)
        if current != data:
            out.status = CONVERTED
            out.finding("stale copy", f"{source}: converted output {target} is {'missing' if current is None else 'out of date'}")
        return
    dest = target if settings.mode == OUT_DIR else source
    try:
        if settings.mode == OUT_DIR:
            if read_bytes(target) == data:
                return
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        mode_from = source if settings.mode == OUT_DIR else None
        if pending is not None:
            pending.add(out, dest, data, mode_from)
            return
        fsio.write_atomic(dest, data, mode_from=mode_from)
    except OSError as exc:
        _write_failed(out, dest, exc)
        return
    out.status, out.written = CONVERTED, dest


def _write_failed(out: Outcome, dest: str, exc: OSError) -> None:
    out.status = FAILED
    out.problems.append(f"{dest}: cannot write: {exc.strerror or exc}")
    out.codes.append(exitcodes.INPUT)


class PendingWrites:
    """Writes of many plain files made durable together (fsio.AtomicBatch): each file is still
    replaced atomically, and a file whose write fails is left untouched and reported alone."""

    LIMIT = 64  # files per barrier (each holds an open descriptor until then)

    def __init__(self):
        self._batch = fsio.AtomicBatch()
        self._owners: list[tuple[Outcome, str]] = []

    def add(self, out: Outcome, dest: str, data: bytes, mode_from) -> None:
        self._batch.add(dest, data, mode_from)  # OSError: nothing touched, the caller reports it
        self._owners.append((out, dest))
        if len(self._owners) >= self.LIMIT:
            self.finish()

    def finish(self) -> None:
        owners, self._owners = self._owners, []
        failed = dict(self._batch.commit())
        for out, dest in owners:
            if dest in failed:
                _write_failed(out, dest, failed[dest])
            else:
                out.status, out.written = CONVERTED, dest
