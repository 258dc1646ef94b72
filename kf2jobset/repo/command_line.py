"""The repo-mode options of `kf2jobset convert`, kept here so the click command stays a thin shell."""
from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dc_field

import click

REPO_HELP = """

\b
Repo mode (instead of printing a stream):
  --in-place     rewrite files where they are; only converted documents
                 change
  --out-dir DIR  write converted files to DIR at their paths relative to
                 the working directory (files with nothing to convert are
                 not copied)
  --check        change nothing; list every Kubeflow job still in the tree
                 with why it is there (to convert, needs a decision,
                 refused, embedded, template, Helm-skipped), and converted
                 JobSets/TrainJobs resized, reshaped or renamed since;
                 exit 1 if any (with
                 --out-dir: also missing or stale copies); `--check -`
                 checks a rendered stream (kustomize build DIR | ...)

Directories are walked for *.yaml, *.yml, *.json, YAML templates (*.yaml-template,
*.yaml.template, *.yaml.tmpl) and Kustomization (with --docs also *.md: jobs in
fenced yaml blocks are converted), honouring .gitignore
files and --exclude (gitignore syntax); symlinks are never followed. Helm templates are
skipped and counted; kustomize patches aimed at v1 jobs are rewritten or reported."""


def repo_options(func):
    opts = [
        click.option("--in-place", "-i", "in_place", is_flag=True, help="Rewrite the files in place."),
        click.option("--out-dir", type=click.Path(file_okay=False), default=None, help="Write converted files below DIR."),
        click.option("--check", is_flag=True, help="Change nothing; exit 1 if something would be converted."),
        click.option("--exclude", multiple=True, metavar="GLOB", help="Skip matching paths (gitignore syntax; repeatable)."),
        click.option("--no-gitignore", is_flag=True, help="Do not read .gitignore files while walking directories."),
        click.option("--jobs", "-j", type=click.IntRange(min=0), default=0, show_default=True,
                     help="Worker processes for many files (0: one per CPU; 1: none)."),
        click.option("--fail-on-change", is_flag=True,
                     help="Exit 1 when a file was written (the pre-commit fixer convention), or when a converted "
                          "JobSet/TrainJob was edited away from what its values were written for (resized, reshaped: "
                          "converting cannot fix it)."),
        click.option("--docs", is_flag=True,
                     help="Repo mode: directory walks take Markdown files (*.md) too; their fenced YAML blocks holding "
                          "v1 jobs are converted (a named .md file always is)."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


@dataclass(frozen=True)
class WalkOptions:
    """How directories are walked, in repo mode and in the stream mode alike."""

    excludes: tuple[str, ...] = ()
    gitignore: bool = True


@dataclass(frozen=True)
class RepoOptions:
    """The repo-mode flags of `convert` (the conversion's own are a ConvertOptions)."""

    in_place: bool = False
    out_dir: str | None = None
    check: bool = False
    jobs: int = 0
    fail_on_change: bool = False
    verbose: bool = False
    docs: bool = False
    walk: WalkOptions = WalkOptions()

    @classmethod
    def from_click(cls, kw: dict, verbose: bool = False) -> "RepoOptions":
        """Take the repo_options flags out of a click callback's keyword arguments."""
        return cls(in_place=kw.pop("in_place", False), out_dir=kw.pop("out_dir", None), check=kw.pop("check", False),
                   jobs=kw.pop("jobs", 0), fail_on_change=kw.pop("fail_on_change", False), verbose=verbose,
                   docs=kw.pop("docs", False),
                   walk=WalkOptions(tuple(kw.pop("exclude", ()) or ()), not kw.pop("no_gitignore", False)))


def repo_mode(paths, repo: RepoOptions, options) -> int | None:
    """Run repo mode if one of its flags was given; returns the exit code, or None for stream mode."""
    from .run import CHECK, IN_PLACE, OUT_DIR, Settings, run

    in_place, out_dir, check = repo.in_place, repo.out_dir, repo.check
    fail_on_change, docs = repo.fail_on_change, repo.docs
    if not (in_place or out_dir or check):
        if docs:
            return _usage("--docs goes with --in-place, --out-dir or --check (Markdown files are converted where they are)")
        if fail_on_change:
            return _usage("--fail-on-change needs --in-place or --out-dir")
        return None
    if in_place and (out_dir or check):
        return _usage("--in-place cannot be combined with " + ("--out-dir" if out_dir else "--check"))
    if "-" in paths and not (check and not out_dir):  # --check writes nothing: a rendered stream is checked as it comes
        return _usage("stdin (-) has no file to rewrite; use the stream mode (no --in-place/--out-dir), or --check")
    if options.name:
        return _usage("--name renames a single job; it cannot be used with --in-place, --out-dir or --check")
    if options.subdomain:  # one Service name for every JobSet the run writes (options.shared_subdomain)
        return _usage("--subdomain names one job's Service; it cannot be used with --in-place, --out-dir or --check "
                      "(convert that job alone: kf2jobset convert FILE --subdomain NAME)")
    if check and fail_on_change:
        return _usage("--fail-on-change does not apply to --check (which never writes)")
    mode = CHECK if check else IN_PLACE if in_place else OUT_DIR
    settings = Settings(mode=mode, options=options, out_dir=out_dir, excludes=repo.walk.excludes, jobs=repo.jobs,
                        fail_on_change=fail_on_change, gitignore=repo.walk.gitignore, verbose=repo.verbose, docs=docs)
    return run(paths, settings)


def stream_files(paths, walk_options: WalkOptions) -> list[tuple[str, bool]]:
    """The stream mode's files, each with whether a directory walk found it: the same walk as repo
    mode (excludes, .gitignore, no symlinks); templates of Helm charts found in directories are
    skipped with one note on stderr."""
    from .walk import walk
    from ..text.classify import is_helm_template

    found = walk(paths, walk_options.excludes, gitignore=walk_options.gitignore)
    files, helm, patches = [], 0, 0
    kustomization_in: dict = {}
    for f in found.files:
        if f.path != "-" and is_helm_template(f.path):  # also when named: render the chart first
            helm += 1
        elif f.path != "-" and _is_patch(f.path, found=kustomization_in):
            patches += 1
        else:
            files.append((f.path, f.base is not None))
    if patches:
        click.echo(f"kf2jobset: skipped {patches} kustomize patch file{'s' if patches != 1 else ''} (a patch is not a job: "
                   "repo mode rewrites patches with their kustomization: kf2jobset convert DIR --in-place)", err=True)
    if helm:
        click.echo(f"kf2jobset: skipped {helm} Helm template{'s' if helm != 1 else ''} (render first: "
                   "helm template CHART | kf2jobset convert -; or convert a chart at the source: "
                   "kf2jobset convert CHART --in-place)", err=True)
    return files + [(m, False) for m in found.missing]  # missing ones fail when read, with the usual message


@dataclass
class JobFiles:
    files: list = dc_field(default_factory=list)  # (path, text or None, found under a directory)
    scanned: int = 0  # files found under directories
    helm: int = 0  # Helm templates (skipped and counted, as `convert --check` counts them)
    helm_jobs: int = 0  # those of them that mention a job kind (the hint is for these)
    walked_dirs: bool = False
    selecting: list = dc_field(default_factory=list)  # (path, text) of files with objects that select pods


def walk_for_jobs(paths, excludes=(), *, gitignore: bool = True, katib: bool = False) -> JobFiles:
    """What `report` reads: explicit files always; under directories the same walk and text
    pre-filter as `convert --check` (files that cannot hold a job are never parsed; Helm templates
    are skipped and counted), and the files holding a size record kf2jobset wrote (`resized`)."""
    from .walk import walk
    from ..runtime.selectors import SELECTING_TEXT
    from ..checks.edit_checks import may_hold_edit
    from ..text.classify import CANDIDATE, HELM, classify, may_hold_job

    found = walk(paths, tuple(excludes or ()), gitignore=gitignore)
    out = JobFiles(walked_dirs=any(f.base is not None for f in found.files))
    kustomization_in: dict = {}
    for f in found.files:
        if f.base is None:
            out.files.append((f.path, None, False))
            continue
        out.scanned += 1
        try:
            with open(f.path, encoding="utf-8", errors="surrogateescape") as fh:
                text = fh.read()
        except OSError:
            out.files.append((f.path, None, False))  # read again by the caller, which reports the error
            continue
        kind = classify(f.path, text, katib)
        if kind != HELM and SELECTING_TEXT.search(text):  # may select a job's pods (selectorfix)
            out.selecting.append((f.path, text))
        if kind == HELM:
            out.helm += 1
            out.helm_jobs += 1 if may_hold_job(text, katib) else 0
        elif kind == CANDIDATE and not _is_patch(f.path, text, kustomization_in):
            out.files.append((f.path, None, True))
        elif may_hold_edit(text):  # a converted JobSet or TrainJob: reported when
            # resized (staleness), renamed or moved (name_binding) since
            out.files.append((f.path, text, True))
    out.files += [(m, None, False) for m in found.missing]
    return out


def _is_patch(path: str, text: str | None = None, found: dict | None = None) -> bool:
    """A file some kustomization names as a patch (only files that could be mistaken for a job).
    `found`: patch_owner's directory cache, shared over one walk."""
    from ..text.classify import may_hold_job
    from .kustomize import patch_owner

    if text is None:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            return False
    return may_hold_job(text) and patch_owner(path, found) is not None


def _usage(message: str) -> int:
    from .. import exitcodes

    click.echo(f"kf2jobset: {message}", err=True)
    return exitcodes.USAGE
