"""kustomize: patches and references that aim at v1 jobs, rewritten for JobSets or reported.

A kustomization and the patch files it names form a unit: either every rewrite in it is made, or
none (and the reasons are reported with file:line:col). Patch files are never converted as jobs.

A patch aimed at a v1 job (by `target` kind, or by its own apiVersion/kind for strategic merge
patches) is rewritten only when the result is *verified*: the base job is found among the
kustomization's resources, the original patch is applied to it and converted, the base is converted
as is, and the rewritten patch applied to the converted base must give exactly the converted patched
job. JSON6902 patches are first mapped mechanically (paths moved to `/spec/replicatedJobs/<i>/...`,
target group/version/kind -> jobset.x-k8s.io/v1alpha2 JobSet); when that is not enough — a new
replica count also changes values kf2jobset derives from it, such as WORLD_SIZE or TF_CONFIG — the
operations are computed from the two converted JobSets. Strategic merge patches always become
JSON6902 operations with `test` guards: real kustomize has no schema for the JobSet CRD and would
replace the whole `replicatedJobs` list (tests/test_kustomize_real.py holds every rewrite to what
real kustomize builds). Patches that change companion objects, use
`$patch` directives or whose base cannot be found are reported, as are other references to the old
kinds or field paths (replacements, transformer configurations, ...).
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from .. import exitcodes
from ..mappings import JOB_KINDS
from ..text import yamledit
from ..text.classify import JOB_KIND_RE
from .fsio import read_source
from .kustomize_rewrite import patch_entry
from .kustomize_tree import PATCH_SECTIONS, family_extras, patch_owner, patch_files
from .kustomize_unit import Context, Problem, Unit, Unmappable
from .check_listing import PATCH
from .outcome import CHECK, CONVERTED, FAILED, Outcome, deliver

__all__ = ["run_units", "analyse", "family_extras", "patch_owner"]  # repo/run.py and repo/cli.py call these here

_NOT_REFERENCES = set(PATCH_SECTIONS) | {"resources", "bases", "components", "namespace", "namePrefix", "nameSuffix"}


def run_units(kustomizations, maybe_patches, settings, targets, families=()) -> list:
    """Find and process the kustomization units; returns [(outcomes, owned real paths)].
    Every unit is analysed before any is written: a unit that shares a family (a base, see
    family_extras) with a unit that cannot be rewritten is not written either."""
    ctx = Context(settings.options)
    found: dict[str, tuple[str, Any]] = {}
    for f, src in kustomizations:
        found[os.path.realpath(f.path)] = (f.path, src)
    # patch files seen on their own: the kustomization that names them joins the run
    kustomization_in: dict = {}  # directory -> its kustomization file, or None
    for f, _src in maybe_patches:
        owner = patch_owner(f.path, kustomization_in)
        if owner is None or os.path.realpath(owner) in found:
            continue
        try:
            found[os.path.realpath(owner)] = (_display(Path(owner), f.path), read_source(owner))
        except Exception:  # unreadable: nothing to rewrite it with
            continue
    units = []
    for real, (display, src) in sorted(found.items(), key=lambda kv: kv[1][0]):
        unit = Unit(display, src.text, src.bom, Path(real).parent)
        try:
            analyse(unit, ctx)
        except Exception as exc:  # a bug: report it on this unit, keep the run going
            unit.problems.append(Problem(display, None, None, f"internal error: {type(exc).__name__}: {exc} (please report it)"))
        units.append((real, unit))
    failed = {real: unit.path for real, unit in units if unit.problems}
    results = []
    for real, unit in units:
        blockers = sorted({failed[f] for fam in families if real in fam for f in fam if f in failed and f != real})
        if blockers and not unit.problems:
            out = Outcome(unit.path, FAILED, codes=[exitcodes.UNSUPPORTED], problems=[
                f"{unit.path}: not rewritten: it builds on the same base as {', '.join(blockers)}, which could not be "
                "rewritten; a base and its overlays are converted together or not at all"])
            results.append(([out], unit.owned | {real}))
            continue
        results.append((_outcomes(unit, settings, targets), unit.owned | {real}))
    return results


def _display(kfile: Path, near: str) -> str:
    """Show a kustomization the way the file that led to it was given (relative or absolute)."""
    return str(kfile) if os.path.isabs(near) else os.path.relpath(kfile)


def analyse(unit: Unit, ctx: Context) -> None:
    try:
        root = yamledit.compose(unit.text)
    except Exception as exc:
        mark = getattr(exc, "problem_mark", None)
        unit.problems.append(Problem(unit.path, mark.line + 1 if mark else None, mark.column + 1 if mark else None,
                                     f"invalid YAML: {getattr(exc, 'problem', exc)}"))
        return
    if root is None or type(root).__name__ != "MappingNode":
        return
    unit.owned |= patch_files(root, unit.directory)
    for section in PATCH_SECTIONS:
        for item in yamledit.items(yamledit.get(root, section)):
            try:
                patch_entry(unit, ctx, section, item)
            except Unmappable as exc:
                line, col = yamledit.pos(exc.node) if exc.node is not None else (None, None)
                unit.problems.append(Problem(exc.file or unit.path, line, col, exc.message))
    _references(unit, root)

# ---- other references ---------------------------------------------------------------------------------

def _references(unit: Unit, root) -> None:
    for key_node, value in root.value:
        section = getattr(key_node, "value", None)
        if section in _NOT_REFERENCES:
            continue
        if section in ("configurations", "crds", "transformers", "generators", "validators"):
            for item in yamledit.items(value):
                ref = yamledit.scalar(item)
                if not ref or "\n" in ref:
                    continue
                try:
                    text = (unit.directory / ref).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                if JOB_KIND_RE.search(text) or re.search(r"[a-z]+ReplicaSpecs\b", text):
                    unit.problems.append(Problem(unit.path, *yamledit.pos(item),
                                                 f"{section}: {ref} refers to v1 job kinds or field paths; "
                                                 "update it for JobSet by hand"))
        for node, message in _mentions(value):
            unit.problems.append(Problem(unit.path, *yamledit.pos(node), f"{section}: {message}; update it for JobSet by hand"))


def _mentions(node):
    kind = type(node).__name__
    if kind == "MappingNode":
        for k, v in node.value:
            if getattr(k, "value", None) == "kind" and yamledit.scalar(v) in JOB_KINDS:
                yield v, f"selects kind {v.value}, which becomes a JobSet"
            else:
                yield from _mentions(v)
    elif kind == "SequenceNode":
        for v in node.value:
            yield from _mentions(v)
    elif kind == "ScalarNode" and isinstance(node.value, str) and re.search(r"[a-z]+ReplicaSpecs\b", node.value):
        yield node, f"refers to the v1 field path {node.value!r}"


# ---- outcomes -------------------------------------------------------------------------------------------

def _outcomes(unit: Unit, settings, targets) -> list:
    if unit.problems:
        out = Outcome(unit.path, FAILED)
        out.problems = [str(p) + " (this kustomization and its patches were left untouched)" for p in unit.problems]
        out.codes = [exitcodes.UNSUPPORTED]
        return [out]
    changes = {}
    if unit.edits:
        changes[unit.path] = (yamledit.apply_edits(unit.text, unit.edits), unit.bom)
    changes.update(unit.files)
    outcomes = []
    for path, (text, bom) in changes.items():
        data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
        out = Outcome(path)
        target = _target(path, settings, targets)
        if settings.mode == CHECK and target is None:
            out.status = CONVERTED
            for line in [r for r in unit.rewrites if r.startswith(path + ":")] or [f"{path}: kustomize patch aims at a v1 job"]:
                out.finding(PATCH, line)
        else:
            deliver(out, path, data, target, settings)
        outcomes.append(out)
    if not outcomes:
        outcomes.append(Outcome(unit.path))
    return outcomes


def _target(path: str, settings, targets) -> str | None:
    if not settings.out_dir:
        return None
    if path in targets:
        return targets[path]
    rel = os.path.relpath(path)  # same rule as run._targets
    if rel.startswith(".."):
        rel = os.path.basename(path)
    return str(Path(settings.out_dir) / rel)
