"""Selectors that picked a job's pods under v1 pick the same pods after conversion.

The operator labelled its pods (training.kubeflow.org/job-name, replica-type, job-role, ...); the
JobSet's pods carry jobset.sigs.k8s.io/* labels instead (JS051). A selector on the operator's labels --
in the job's own pod templates (affinity, anti-affinity, topologySpreadConstraints) or in an object of
the same file (Service, PodDisruptionBudget, NetworkPolicy, PodMonitor) -- would then pick nothing.

Each selector is evaluated on the pods of both worlds (runtime/operator_view.py, runtime/jobset_view.py,
runtime/selectors.py). Where the sets differ:

* JS052: a label the operator set with one value on every pod of a replica type is *kept* on that
  type's pod templates (exactly the pods that had it), and the selector stays as written;
* JS053: a label a template cannot give (replica-index, job-role=master on worker 0, the launcher's
  Job name) is *rewritten* to the JobSet label that picks the same pods (job-index, job-global-index,
  replicatedjob-name, job-name); in an object of the file, its text is edited in place;
* JS054: neither picks the same pods: the selector is left and named (warning);
* JS055: a selector on a label only older operators set (group-name, pytorch-replica-type,
  mpi-job-name, ...) picked none of the v1 world's pods and picks none now: named, with the label that
  would (warning).

Pure: the file's other objects come in as :class:`Peer` values (kf2jobset/files/pipeline.py gathers them),
the text edits go out as :class:`PeerEdit` values on the conversion.
"""
from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field, replace

from .. import claims as claim
from ..claims import pod_path
from ..notes import Note
from ..runtime import selectors as sel
from ..runtime.jobset_view import jobset_pod_labels
from ..runtime.operator_view import operator_pod_labels
from ..text import yamledit
from ..text.yamlio import to_plain


SELECTING_TEXT = sel.SELECTING_TEXT  # a file with a Service, PodDisruptionBudget, NetworkPolicy or PodMonitor


@dataclass(frozen=True)
class Peer:
    """An object of the same file that may select pods: its document index and its content (JSON)."""

    index: int
    content: str
    file: str | None = None  # another file of the run (repo mode, several paths): never edited
    job: bool = False  # another Kubeflow job of the file: converted on its own, never edited here

    @property
    def obj(self) -> dict:
        return json.loads(self.content)


@dataclass(frozen=True)
class PeerEdit:
    """Requirement `old` of the selector at `path` in document `index` becomes `new` (same operator and
    number of values, so the edit is to scalars only)."""

    index: int
    path: tuple
    old: sel.Req
    new: sel.Req


@dataclass
class _Pod:
    key: tuple
    labels: dict


@dataclass
class _World:
    name: str | None
    pods: list


@dataclass
class _Item:
    found: sel.Found
    where: str  # "template" or "peer"
    rtype: str | None = None  # template: the replica type
    rjobs: list = field(default_factory=list)  # template: the replicatedJobs holding it
    peer: int | None = None
    file: str | None = None  # a peer in another file
    before: frozenset = frozenset()
    v1: frozenset = frozenset()


def fix_selectors(conv, options) -> None:
    """Make every selector on the job's pods pick, in the JobSet world, the pods it picked under v1."""
    job, jobset = conv.job, conv.jobset
    items = _items(conv, options)
    if not items:
        return
    op = _World(job.name or "job", [_Pod(k, ls) for k, ls in operator_pod_labels(job)])
    js = _World(None, [_Pod(k, ls) for k, ls in jobset_pod_labels(jobset, roles=conv.plan.pod_roles)])
    services = [it for it in items if it.where == "services"]
    items = [it for it in items if it.where != "services"]
    _note_services(conv, services, op)
    for it in items:
        it.v1 = sel.selected(it.found.reqs, op.pods)
        it.before = sel.selected(it.found.reqs, js.pods)
    # 1. keep the static labels the differing selectors use
    kept = _labels_to_keep(items, job, op)
    for p in js.pods:
        for key, by_role in kept.items():
            if p.key[0] in by_role:
                p.labels[key] = by_role[p.key[0]]
    # 2. rewrite what keeping cannot give
    outcomes = _outcomes(items, op, js, kept, named=bool(job.name))
    if not outcomes:
        return
    kept = {k: v for k, v in kept.items()
            if any(how in ("kept", "rewritten", "elsewhere") and k in it.found.keys for it, how, _ in outcomes)}
    _apply_kept(conv, kept)
    for it, how, new in outcomes:
        if how == "rewritten":
            _apply_rewrite(conv, it, new)
        conv.notes.append(_note(conv, it, how, new, kept, job, jobset))
    if kept:
        _amend_label_notes(conv, kept)


def _note_services(conv, services: list[_Item], op: _World) -> None:
    """A note for each object of the file (a ServiceMonitor) whose Service selector picked Services the v1 operator made."""
    for it in services:
        picked = [n for n, labels in operator_services(conv.job, op) if sel.matches(it.found.reqs, labels)]
        if picked:
            conv.notes.append(_service_note(it, picked))


def _labels_to_keep(items: list[_Item], job, op: _World) -> dict:
    """key -> {role: value}: the operator labels the differing selectors use that had one value on every pod
    of a replica type, so the JobSet's pod templates can carry them on exactly those pods."""
    op_roles: dict = {}
    for p in op.pods:
        op_roles.setdefault(p.key[0], []).append(p)
    template_keys = {k for s in job.replicas.values() for k in ((s.template.get("metadata") or {}).get("labels") or {})}
    kept: dict = {}
    for it in items:
        if it.v1 == it.before:
            continue
        for r in it.found.reqs:
            if r.key in kept or r.key in template_keys or not sel.operator_keys(r.key) or not sel.templatable(r.key):
                continue
            per_role = {role: {p.labels.get(r.key) for p in pods} for role, pods in op_roles.items()}
            if not job.name and any(v and op.name in v for vals in per_role.values() for v in vals):
                continue  # the job is named when it is created (a Katib trial): its name is not known here
            if all(len(v) == 1 for v in per_role.values()) and any(None not in v for v in per_role.values()):
                kept[r.key] = {role: next(iter(v)) for role, v in per_role.items() if None not in v}
    return kept


def _outcomes(items: list[_Item], op: _World, js: _World, kept: dict, *, named: bool) -> list[tuple]:
    """(item, how, rewrite) for each selector to act on or name: retired, kept, rewritten, elsewhere or left."""
    outcomes = []
    for it in items:
        if it.v1 == it.before:
            if it.v1 == frozenset() and any(r.key in sel.RETIRED_KEYS and r.op in ("In", "Exists") for r in it.found.reqs):
                outcomes.append((it, "retired", None))
            continue
        if sel.selected(it.found.reqs, js.pods) == it.v1:
            outcomes.append((it, "kept", None))
            continue
        new = _rewrite(it, op.pods, js.pods, kept, named=named)
        how = "left" if new is None else "rewritten" if it.file is None else "elsewhere"
        outcomes.append((it, how, new))
    return outcomes


def _items(conv, options) -> list[_Item]:
    job, jobset = conv.job, conv.jobset
    out: list[_Item] = []
    seen: dict = {}
    roles = conv.plan.pod_roles
    by_type = {t.lower().replace("/", "-"): t for t in job.replicas}
    for rj in (jobset.get("spec") or {}).get("replicatedJobs") or []:
        rtype = by_type.get(roles.get(rj.get("name"), (rj.get("name"), 0))[0], rj.get("name"))
        pod_spec = (((rj.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec")
        for f in sel.pod_selectors(pod_spec, f"{job.mapping.replica_specs_field}.{rtype}.template.spec"):
            k = (rtype, f.path)
            if k in seen:
                seen[k].rjobs.append(rj.get("name"))
                continue
            seen[k] = _Item(f, "template", rtype=rtype, rjobs=[rj.get("name")])
            out.append(seen[k])
    namespace = job.namespace or None
    for peer in getattr(options, "selector_peers", ()) or ():
        obj = peer.obj
        meta = obj.get("metadata") or {}
        if (meta.get("namespace") or None) != namespace:
            continue  # another namespace's object selects other pods
        if peer.job and (obj.get("kind"), meta.get("name")) == (job.kind, job.name):
            continue  # this job: its own templates are above
        where = peer.file if peer.file else "its JobSet" if peer.job else None
        for f in sel.object_selectors(obj):
            out.append(_Item(f, "peer", peer=peer.index, file=where))
        f = sel.service_selector(obj)
        if f is not None:
            out.append(_Item(f, "services", peer=peer.index, file=peer.file))
    return out


def _rewrite(it: _Item, op_pods, js_pods, kept: dict, named: bool = True):
    """Requirements to replace (origin -> new Req) so the selector picks the v1 pods' twins; None if none do.
    Not `named` (named at creation): no requirement on a value that holds the name."""
    bad = [r for r in it.found.reqs if sel.operator_keys(r.key) and r.key not in kept]
    if not bad:
        return None
    options = []
    for r in bad:
        form = r.origin[0] if r.origin else "matchExpressions"
        cands = sel.candidates(r, op_pods, js_pods, form)
        if not named:
            cands = [c for c in cands if c.key not in sel.NAME_KEYS or not c.values]
        if it.where == "peer" and it.file is None:  # an object of the file: edit scalars only
            cands = [c for c in cands if c.op == r.op and len(c.values) == len(r.values)]
        options.append(cands)
    for choice in itertools.islice(itertools.product(*options), 256):
        swap = dict(zip((r.origin for r in bad), choice, strict=False))
        reqs = [swap.get(r.origin, r) for r in it.found.reqs]
        if sel.selected(reqs, js_pods) == it.v1:
            return swap
    return None


def _apply_kept(conv, kept: dict) -> None:
    roles = conv.plan.pod_roles
    for rj in conv.jobset["spec"]["replicatedJobs"]:
        role = roles.get(rj["name"], (rj["name"], 0))[0]
        pod = rj["template"]["spec"].setdefault("template", {})
        for key, by_role in kept.items():
            if role in by_role:
                labels = pod.setdefault("metadata", {}).setdefault("labels", {})
                labels.setdefault(key, by_role[role])


def _apply_rewrite(conv, it: _Item, swap: dict) -> None:
    if it.where == "peer":
        conv.peer_edits.extend(PeerEdit(it.peer, it.found.path, old, swap[old.origin])
                               for old in it.found.reqs if old.origin in swap)
        return
    for rj in conv.jobset["spec"]["replicatedJobs"]:
        if rj["name"] not in it.rjobs:
            continue
        holder = sel.get(rj["template"]["spec"]["template"]["spec"], it.found.path)
        for origin, new in swap.items():
            kind, ref = origin
            if kind == "matchLabels":
                ml = holder["matchLabels"]
                ml.pop(ref, None)
                ml[new.key] = new.values[0]
            else:
                e = holder["matchExpressions"][ref]
                e["key"], e["operator"] = new.key, new.op
                if new.values:
                    e["values"] = list(new.values)
                else:
                    e.pop("values", None)  # Exists, DoesNotExist: no values


def _pods(keys) -> str:
    return ", ".join(f"{r}-{i}" for r, i in sorted(keys)) or "none"


def _note(conv, it: _Item, how: str, swap, kept: dict, job, jobset) -> Note:
    f = it.found
    text = ", ".join(r.text() for r in f.reqs)
    src = f.what if it.where == "template" else None
    place = f"the selector {{{text}}} at spec.{f.what}" if it.where == "template" else f"the selector {{{text}}} of {f.what}"
    if it.file is not None:
        place += f" in {it.file}"
    if how == "retired":
        old = sorted({r.key for r in f.reqs if r.key in sel.RETIRED_KEYS})
        return Note("JS055", "unchanged",
                    f"{place} selected none of the job's pods under v1 and selects none now: "
                    + "; ".join(f"{k} was set by {sel.RETIRED_KEYS[k]} only" for k in old),
                    source_path=src, warn=True,
                    action="select by jobset.sigs.k8s.io/jobset-name, replicatedjob-name and job-index "
                           "(the labels every JobSet pod carries)",
                    unchecked="what a selector selected is a property of the pods of both worlds (the e2e differential checks it)")
    if how == "elsewhere":
        pairs = [(old, swap[old.origin]) for old in f.reqs if old.origin in swap]
        said = "; ".join(f"{o.text()} -> {n.text()}" for o, n in pairs)
        return Note("JS056", "breaking",
                    f"{place} picked {_pods(it.v1)} under v1 by a label a pod template cannot give; that file is "
                    f"not this job's, so kf2jobset does not edit it: the JobSet label that picks the same pods is "
                    f"{said}", explains=(("selector", f.what),),
                    action=f"edit {it.file}: {said}",
                    unchecked="the selector is in another file, which this conversion does not write")
    if how == "kept":
        used = {r.key: kept[r.key] for r in f.reqs if r.key in kept}
        labels = "; ".join(f"{k}={'/'.join(sorted(set(v.values())))} on {', '.join(sorted(v))}" for k, v in used.items())
        return Note("JS052", "rewritten",
                    f"{place} picked {_pods(it.v1)} under v1 by the operator's labels: they are kept on those pods' "
                    f"templates ({labels}), so it picks the same pods", source_path=src, warn=not it.before,
                    target_path="template.metadata.labels", explains=tuple(("label", k) for k in used),
                    claims=_kept_claims(conv, used))
    if how == "rewritten":
        pairs = [(old, swap[old.origin]) for old in f.reqs if old.origin in swap]
        said = "; ".join(f"{o.text()} -> {n.text()}" for o, n in pairs)
        where = "in the JobSet's pod template" if it.where == "template" else "in its text"
        claims, unchecked = (), None
        if it.where == "template":
            claims = tuple(c for old, new in pairs for c in _rewrite_claims(it, old, new))
        else:
            unchecked = f"the {f.what.split(' ')[0]} is another document of the file, edited in place"
        kept_used = [r.key for r in f.reqs if r.key in kept]
        return Note("JS053", "rewritten",
                    f"{place} picked {_pods(it.v1)} under v1 by a label a pod template cannot give; rewritten "
                    f"{where} to JobSet labels that pick the same pods ({said})"
                    + (f"; {', '.join(kept_used)} kept on the templates (JS052)" if kept_used else ""),
                    source_path=src, warn=not it.before, explains=tuple(("label", o.key) for o, _ in pairs),
                    claims=claims + (_kept_claims(conv, {k: kept[k] for k in kept_used}) if kept_used else ()),
                    unchecked=unchecked if not claims and not kept_used else None)
    after = sel.selected(f.reqs, [_Pod(k, ls) for k, ls in jobset_pod_labels(jobset, roles=conv.plan.pod_roles)])
    return Note("JS054", "approximated",
                f"{place} picked {_pods(it.v1)} under v1 and picks {_pods(after)} in the JobSet: no kept label or "
                "JobSet label picks the same pods", source_path=src, warn=True,
                action="select by jobset.sigs.k8s.io/jobset-name, replicatedjob-name, job-index or job-global-index",
                explains=(("selector", f.what),),
                unchecked="what a selector selected is a property of the pods of both worlds (the e2e differential checks it)")


def operator_services(job, op) -> list:
    """(name, labels) of the Services the v1 operator made for the job: training-operator one per pod
    (labels job-name, operator-name, replica-type, replica-index: common/service.go), mpi-operator one
    headless Service named after the job (label app=<job>: mpi_job_controller.go newService); a JobSet has
    one headless Service with no ports instead."""
    if job.mapping.pod_addresses == "jobService":
        return [(op.name, {"app": op.name})]
    if job.mapping.pod_addresses == "podName":
        return []  # the v1 MPIJob controller made no per-pod Services
    keep = ("job-name", "operator-name", "replica-type", "replica-index")
    return [(f"{op.name}-{p.key[0]}-{p.key[1]}", {k: v for k, v in p.labels.items() if k in {sel.KF + x for x in keep}})
            for p in op.pods]


def _service_note(it: _Item, picked: list) -> Note:
    f = it.found
    text = ", ".join(r.text() for r in f.reqs)
    where = f" in {it.file}" if it.file else ""
    return Note("JS057", "dropped",
                f"the selector {{{text}}} of {f.what}{where} selected the Services the operator made for the job "
                f"({', '.join(sorted(picked)[:4])}{', ...' if len(picked) > 4 else ''}); a JobSet makes one headless "
                "Service with no ports instead, so it selects nothing to scrape", warn=True,
                explains=(("service", f.what),),
                action="scrape the pods with a PodMonitor (the labels it selects by are kept, JS052), or select a "
                       "Service of your own that selects the pods",
                unchecked="the operator's Services are not objects kf2jobset writes")


def _kept_claims(conv, used: dict) -> tuple:
    roles = conv.plan.pod_roles
    out = []
    for rj in conv.jobset["spec"]["replicatedJobs"]:
        role = roles.get(rj["name"], (rj["name"], 0))[0]
        for k, by_role in used.items():
            if role in by_role:
                out.append(claim.equals(f"{pod_path(rj['name'])}.metadata.labels[{k}]", by_role[role]))
    return tuple(out)


def _rewrite_claims(it: _Item, old: sel.Req, new: sel.Req) -> list:
    base = f"{pod_path(it.rjobs[0])}.spec.{sel.dotted(it.found.path)}"
    kind, ref = old.origin
    if kind == "matchLabels":
        return [claim.equals(f"{base}.matchLabels[{new.key}]", new.values[0])]
    return [claim.equals(f"{base}.matchExpressions[{ref}].key", new.key),
            claim.equals(f"{base}.matchExpressions[{ref}].values", list(new.values)) if new.values else
            claim.absent(f"{base}.matchExpressions[{ref}].values")]


def _amend_label_notes(conv, kept: dict) -> None:
    """JS050/JS051 say the operator's labels are not set: not those kept for a selector."""
    for i, n in enumerate(conv.notes):
        if n.code not in ("JS050", "JS051"):
            continue
        claims = tuple(c for c in n.claims if not (c.op == "absent" and any(c.path.endswith(f"[{k}]") for k in kept)))
        names = ", ".join(sorted(kept))
        conv.notes[i] = replace(n, claims=claims, message=n.message + f" (kept for the selectors that use them: {names}, JS052)")


# ---------------------------------------------------------------------------------------------
# the file's other objects (kf2jobset/files/pipeline.py)

_SELECTING_KIND = None


def _selecting_kind():
    import re

    global _SELECTING_KIND
    if _SELECTING_KIND is None:
        _SELECTING_KIND = re.compile(r"^\s*\"?kind\"?\s*:\s*[\"']?(" + "|".join(sel.PEER_KINDS) + r")\b", re.M)
    return _SELECTING_KIND


def tree_peers(files) -> tuple:
    """The selecting objects of every file of a run, [(path, text)], as Peers of those files: a job's
    conversion keeps the labels they select by, and names what it cannot keep (JS056)."""
    import yaml

    out = []
    for path, text in files:
        if not _selecting_kind().search(text):
            continue
        try:
            docs = list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
        except Exception:  # noqa: BLE001 - not YAML: nothing to select with
            continue
        out += [Peer(-1, json.dumps(d, default=str), file=path) for d in docs
                if isinstance(d, dict) and d.get("kind") in sel.PEER_KINDS]
    return tuple(out)


def peers_of(docs, path: str | None = None, run: tuple = ()) -> tuple:
    """The documents of a file that select pods by label (runtime/selectors.SELECTING), as Peers, and
    those of the run's other files (`run`, from :func:`tree_peers`)."""
    out = [p for p in run if p.file != path]
    jobs: list = []
    for i, d in enumerate(docs):
        if d.error is not None:
            continue
        if isinstance(d.data, dict) and str(d.data.get("apiVersion", "")).startswith("kubeflow.org/") and \
                isinstance(d.data.get("spec"), dict) and any(str(k).endswith("ReplicaSpecs") for k in d.data["spec"]):
            # another job of the file may select this job's pods from its templates; it is converted on its
            # own, so only labels are kept for it (JS052), never its text edited
            jobs.append((i, d.data))
            continue
        if not _selecting_kind().search(d.text):
            continue
        data = d.data
        if data is None:
            import yaml

            try:
                data = yaml.load(d.text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            except Exception:  # noqa: BLE001 - not loadable: nothing to select with
                continue
        if isinstance(data, dict) and data.get("kind") in sel.PEER_KINDS:
            out.append(Peer(i, json.dumps(data, default=str)))
    if len(jobs) > 1:
        out += [Peer(i, json.dumps(to_plain(data), default=str), job=True) for i, data in jobs]
    return tuple(out)


def edit_peers(docs, edits: list) -> dict:
    """Document index -> its text with the requirements `edits` name rewritten (scalars only: every
    other byte stays)."""
    by_doc: dict = {}
    for e in edits:
        by_doc.setdefault(e.index, []).append(e)
    out = {}
    for i, mine in by_doc.items():
        text = docs[i].text
        root = yamledit.compose(text)
        changes = []
        for e in dict.fromkeys(mine):
            node = root
            for p in e.path:
                node = yamledit.items(node)[p] if isinstance(p, int) else yamledit.get(node, p)
            kind, ref = e.old.origin
            if kind in ("map", "matchLabels"):
                m = node if kind == "map" else yamledit.get(node, "matchLabels")
                for k, v in (m.value if m is not None else ()):
                    if yamledit.scalar(k) == str(ref):
                        changes += [_scalar(k, e.new.key), _scalar(v, e.new.values[0])]
            else:
                entry = yamledit.items(yamledit.get(node, "matchExpressions"))[ref]
                changes.append(_scalar(yamledit.get(entry, "key"), e.new.key))
                changes += [_scalar(v, new) for v, new in zip(yamledit.items(yamledit.get(entry, "values")), e.new.values, strict=False)]
        out[i] = yamledit.apply_edits(text, changes)
    return out


def _scalar(node, value: str):
    """An edit of one scalar to a string value, quoted where a plain scalar would not read as a string."""
    import re

    style = node.style
    if not style and re.fullmatch(r"[-+]?[0-9][0-9_.eExXoObB]*|true|false|yes|no|on|off|null|~|y|n", value, re.I):
        style = '"'
    return yamledit.Edit(node.start_mark.index, node.end_mark.index, yamledit.quote(value, style))


def peers_in(objects: list) -> tuple:
    """The selecting objects of a list of objects (a KRM ResourceList's items), as Peers by position."""
    return tuple(Peer(i, json.dumps(o, default=str)) for i, o in enumerate(objects)
                 if isinstance(o, dict) and o.get("kind") in sel.PEER_KINDS)


def edit_peer_objects(objects: list, edits: list) -> None:
    """The PeerEdits made on objects (in place), for front ends that hold objects, not text."""
    for e in dict.fromkeys(edits):
        holder = sel.get(objects[e.index], e.path)
        kind, ref = e.old.origin
        if kind in ("map", "matchLabels"):
            m = holder if kind == "map" else holder.get("matchLabels")
            if isinstance(m, dict) and ref in m:
                del m[ref]
                m[e.new.key] = e.new.values[0]
        else:
            entry = holder["matchExpressions"][ref]
            entry["key"] = e.new.key
            if e.new.values:
                entry["values"] = list(e.new.values)
