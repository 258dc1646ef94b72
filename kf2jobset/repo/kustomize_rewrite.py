"""kustomize patch rewrites: one patch entry aimed at a v1 job, rewritten for the JobSet and verified.

The base job is found among the unit's resources, the original patch applied and converted, and the
rewritten patch must give exactly the converted patched job (see kustomize.py for the whole rule).
JSON6902 paths are mapped, or operations computed from the two converted JobSets; strategic merge
patches always become guarded JSON6902 operations. What cannot be verified raises Unmappable.
"""
from __future__ import annotations

import copy
import json
import os
import re
from dataclasses import dataclass
from typing import Any

from ..core.convert import convert_job, is_job
from ..core.emit import SOURCE_ANNOTATION
from ..errors import Kf2JobSetError
from ..k8s.jobset_api import GROUP as JOBSET_GROUP, VERSION as JOBSET_VERSION
from ..mappings import JOB_KINDS
from ..text.yamlio import Style, detect_style, dump_documents, first_content_line, parse_documents, to_plain
from . import patches
from ..text import yamledit
from ..text.classify import JOB_KIND_RE
from .fsio import read_source
from .kustomize_unit import Context, Unit, Unmappable


@dataclass
class _Content:
    text: str
    file: str | None  # display path of the patch file, None for an inline patch
    node: Any  # the kustomization node holding the inline patch or the path
    bom: bool = False


def patch_entry(unit: Unit, ctx: Context, section: str, item) -> None:
    target = None
    if section == "patchesStrategicMerge":
        value = yamledit.scalar(item)
        if value is None:
            return
        content = _load(unit, value, item, inline="\n" in value)
        ptype = "smp"
    else:
        target = yamledit.get(item, "target")
        inline = yamledit.get(item, "patch")
        ref = yamledit.get(item, "path")
        if yamledit.scalar(inline) is not None:
            content = _Content(yamledit.scalar(inline), None, inline)
        elif yamledit.scalar(ref) is not None:
            content = _load(unit, yamledit.scalar(ref), ref, inline=False)
        else:
            return
        ptype = "json" if section == "patchesJson6902" else None
    if content is None:
        return
    if ptype is None:
        stripped = re.sub(r"(?m)^\s*#.*$", "", content.text).strip()
        ptype = "json" if stripped.startswith(("[", "-")) else "smp"
    tkind = yamledit.scalar(yamledit.get(target, "kind"))
    if ptype == "json":
        _json_patch(unit, ctx, content, target, tkind)
    else:
        _smp_patch(unit, ctx, content, target, tkind, section, item)


def _load(unit: Unit, value: str, node, inline: bool) -> _Content | None:
    if inline:
        return _Content(value, None, node)

    path = unit.directory / value
    display = os.path.normpath(os.path.join(os.path.dirname(unit.path), value))
    try:
        src = read_source(str(path))
    except Exception as exc:
        if JOB_KIND_RE.search(unit.text) or "ReplicaSpecs" in unit.text:
            raise Unmappable(node, f"patch file {value} cannot be read") from exc
        return None
    return _Content(src.text, display, node, src.bom)


def _target_edits(unit: Unit, target) -> None:
    for key, new in (("kind", "JobSet"), ("group", JOBSET_GROUP), ("version", JOBSET_VERSION)):
        node = yamledit.get(target, key)
        if yamledit.scalar(node) is not None and yamledit.scalar(node) != new:
            unit.edits.append(yamledit.scalar_edit(node, new))


def _job_identity(target, partial: dict | None, node, what: str):
    kind = yamledit.scalar(yamledit.get(target, "kind")) or (partial or {}).get("kind")
    name = yamledit.scalar(yamledit.get(target, "name")) or ((partial or {}).get("metadata") or {}).get("name")
    namespace = yamledit.scalar(yamledit.get(target, "namespace")) or ((partial or {}).get("metadata") or {}).get("namespace")
    if yamledit.scalar(yamledit.get(target, "name")) is None and any(yamledit.get(target, k) is not None
                                                                     for k in ("labelSelector", "annotationSelector")):
        raise Unmappable(node, f"{what} selects {kind} objects by label/annotation; kf2jobset rewrites patches aimed at one named job only")
    if not name:
        raise Unmappable(node, f"{what} targets {kind} without a name; kf2jobset rewrites patches aimed at one named job only")
    return kind, name, namespace


def _base(unit: Unit, ctx: Context, kind: str, name: str, namespace, node, what: str):
    matches, converted = [], []
    for file, doc in ctx.resources(unit.directory):
        meta = doc.get("metadata") or {}
        if meta.get("name") != name or (namespace and meta.get("namespace") not in (None, namespace)):
            continue
        if doc.get("kind") == kind and is_job(doc):
            matches.append((file, doc))
        elif doc.get("kind") == "JobSet" and f"/{kind} " in str((meta.get("annotations") or {}).get(SOURCE_ANNOTATION, "")) + " ":
            converted.append(file)
    if len(matches) == 1:
        return matches[0]
    if converted and not matches:
        raise Unmappable(node, f"{what} targets {kind} {name}, which {converted[0]} already holds as a JobSet; "
                                "kf2jobset verifies a rewrite against the v1 job, so rewrite this patch by hand "
                                "(or convert base and overlays in one run)")
    if not matches:
        raise Unmappable(node, f"{what} targets {kind} {name}, which is not among the kustomization's resources; "
                                "rewrite the patch by hand")
    raise Unmappable(node, f"{what} targets {kind} {name}, which several resources define")


def _convert(job: dict, options, node, what: str):
    try:
        conv = convert_job(copy.deepcopy(job), options)
    except Kf2JobSetError as err:
        raise Unmappable(node, f"{what}: the patched job does not convert: {err.problems[0].message}") from err
    return conv, to_plain(conv.jobset), [to_plain(c) for c in conv.companions]


def _expected(ctx: Context, base_doc, apply, node, what: str):
    """(base conversion, converted base JobSet, converted patched JobSet)."""
    base = to_plain(base_doc)
    try:
        patched = apply(base)
    except patches.PatchError as exc:
        raise Unmappable(node, f"{what} does not apply to its v1 job: {exc}") from exc
    conv, base_js, base_comp = _convert(base, ctx.options, node, what)
    _, exp_js, exp_comp = _convert(patched, ctx.options, node, what)
    if base_comp != exp_comp:
        kinds = ", ".join(sorted({c.get("kind", "?") for c in exp_comp + base_comp}))
        raise Unmappable(node, f"{what} also changes objects kf2jobset generates next to the JobSet ({kinds}); "
                                "rewrite it by hand")
    if base_js == exp_js:
        raise Unmappable(node, f"{what} has no effect on the converted JobSet; remove it or rewrite it by hand")
    return conv, base_js, exp_js


def _index_of(conv):
    names = [rj["name"] for rj in conv.jobset["spec"]["replicatedJobs"]]
    by_key = {}
    for rtype, spec in conv.job.replicas.items():
        name = conv.plan.rjob_names.get(rtype)
        if name in names:
            by_key[spec.source_key] = names.index(name)
            by_key[rtype] = names.index(name)

    def index_of(key):
        if key in by_key:
            return by_key[key]
        return next((v for k, v in by_key.items() if k.lower() == str(key).lower()), None)

    return index_of


# ---- JSON6902 -------------------------------------------------------------------------------------

def _json_patch(unit: Unit, ctx: Context, content: _Content, target, tkind) -> None:
    mentions = "ReplicaSpecs" in content.text
    if tkind not in JOB_KINDS:
        if mentions and tkind is None:
            raise Unmappable(content.node, "JSON6902 patch on a v1 job field path without a target kind")
        if mentions and tkind == "Experiment" and ctx.options.katib:
            raise Unmappable(content.node, "JSON6902 patch on the v1 job inside a Katib Experiment's trialSpec; "
                                            "--katib converts that job, so rewrite the patch by hand")
        return
    what = f"JSON6902 patch {content.file or '(inline)'}"
    kind, name, namespace = _job_identity(target, None, target, what)
    try:
        root = yamledit.compose(content.text)
        ops = to_plain(_yaml_load(content.text))
    except Exception as exc:
        raise Unmappable(content.node, f"{what} is not valid YAML/JSON: {exc}") from exc
    if not isinstance(ops, list):
        raise Unmappable(content.node, f"{what} is not a list of operations")
    _file, base_doc = _base(unit, ctx, kind, name, namespace, target, what)
    conv, base_js, exp_js = _expected(ctx, base_doc, lambda job: patches.apply_json_patch(job, ops), content.node, what)
    specs_field = conv.job.mapping.replica_specs_field
    index_of = _index_of(conv)

    mapped, edits = [], []
    for op, op_node in zip(ops, yamledit.items(root), strict=False):
        new_op = dict(op)
        for key in ("path", "from"):
            if key not in op:
                continue
            parts = patches.map_job_path(patches.parse_pointer(op[key]), specs_field, index_of)
            if parts is None:
                new_op = None
                break
            new_op[key] = patches.format_pointer(parts)
            node = yamledit.get(op_node, key)
            if new_op[key] != op[key] and node is not None:
                edits.append(yamledit.scalar_edit(node, new_op[key]))
        if new_op is None:
            mapped = None
            break
        mapped.append(new_op)
    new_text = None
    if mapped is not None and _verifies(lambda: patches.apply_json_patch(base_js, mapped), exp_js):
        new_text = yamledit.apply_edits(content.text, edits)
    else:
        generated = patches.json_diff(base_js, exp_js)
        generated = patches.guard_ops(base_js, generated) + generated
        if not _verifies(lambda: patches.apply_json_patch(base_js, generated), exp_js):
            raise Unmappable(content.node, f"{what} cannot be expressed for the JobSet; rewrite it by hand")
        new_text = _render_ops(content.text, generated)
    _target_edits(unit, target)
    _store(unit, content, new_text)


def _verifies(apply, expected) -> bool:
    try:
        return apply() == expected
    except patches.PatchError:
        return False


def _yaml_load(text: str):
    from ruamel.yaml import YAML

    return YAML(typ="rt").load(text)


def _render_ops(original: str, ops: list, was: str | None = None) -> str:
    """Computed operations, in the original's notation (JSON or YAML)."""
    lead = "".join(ln for ln in original.splitlines(keepends=True)[:first_content_line(original)])
    newline = "\r\n" if "\r\n" in original else "\n"
    stripped = original[len(lead):].lstrip()
    if stripped.startswith("["):
        if "\n" not in stripped.strip():
            body = json.dumps(ops, ensure_ascii=False)
        else:
            body = json.dumps(ops, indent=2, ensure_ascii=False) + "\n"
        return lead + body.replace("\n", newline)

    style = detect_style(original)
    if was or re.search(r"(?m)^- ", original):  # a top-level list written flush left
        style = Style(style.mapping, 2, 0, style.newline)
    note = ("# kf2jobset: computed for the JobSet; values kf2jobset derives from the patched fields "
            "(replica counts in env, ...) are patched too" + newline)
    if was:
        note = (f"# kf2jobset: JSON6902 operations for the JobSet (this was {was}; kustomize would replace "
                "whole lists of a JobSet); `test` lines stop the build if the base's order changes" + newline)
    body = dump_documents([ops], style)
    body = body[len("---" + newline):] if body.startswith("---") else body
    return lead + note + body




def _store(unit: Unit, content: _Content, new_text: str) -> None:
    if new_text == content.text:
        return
    if content.file is None:
        unit.edits.append(yamledit.embed(unit.text, content.node, new_text))
        unit.rewrites.append(f"{unit.path}:{yamledit.pos(content.node)[0]}: inline patch aims at a v1 job")
    else:
        unit.files[content.file] = (new_text, content.bom)
        unit.rewrites.append(f"{content.file}: kustomize patch aims at a v1 job")


# ---- strategic merge --------------------------------------------------------------------------------

def _smp_patch(unit: Unit, ctx: Context, content: _Content, target, tkind, section: str, item) -> None:
    """A strategic merge patch aimed at a v1 job becomes JSON6902 operations on the JobSet.

    Real kustomize has no schema for the JobSet CRD, so a strategic merge patch would replace the whole
    `replicatedJobs` list (and any list below it); JSON6902 indexes reach one element, and `test`
    guards stop the build if the base's order ever changes. The kustomization entry gets a JobSet
    target (a `patchesStrategicMerge` entry moves to `patches`, which carries targets)."""
    docs = parse_documents(content.text, content.file or unit.path)
    aimed_docs = []
    for doc in docs:
        data = doc.data
        aimed = isinstance(data, dict) and (data.get("kind") in JOB_KINDS and str(data.get("apiVersion", "")).startswith("kubeflow.org/")
                                           or tkind in JOB_KINDS)
        if doc.error is not None and (aimed or tkind in JOB_KINDS):
            raise Unmappable(content.node, f"patch is not valid YAML: {doc.error.problems[0]}")
        if aimed and doc.error is None:
            aimed_docs.append(doc)
    if not aimed_docs:
        return
    what = f"strategic merge patch {content.file or '(inline)'}"
    if len([d for d in docs if d.data is not None]) > 1:
        raise Unmappable(content.node, f"{what} holds several documents; kf2jobset rewrites it as a JSON6902 patch, which has "
                                        "one target: split the file, one patch per object")
    data = aimed_docs[0].data
    kind, name, namespace = _job_identity(target, data, target if target is not None else content.node, what)
    _file, base_doc = _base(unit, ctx, kind, name, namespace, content.node, what)
    partial = to_plain(data)
    try:
        conv, base_js, exp_js = _expected(ctx, base_doc, lambda job: patches.apply_smp(job, partial), content.node, what)
    except Unmappable as exc:
        lists = _list_paths(partial)
        if lists and "does not convert" in exc.message:
            exc.message += (f" — kustomize has no schema for {kind}, so this patch replaces the whole list at "
                            f"{', '.join('.'.join(p) for p in lists)} (your v1 overlay builds the same broken job today); "
                            "write the complete list, or a JSON6902 patch")
        raise
    # kustomize replaces each list the patch carries, whatever earlier patches did to it: so do the operations
    index_of = _index_of(conv)
    atomic = frozenset(filter(None, (_jobset_list_path(p, conv.job.mapping.replica_specs_field, index_of)
                                     for p in _list_paths(partial))))
    ops = patches.json_diff(base_js, exp_js, atomic=atomic)
    ops = patches.guard_ops(base_js, ops) + ops
    if not _verifies(lambda: patches.apply_json_patch(base_js, ops), exp_js):
        raise Unmappable(content.node, f"{what} cannot be expressed for the JobSet; rewrite it by hand")
    new_text = _render_ops(content.text, ops, was="a strategic merge patch")
    js_meta = base_js["metadata"]
    jobset_target = _flow_target(js_meta.get("name"), js_meta.get("namespace") if namespace else None)
    if section == "patchesStrategicMerge":
        _move_to_patches(unit, item, content, new_text, jobset_target)
        return
    if target is not None:
        _target_edits(unit, target)
        if yamledit.scalar(yamledit.get(target, "name")) is None:
            unit.edits.append(_insert_key(unit.text, target, "name", js_meta.get("name")))
    else:
        unit.edits.append(_insert_key(unit.text, item, "target", jobset_target))
    _store(unit, content, new_text)


def _list_paths(node, path=()) -> list[tuple]:
    """Paths of the lists a strategic merge patch carries (not looking inside them)."""
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _list_paths(v, path + (str(k),))]
    if isinstance(node, list):
        return [path]
    return []


def _jobset_list_path(path: tuple, specs_field: str, index_of) -> tuple | None:
    """A list's path in the v1 job -> in the JobSet (pod template lists; metadata lists as they are)."""
    if path[:1] == ("metadata",):
        return path
    if path[:2] == ("spec", specs_field) and len(path) > 4 and path[3] == "template":
        idx = index_of(path[2])
        if idx is not None:
            return ("spec", "replicatedJobs", str(idx), "template", "spec", "template") + path[4:]
    return None


def _flow_target(name, namespace) -> str:
    fields = [f"group: {JOBSET_GROUP}", f"version: {JOBSET_VERSION}", "kind: JobSet", f"name: {yamledit.quote(str(name), None)}"]
    if namespace:
        fields.append(f"namespace: {yamledit.quote(str(namespace), None)}")
    return "{" + ", ".join(fields) + "}"


def _insert_key(text: str, mapping, key: str, value: str) -> yamledit.Edit:
    """A new first key in a mapping node, in its own style (block or flow)."""
    start = mapping.start_mark.index
    if getattr(mapping, "flow_style", False) or text[start:start + 1] == "{":
        return yamledit.Edit(start + 1, start + 1, f"{key}: {value}, ")
    newline = "\r\n" if "\r\n" in text else "\n"
    indent = " " * mapping.start_mark.column
    return yamledit.Edit(start, start, f"{key}: {value}{newline}{indent}")


def _move_to_patches(unit: Unit, item, content: _Content, new_text: str, jobset_target: str) -> None:
    """`patchesStrategicMerge: [- p.yaml]` cannot carry a target: the entry leaves that list and
    joins `patches` (created at the end of the file if missing) as `path` or inline `patch`."""
    text = unit.text
    newline = "\r\n" if "\r\n" in text else "\n"
    root = yamledit.compose(text)
    psm = yamledit.get(root, "patchesStrategicMerge")
    entries = yamledit.items(psm)
    if getattr(psm, "flow_style", False):
        raise Unmappable(item, "patchesStrategicMerge written as a flow list [..]: move the entry to `patches` by hand")
    if len(entries) == 1:  # the whole key goes
        key_node = next(k for k, v in root.value if v is psm)
        start = text.rfind("\n", 0, key_node.start_mark.index) + 1
        end = _line_end(text, psm.end_mark.index)
    else:
        start = text.rfind("\n", 0, item.start_mark.index) + 1
        end = _line_end(text, item.end_mark.index)
    unit.edits.append(yamledit.Edit(start, end, ""))
    if content.file is None:
        body = "".join("      " + ln + newline if ln else newline for ln in new_text.rstrip("\n").split("\n"))
        entry = f"- patch: |-{newline}{body}  target: {jobset_target}{newline}"
    else:
        unit.files[content.file] = (new_text, content.bom)
        unit.rewrites.append(f"{content.file}: kustomize patch aims at a v1 job")
        entry = f"- path: {yamledit.quote(yamledit.scalar(item), None)}{newline}  target: {jobset_target}{newline}"
    patch_list = yamledit.get(root, "patches")
    if (patch_list is not None and type(patch_list).__name__ == "SequenceNode" and not getattr(patch_list, "flow_style", False)
            and yamledit.items(patch_list)):
        last = yamledit.items(patch_list)[-1]
        at = _line_end(text, last.end_mark.index)
        first = yamledit.items(patch_list)[0].start_mark.index
        col = text.rfind("- ", text.rfind("\n", 0, first) + 1, first)
        indent = " " * (col - (text.rfind("\n", 0, col) + 1)) if col >= 0 else ""
        entry = "".join(indent + ln + newline for ln in entry.rstrip(newline).split(newline))
        unit.edits.append(yamledit.Edit(at, at, entry))
    elif patch_list is not None:
        raise Unmappable(item, "`patches` is not a block list; move this patchesStrategicMerge entry to it by hand")
    else:
        at = len(text)
        lead = "" if text.endswith(("\n", "\r\n")) or not text else newline
        unit.edits.append(yamledit.Edit(at, at, f"{lead}patches:{newline}{entry}"))
    unit.rewrites.append(f"{unit.path}:{yamledit.pos(item)[0]}: patchesStrategicMerge entry aims at a v1 job")


def _line_end(text: str, index: int) -> int:
    """Index just past the newline that ends the line holding `index` (or past the last
    character consumed by a node that already ends at a line start)."""
    if index > 0 and text[index - 1] == "\n":
        return index
    nl = text.find("\n", index)
    return len(text) if nl < 0 else nl + 1
