"""Repo mode: convert manifests in place (--in-place), into a mirror tree (--out-dir), or check only.

One run:
1. walk the arguments (kf2jobset.repo.walk: .gitignore and --exclude, no symlinks);
2. read every file and classify it from its text (classify: no YAML parsing for files that cannot
   hold a v1 job; Helm templates are skipped and counted);
3. kustomizations that point at v1 kinds/fields, with their patch files, are handled as units
   (kustomize);
4. candidate files are converted (kf2jobset.files.pipeline: only converted documents are re-written,
   every other byte is kept), in worker processes when there are many;
5. results are written atomically (fsio) or compared (--check), and reported: one line per file
   on stdout, problems and a one-line summary on stderr.

Returns an exit code (kf2jobset.exitcodes); never calls sys.exit.
"""
from __future__ import annotations

import dataclasses
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .. import exitcodes
from ..sources.katib_trials import KATIB_EXPERIMENT
from ..text.filenames import is_template_name
from .walk import Found, walk
from ..mappings import kubeflow_job_kind
from ..text import classify as cls
from ..runtime.selectors import SELECTING_TEXT
from ..checks.edit_checks import may_hold_edit
from ..targets.bundle_gang import GANG_ANNOTATION

from . import check_listing
from .run_summary import Summary, report_outcomes
from .fsio import read_source
from .outcome import (CHECK, CONVERTED, ENVSUBST_HINT, ENVSUBST_TEMPLATE, FAILED, HELM_HINT, IN_PLACE, OUT_DIR, PARALLEL_MIN_FILES,  # noqa: F401
                      RENDER_HINT, RENDERED_TEMPLATE, SKIPPED, UNCHANGED, UNPARSABLE, Outcome, PendingWrites, Settings, deliver, read_bytes)


@dataclass
class Task:
    path: str
    text: str
    bom: bool
    target: str | None  # out-dir mirror path
    chart: str | None = None  # a template of this chart directory, converted at the source (repo/charts.py)


# ---- per-file work (runs in workers) ---------------------------------------------------------------

_SETTINGS: Settings | None = None


def _init_worker(settings: Settings) -> None:
    global _SETTINGS
    _SETTINGS = settings


def _convert_chunk(tasks: list[Task]) -> list[Outcome]:
    """A worker's unit: whole files in, small outcomes back (no parsed documents cross processes);
    the chunk's writes share one durability barrier."""
    pending = PendingWrites()
    outcomes = [convert_file(task, _SETTINGS, pending) for task in tasks]
    pending.finish()
    return outcomes


def convert_file(task: Task, settings: Settings, pending=None) -> Outcome:
    from ..sources.markdown import convert_file_text

    if task.chart is not None:
        from .charts import convert_chart_file

        return convert_chart_file(task, settings, pending)
    out = Outcome(task.path)
    try:
        result = convert_file_text(task.text, task.path, settings.options)
    except Exception as exc:  # a bug must not take the other files down; report it on this one
        out.status = FAILED
        out.problems.append(f"{task.path}: internal error: {type(exc).__name__}: {exc} (please report it)")
        out.codes.append(exitcodes.INTERNAL)
        return out
    check = settings.mode == CHECK
    template = is_template_name(task.path) or result.engine is not None
    if result.errors:
        _not_converted(out, task, result, settings, template)
        return out
    if not settings.options.katib:
        out.katib_unconverted = katib_embedded(result)
    lines = check_listing.file_lines(task.path, result, template, again=settings.again)
    if not check:
        out.notes += [f"warning: {line}" for category, line in lines if category == check_listing.EMBEDDED]
    if not result.changed:
        if check:
            for category, line in lines:
                out.finding(category, line)
        return out
    _record_conversions(out, task, result)
    if check and task.target is None:
        out.status = CONVERTED
        for category, line in lines:
            out.finding(category, line)
        return out
    if check:  # --check --out-dir: jobs embedded in other objects stay in the copy too
        for category, line in lines:
            if category == check_listing.EMBEDDED:
                out.finding(category, line)
    data = (b"\xef\xbb\xbf" if task.bom else b"") + result.new_text.encode("utf-8")
    deliver(out, task.path, data, task.target, settings, pending)
    return out


def _not_converted(out: Outcome, task: Task, result, settings: Settings, template: bool) -> None:
    """A file with errors: skipped when it cannot hold a job or is a template that needs its values,
    failed otherwise; --check lists the jobs still in it."""
    check = settings.mode == CHECK
    if unparsable_without_job(result, settings.options.katib):
        # The pre-filter let it through (it mentions kubeflow.org and a job kind) but it is not YAML
        # and no `kind:` names a job: a file that cannot hold a job never fails a run.
        out.status, out.reason = SKIPPED, UNPARSABLE
        first = result.errors[0].problems[0]
        out.notes.append(f"skipped (not YAML, and no Kubeflow job in it): {first}")
        return
    if needs_values(result) or (template and _parse_errors_only(result)):
        # Like a Helm template: skipped and counted, named with the way forward; --check lists its jobs.
        # A template file that is not YAML (another template syntax) is skipped the same way.
        out.status, out.reason = SKIPPED, ENVSUBST_TEMPLATE if result.engine is None else RENDERED_TEMPLATE
        if check:
            for category, line in check_listing.file_lines(task.path, result, template=True, again=settings.again):
                out.finding(category, line)
        else:
            kind = "envsubst template" if needs_values(result) and result.engine is None else f"{result.engine} file"
            out.notes += [f"skipped ({kind.strip()}): {p}"
                          for err in result.errors for p in err.problems]
        return
    out.status = FAILED
    for err in result.errors:
        out.problems += [str(p) for p in err.problems]
        out.codes.append(exitcodes.for_error(err))
    if check:  # every job of the file is still there: each is listed with its reason
        for category, line in check_listing.file_lines(task.path, result, template, again=settings.again):
            out.finding(category, line)


def _record_conversions(out: Outcome, task: Task, result) -> None:
    """What a changed file's conversions tell the run: comments dropped, the notes every front end
    prints, the ClusterTrainingRuntimes its TrainJobs need."""
    if result.dropped_comments:
        out.notes.append(f"{task.path}: {result.dropped_comments} comment(s) sat on v1 fields that have no JobSet "
                         "counterpart and were dropped")
    out.warnings += [(task.path, conv.job.display_name(), note)
                     for conv in result.conversions for note in conv.notes if note.printed]
    out.runtimes = [(o["spec"]["runtimeRef"]["name"], (o["metadata"].get("annotations") or {}).get(GANG_ANNOTATION))
                    for conv in result.conversions for o in conv.output or ()
                    if o.get("kind") == "TrainJob" and o["spec"]["runtimeRef"].get("kind") == "ClusterTrainingRuntime"]


def unparsable_without_job(result, katib: bool) -> bool:
    """Every error is a document that did not parse, nothing parsed holds a job, and the text has no
    `kind: <job kind>` with kubeflow.org (classify.has_job_evidence)."""
    if any(r.errors or r.conversions or r.unconverted for r in result.results):
        return False
    return _parse_errors_only(result) and not cls.has_job_evidence(result.text, katib)


def _parse_errors_only(result) -> bool:
    parse_errors = {id(doc.error) for doc in result.documents if doc.error is not None}
    return all(id(err) in parse_errors for err in result.errors)


def needs_values(result) -> bool:
    """Every error is a placeholder where kf2jobset needs the value (an envsubst template), or template text
    that decides what the file holds (a Go text/template or Jinja file)."""
    from ..sources.brace_templates import RULE as TEMPLATE_RULE
    from ..sources.envsubst import RULE

    return all(p.rule in (RULE, TEMPLATE_RULE) for err in result.errors for p in err.problems)


def katib_embedded(result) -> int:
    count = 0
    for doc in result.documents:
        data = doc.data
        if isinstance(data, dict) and (data.get("apiVersion"), data.get("kind")) == KATIB_EXPERIMENT:
            spec = data.get("spec")
            template = spec.get("trialTemplate") if isinstance(spec, dict) else None
            # any Kubeflow job kind, a misspelt one too (refused once --katib converts it)
            count += bool(kubeflow_job_kind(template.get("trialSpec"))) if isinstance(template, dict) else 0
    return count


# ---- the run ---------------------------------------------------------------------------------------

@dataclass
class _Sorted:
    """The run's files, read and sorted (`read_and_sort`): what converts, the kustomize units, what is already
    decided, and what the run as a whole needs to know before any file converts."""

    settings: Settings
    targets: dict  # out-dir mirror paths
    summary: Summary = field(default_factory=Summary)
    outcomes: list[Outcome] = field(default_factory=list)
    tasks: list[Task] = field(default_factory=list)
    kustomizations: list = field(default_factory=list)
    maybe_patches: list = field(default_factory=list)
    helm_with_jobs: list[str] = field(default_factory=list)
    converted_templates: list[str] = field(default_factory=list)
    resized: dict[str, list] = field(default_factory=dict)  # path -> converted JobSets edited away from their recorded sizes
    selecting: list = field(default_factory=list)  # (path, text) of files with Services, PDBs, NetworkPolicies, PodMonitors

    def read_and_sort(self, f) -> str | None:
        """Read and sort one file into tasks / kustomize units; returns its class (None: failed)."""
        settings = self.settings
        self.summary.scanned += 1
        try:
            src = read_source(f.path)
        except Exception as err:  # InputError: unreadable or not UTF-8
            if _irrelevant_bytes(f.path, settings):  # e.g. a Latin-1 file that cannot hold a v1 job
                self.outcomes.append(Outcome(f.path))
                return cls.SKIP
            problems = [str(p) for p in getattr(err, "problems", [])] or [f"{f.path}: {err}"]
            self.outcomes.append(Outcome(f.path, FAILED, problems=problems, codes=[exitcodes.INPUT]))
            return None
        kind = cls.classify(f.path, src.text, settings.options.katib)
        if kind != cls.HELM and may_hold_edit(src.text):  # resized, reshaped, renamed since conversion
            self.resized[f.path] = check_listing.edited_lines(f.path, src.text)
        if kind not in (cls.HELM, cls.MARKDOWN) and SELECTING_TEXT.search(src.text):
            self.selecting.append((f.path, src.text))
        if kind == cls.SKIP and settings.options.katib and "ConfigMap" in src.text and "kf2jobset.dev/source" in src.text:
            self.converted_templates.append(src.text)  # a trial template converted earlier: its Experiments may follow
        if kind == cls.SKIP:
            self.outcomes.append(Outcome(f.path))
        elif kind == cls.HELM:
            return self._helm_template(f, src)
        elif kind == cls.KUSTOMIZATION:
            self.kustomizations.append((f, src))
        elif kind == cls.MARKDOWN:  # never a kustomize patch
            self.tasks.append(Task(f.path, src.text, src.bom, self.targets.get(f.path)))
        else:
            if kind == cls.CANDIDATE:
                self.tasks.append(Task(f.path, src.text, src.bom, self.targets.get(f.path)))
            self.maybe_patches.append((f, src))
        return kind

    def _helm_template(self, f, src) -> str:
        """A chart's template holding a job is converted at the source; any other is skipped and counted."""
        holds_job = cls.may_hold_job(src.text, self.settings.options.katib)
        chart = cls.chart_of(f.path) if holds_job else None
        if chart is not None:
            self.tasks.append(Task(f.path, src.text, src.bom, self.targets.get(f.path), chart=chart))
            return cls.HELM
        self.summary.skipped["Helm templates"] = self.summary.skipped.get("Helm templates", 0) + 1
        out = Outcome(f.path, SKIPPED, reason="Helm template")
        if holds_job:
            self.helm_with_jobs.append(f.path)
            if self.settings.mode == CHECK:
                for category, line in check_listing.unparsed_lines(f.path, src.text, check_listing.HELM, f"not converted: {HELM_HINT}"):
                    out.finding(category, line)
        self.outcomes.append(out)
        return cls.HELM


def run(paths, settings: Settings, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    started = time.monotonic()
    prune = [settings.out_dir] if settings.out_dir else []
    found = walk(paths, settings.excludes, gitignore=settings.gitignore, prune=prune, docs=settings.docs)
    targets = _targets(found.files, settings)
    if isinstance(targets, str):
        print(f"kf2jobset: {targets}", file=stderr)
        return exitcodes.USAGE
    run_files = _Sorted(settings, targets)
    for missing in found.missing:
        run_files.outcomes.append(Outcome(missing, FAILED, problems=[f"{missing}: no such file or directory"],
                                          codes=[exitcodes.INPUT]))
    if found.symlinks:
        run_files.summary.skipped["symlinks"] = len(found.symlinks)

    relevant = [f.path for f in found.files if run_files.read_and_sort(f) not in (None, cls.SKIP, cls.HELM, cls.MARKDOWN)]
    if run_files.selecting and relevant:
        # a job's conversion keeps the labels that objects anywhere in the run select its pods by (selectorfix)
        settings = run_files.settings = _with_selector_peers(settings, run_files.selecting)
    families: list[set[str]] = []
    # A base and the overlays that patch it are converted together, also when pre-commit passes one
    # of them alone: half a kustomize unit builds a broken JobSet.
    if relevant and settings.mode != OUT_DIR:
        families = _take_family_members(run_files, found, relevant, stderr)
    if run_files.kustomizations or run_files.maybe_patches:  # their patch files are converted as patches, not as jobs
        _run_kustomize_units(run_files, families)
    if settings.options.katib and run_files.tasks:
        settings = _with_trial_templates(settings, run_files)
    outcomes = run_files.outcomes + _convert_all(run_files.tasks, settings, stderr, started)
    _resized_findings(outcomes, run_files.resized, settings)
    order = {f.path: i for i, f in enumerate(found.files)}
    outcomes.sort(key=lambda o: order.get(o.path, -1))
    return report_outcomes(outcomes, run_files.summary, settings, run_files.helm_with_jobs, stdout, stderr)


def _with_selector_peers(settings: Settings, selecting: list) -> Settings:
    from ..core.selectorfix import tree_peers  # the runtime models: not for a run of files without jobs (the hook's)

    peers = tree_peers(selecting)
    if not peers:
        return settings
    return dataclasses.replace(settings, options=dataclasses.replace(settings.options, selector_peers=peers))


def _take_family_members(run_files: _Sorted, found, relevant: list[str], stderr) -> list[set[str]]:
    """The kustomize bases and overlays of the run's files that the run did not name, taken too; the families."""
    from . import kustomize  # kustomize units: only where a run holds jobs or kustomizations

    extras, families = kustomize.family_extras(relevant, {os.path.realpath(f.path) for f in found.files})
    for extra, with_files in sorted(extras.items()):
        shown = os.path.relpath(extra) if not os.path.relpath(extra).startswith("..") else extra
        if run_files.read_and_sort(Found(shown, None, shown)) in (cls.CANDIDATE, cls.KUSTOMIZATION, cls.PATCH_LIKE):
            found.files.append(Found(shown, None, shown))
            print(f"kf2jobset: note: {shown} is {'checked' if run_files.settings.mode == CHECK else 'converted'} too: "
                  f"it forms one kustomize unit with "
                  f"{', '.join(sorted(set(with_files)))}", file=stderr)
    return families


def _run_kustomize_units(run_files: _Sorted, families: list[set[str]]) -> None:
    """Kustomize units converted; the files they own leave the tasks, and so does every file of a family
    one of whose units failed."""
    from . import kustomize

    settings = run_files.settings
    units = kustomize.run_units(run_files.kustomizations, run_files.maybe_patches, settings, run_files.targets, families)
    owned = set()
    failed_units: set[str] = set()
    for unit_outcomes, unit_files in units:
        run_files.outcomes += unit_outcomes
        owned |= unit_files
        if any(o.status == FAILED for o in unit_outcomes):
            failed_units |= unit_files
    tasks = [t for t in run_files.tasks if os.path.realpath(t.path) not in owned]
    # all of a kustomize family or none: a job whose overlays could not be rewritten stays as it is
    blocked = set().union(*(fam for fam in families if fam & failed_units)) if failed_units else set()
    for t in [t for t in tasks if os.path.realpath(t.path) in blocked]:
        held = Outcome(t.path, FAILED, codes=[exitcodes.UNSUPPORTED], problems=[
            f"{t.path}: not converted: it belongs to a kustomize unit that could not be rewritten (see that kustomization's message); "
            "base and overlays are converted together or not at all"])
        if settings.mode == CHECK:
            for category, line in check_listing.unparsed_lines(t.path, t.text, check_listing.REFUSED,
                                                      "its kustomize unit could not be rewritten (see stderr)"):
                held.finding(category, line)
        run_files.outcomes.append(held)
    run_files.tasks = [t for t in tasks if os.path.realpath(t.path) not in blocked]


def _with_trial_templates(settings: Settings, run_files: _Sorted) -> Settings:
    """Experiments that read a trial template from a ConfigMap are updated with it, in whichever file
    of the run it sits (kf2jobset/sources/katib_configmaps.py): the templates are gathered before any file converts."""
    from ..sources.katib_configmaps import trial_templates_in_texts

    found_templates = trial_templates_in_texts([t.text for t in run_files.tasks if "ConfigMap" in t.text]
                                               + run_files.converted_templates, settings.options)
    if not found_templates:
        return settings
    return dataclasses.replace(settings, options=dataclasses.replace(settings.options, katib_trial_templates=found_templates))


def _resized_findings(outcomes: list[Outcome], resized: dict[str, list], settings: Settings) -> None:
    """Converted JobSets edited away from their recorded sizes: listed by --check, warned of otherwise."""
    holders = {}
    for o in outcomes:
        holders.setdefault(o.path, o)
    for path, lines in resized.items():
        holder = holders.get(path)
        if holder is None:
            continue
        for category, line in lines:
            if settings.mode == CHECK:
                holder.finding(category, line)
            else:  # converting does not regenerate them: say so on every run
                holder.notes.append(f"warning: {line}")
                holder.stale += 1


def _irrelevant_bytes(path: str, settings: Settings) -> bool:
    """An undecodable file is only an error if it might hold a v1 job (pre-filter on the bytes)."""
    try:
        raw = Path(path).read_bytes()
    except OSError:
        return False
    text = raw.decode("latin-1")
    return not cls.may_hold_job(text, settings.options.katib) and not cls.V1_REFERENCE_RE.search(text)


def _targets(files, settings: Settings) -> dict | str:
    """out-dir: mirror path of every file — its path relative to the working directory (outside it:
    relative to its directory argument's parent, or its name); a clash is an error."""
    if settings.mode not in (OUT_DIR, CHECK) or not settings.out_dir:
        return {}
    out_dir = Path(settings.out_dir)
    cwd = Path.cwd().resolve()
    targets, seen = {}, {}
    for f in files:
        real = Path(os.path.abspath(f.path))
        try:
            rel = real.relative_to(cwd)
        except ValueError:
            try:
                rel = real.relative_to(Path(os.path.abspath(f.base)).parent) if f.base else Path(real.name)
            except ValueError:
                rel = Path(real.name)
        target = str(out_dir / rel)
        if os.path.realpath(target) == os.path.realpath(f.path):
            return f"--out-dir: {f.path} would be written over itself (the mirror of the tree is the tree); use --in-place"
        if target in seen:
            return f"--out-dir: {seen[target]} and {f.path} would both be written to {target}; convert them separately"
        seen[target] = f.path
        targets[f.path] = target
    return targets


def _workers(settings: Settings, count: int) -> int:
    if settings.jobs == 1 or count < PARALLEL_MIN_FILES:
        return 1
    if settings.jobs > 1:
        return min(settings.jobs, count)
    from ..k8s.cpus import usable_cpus

    return max(1, min(usable_cpus(), count // 4))


def _convert_all(tasks: list[Task], settings: Settings, stderr: TextIO, started: float) -> list[Outcome]:
    progress = Progress(len(tasks), stderr, settings.progress, started)
    results: list[Outcome] = []
    workers = _workers(settings, len(tasks))
    pending = PendingWrites()
    if workers <= 1:
        for task in tasks:
            results.append(convert_file(task, settings, pending))
            progress.step()
        pending.finish()
        progress.done()
        return results
    import gc
    import multiprocessing

    # The first file is converted here: schemas, validators and mappings are then loaded once and
    # shared with forked workers instead of being rebuilt in each.
    results.append(convert_file(tasks[0], settings, pending))
    pending.finish()
    progress.step()
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else methods[0])
    # Whole files in chunks: a worker converts a chunk and writes it with one barrier; the main
    # process only collects small outcomes (the run sorts them into walk order at the end).
    size = max(1, min(32, (len(tasks) - 1) // (workers * 4)))
    chunks = [tasks[i:i + size] for i in range(1, len(tasks), size)]
    gc.freeze()  # forked workers then share the parent's objects instead of copying pages the collector touches
    try:
        with ctx.Pool(workers, initializer=_init_worker, initargs=(settings,)) as pool:
            for outcomes in pool.imap_unordered(_convert_chunk, chunks):
                results += outcomes
                for _ in outcomes:
                    progress.step()
    finally:
        gc.unfreeze()
    progress.done()
    return results


class Progress:
    """`[#####.....] 120/400 files` on stderr, redrawn at most 10 times a second; shown only when
    stderr is a terminal and the run has lasted a second (or when forced with progress=True)."""

    def __init__(self, total: int, stream: TextIO, enabled: bool | None, started: float):
        self.total, self.stream, self.started = total, stream, started
        if enabled is None:
            isatty = getattr(stream, "isatty", None)
            enabled = bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"
            self.delay = 1.0
        else:
            self.delay = 0.0
        self.enabled = enabled and total > 0
        self.count = 0
        self.last = 0.0
        self.shown = False

    def step(self) -> None:
        self.count += 1
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.started < self.delay or (now - self.last < 0.1 and self.count < self.total):
            return
        self.last = now
        width = 30
        filled = width * self.count // self.total
        self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.count}/{self.total} files")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * 60 + "\r")
            self.stream.flush()
