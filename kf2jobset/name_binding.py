"""Values a converted JobSet holds with its own name or namespace spelled out, and the JobSets edited away from them.

Most of what kf2jobset writes reads the JobSet's name and namespace at run time (the pod's own
`jobset-name` label, `metadata.namespace`: `$(KF2JOBSET_JOBSET_NAME)`, `$(KF2JOBSET_NAMESPACE)`), so a
renamed or moved JobSet keeps working. A few values cannot: the MPI hostfile ConfigMap (`--mpi-hostfile
configmap`, the default for a named job: its hostnames, the ConfigMap's own name), the dnsConfig search
domain of Intel MPI/MPICH pods (`<subdomain>.<namespace>.svc.<domain>`: dnsConfig takes no variables),
JS066's companion Services (their selector names the JobSet), the gang's PodGroup (`--scheduler volcano` /
`scheduler-plugins`: its name, and the pods' reference to it, are the job's name; a renamed copy beside the
one converted shares it) and the YuniKorn application id `--scheduler yunikorn` writes (the job's name:
k8shim keys its applications by id alone, in every namespace, so a renamed or moved copy joins the
converted one's application). Where such a value is written, the JobSet
records what it was written for (`kf2jobset.dev/named-for: name=N[,namespace=NS]`) and which values
depend on it (`kf2jobset.dev/name-literals`). `convert --check` lists a JobSet whose name or namespace no
longer matches its record (`renamed`); every other mode warns in the same words (`Renamed.listing`).

A JobSet converted before records were written is read from the hostfile ConfigMap it mounts, where that is in
the same stream (its jobset-name label and hostnames say what it was written for).

In one stream (a file, or `kustomize build` piped to `convert --check -`) a companion kf2jobset wrote may
also be renamed by kustomize's namePrefix/nameSuffix while the JobSet's reference to it is not (kustomize
knows no name reference inside a JobSet): that is said on the JobSet's line. So is a PodGroup the pods no
longer find: renamed while their reference was not, or left in another namespace than the JobSet's.

Light to import (the hook reads every staged file): the YAML reader is loaded only for a file that holds
a record.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from .categories import RENAMED
from .schedulers import every as every_scheduler
from .schedulers.yunikorn import APP_ID_KEYS
from .staleness import SOURCE_ANNOTATION

NAMED_FOR_ANNOTATION = "kf2jobset.dev/named-for"
NAME_LITERALS_ANNOTATION = "kf2jobset.dev/name-literals"
NAME, NAMESPACE = "name", "namespace"
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
MANAGED_BY = ("app.kubernetes.io/managed-by", "kf2jobset")
_ITEM = re.compile(r"^(?P<what>.+?) \[(?P<deps>[a-z, ]+)\]$")
# where a pod names its gang's PodGroup, by the PodGroup's API group (each scheduler's podgroup)
GANG_REFERENCES = {s.podgroup.group: (s.podgroup.where, s.podgroup.key) for s in every_scheduler() if s.podgroup}
YUNIKORN_APP_ID = APP_ID_KEYS[0]  # the label --scheduler yunikorn writes
_GANG_ITEM = re.compile(r"^PodGroup (?P<group>\S+) \((?P<key>\S+) of (?P<rjobs>.+)\)$")


# ---------------------------------------------------------------- the record, written at conversion

def _hostfile_configmaps(companions: list, name: str, namespace: str | None) -> list[tuple[str, tuple]]:
    out = []
    for c in companions:
        meta = c.get("metadata") or {}
        labels = meta.get("labels") or {}
        if c.get("kind") != "ConfigMap" or labels.get(MANAGED_BY[0]) != MANAGED_BY[1] or labels.get(JOBSET_NAME_LABEL) != name:
            continue
        data = c.get("data") or {}
        spelled = namespace is not None and any(f".{namespace}.svc" in str(v) for v in data.values())
        out.append((f"ConfigMap {meta.get('name')} ({', '.join(data)})", (NAME, NAMESPACE) if spelled else (NAME,)))
    return out


def _dns_searches(jobset: dict, name: str, namespace: str, subdomain: str | None) -> list[tuple[str, tuple]]:
    """dnsConfig search domains that spell this JobSet's subdomain (its name, unless pinned) and namespace."""
    where, deps = [], ()
    sub = subdomain or name
    for rj in (jobset.get("spec") or {}).get("replicatedJobs") or []:  # a TrainJob's pods are its runtime's
        pod = ((rj.get("template") or {}).get("spec") or {}).get("template", {}).get("spec") or {}
        searches = (pod.get("dnsConfig") or {}).get("searches") or []
        if any(isinstance(s, str) and s.startswith(f"{sub}.{namespace}.svc") for s in searches):
            where.append(rj["name"])
            deps = (NAMESPACE,) if subdomain else (NAME, NAMESPACE)
    return [(f"dnsConfig.searches of {', '.join(where)}", deps)] if where else []


def _selecting_services(companions: list, name: str) -> list[tuple[str, tuple]]:
    names = [str((c.get("metadata") or {}).get("name")) for c in companions if c.get("kind") == "Service"
             and ((c.get("spec") or {}).get("selector") or {}).get(JOBSET_NAME_LABEL) == name]
    if not names:
        return []
    return [(f"Service{'s' if len(names) > 1 else ''} {', '.join(names)} (selector {JOBSET_NAME_LABEL})", (NAME,))]


def _pod_templates(obj: dict, others=()) -> list[tuple[str, dict]]:
    """(replicatedJob, pod template) of a JobSet; of a TrainJob, those its runtimePatches and its own
    TrainingRuntime (in `others`, by runtimeRef) give."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if obj.get("kind") == "TrainJob":
        ref = spec.get("runtimeRef") or {}
        runtimes = [o for o in others if o.get("kind") == "TrainingRuntime" and ref.get("kind") == "TrainingRuntime"
                    and _meta(o).get("name") == ref.get("name")]
        specs = [(p.get("trainingRuntimeSpec") or {}) for p in spec.get("runtimePatches") or [] if isinstance(p, dict)]
        specs += [(r.get("spec") or {}) for r in runtimes[:1]]
        rjobs = [rj for s in specs for rj in ((s.get("template") or {}).get("spec") or {}).get("replicatedJobs") or []]
    else:
        rjobs = spec.get("replicatedJobs") or []
    return [(str(rj.get("name")), ((rj.get("template") or {}).get("spec") or {}).get("template") or {})
            for rj in rjobs if isinstance(rj, dict)]


def _pod_meta(template: dict, where: str) -> dict:
    value = (template.get("metadata") or {}).get(where) if isinstance(template.get("metadata"), dict) else None
    return value if isinstance(value, dict) else {}


def _pod_groups(obj: dict, companions: list, name: str, others=()) -> list[tuple[str, tuple]]:
    """The gang's PodGroup kf2jobset named after the job, and the pods that name it: a renamed copy of the JobSet
    shares it (its namespace is checked in the stream: a PodGroup moves with the JobSet or is lost to it)."""
    out = []
    for c in companions:
        where, key = GANG_REFERENCES.get(str(c.get("apiVersion", "")).split("/")[0], (None, None))
        if c.get("kind") != "PodGroup" or key is None or _meta(c).get("name") != name:
            continue
        rjobs = [rj for rj, t in _pod_templates(obj, others) if _pod_meta(t, where).get(key) == name]
        out += [(f"PodGroup {name} ({key} of {', '.join(rjobs)})", (NAME,))] if rjobs else []
    return out


def _app_ids(obj: dict, name: str, others=()) -> list[tuple[str, tuple]]:
    rjobs = [rj for rj, t in _pod_templates(obj, others) if _pod_meta(t, "labels").get(YUNIKORN_APP_ID) == name]
    return [(f"{YUNIKORN_APP_ID} {name} of {', '.join(rjobs)}", (NAME, NAMESPACE))] if rjobs else []


def record(jobset: dict, companions: list, name: str | None, namespace: str | None, subdomain: str | None,
           others: list = ()) -> None:
    """Record on the JobSet (or a TrainJob, whose JobSet Trainer names after it) the name and namespace its
    name-bound literals were written for, where it has any.
    `namespace`: the manifest's (None: none, and a literal that must name one says `default`, MPI014).
    `others`: a TrainJob's own TrainingRuntime, whose pod templates are its pods'."""
    if not name:
        return  # no name known: kf2jobset wrote nothing name-bound (generateName: every address follows the label)
    items = (_hostfile_configmaps(companions, name, namespace)
             + _dns_searches(jobset, name, namespace or "default", subdomain)
             + _selecting_services(companions, name)
             + _pod_groups(jobset, companions, name, others) + _app_ids(jobset, name, others))
    if not items:
        return
    deps = {d for _, ds in items for d in ds}
    named_for = ([f"{NAME}={name}"] if NAME in deps else []) + ([f"{NAMESPACE}={namespace or 'default'}"]
                                                               if NAMESPACE in deps else [])
    annotations = jobset["metadata"].setdefault("annotations", {})
    annotations[NAMED_FOR_ANNOTATION] = ",".join(named_for)
    annotations[NAME_LITERALS_ANNOTATION] = "; ".join(f"{what} [{', '.join(ds)}]" for what, ds in items)


def parse_named_for(text) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for part in str(text or "").split(","):
        key, sep, value = part.strip().partition("=")
        if not sep or key not in (NAME, NAMESPACE) or not value:
            return None
        out[key] = value
    return out or None


def parse_literals(text) -> list[tuple[str, tuple]]:
    """(value, what it depends on) of each item of a name-literals annotation; an item of another shape depends on both."""
    out = []
    for item in str(text or "").split("; "):
        m = _ITEM.match(item.strip())
        out.append((m.group("what"), tuple(d.strip() for d in m.group("deps").split(","))) if m
                   else (item.strip(), (NAME, NAMESPACE)))
    return [(what, deps) for what, deps in out if what]


# ---------------------------------------------------------------- the check

@dataclass(frozen=True)
class Renamed:
    category: ClassVar[str] = RENAMED
    line: int  # 1-based line of the JobSet document
    label: str  # JobSet NAME (APIVERSION)
    changes: tuple  # ((name|namespace, recorded, now), ...)
    stale: tuple  # the values that still name the recorded ones
    source: str | None  # the v1 job it was converted from (kf2jobset.dev/source)
    companions: tuple = ()  # (kind, name written, name in this stream) of companions kustomize renamed
    record: str = ""  # set when the record matches the object but the values it lists name another (it was edited alone)
    gang: tuple = ()  # (what the pods' PodGroup reference misses in this stream, the fix), whatever the record says

    def listing(self, path: str) -> str:
        """`FILE:LINE: KIND NAME (APIVERSION): renamed: ...`, as --check lists it and the other modes warn."""
        return f"{path}:{self.line}: {self.label}: {RENAMED}: {self.message()}"

    def message(self) -> str:
        gang = "; ".join(said for said, _ in self.gang)
        if not self.changes and not self.stale:
            return f"{gang}: {'; or '.join(dict.fromkeys(fix for _, fix in self.gang))}"
        if not self.changes:
            return (f"{NAMED_FOR_ANNOTATION} records {self.record}, but {' and '.join(self.stale)} name another (was the "
                    f"record edited without them?){'; and ' + gang if gang else ''}: {'; or '.join(self._fixes())}")
        moved = ", ".join((f"{what} " if len(self.changes) > 1 else "") + f"{was} -> {now}" for what, was, now in self.changes)
        text = (f"{' and '.join(what for what, _, _ in self.changes)} changed since conversion ({moved}), "
                f"but {' and '.join(self.stale)} still name the old {'one' if len(self.changes) == 1 else 'ones'}")
        if any(what.startswith(YUNIKORN_APP_ID) for what in self.stale):
            text += (" (YuniKorn keys an application by its id alone, in every namespace: copies of this "
                     f"{self.label.split(' ')[0]} that run at once are one application, one gang)")
        elif not self.gang and any(what.startswith("PodGroup ") for what in self.stale):  # else the stream says more
            text += f" (a copy running beside the {self.label.split(' ')[0]} converted shares its PodGroup, one gang)"
        if self.companions:
            said = [f"{kind} {was} to {now}, but not the JobSet's volume naming it (kustomize has no name reference into "
                    "a JobSet)" if kind == "ConfigMap" else
                    f"{kind} {was} to {now}, so the v1 name {was} your ConfigMap uses resolves to nothing"
                    for kind, was, now in self.companions]
            text += f"; and in this stream kustomize's namePrefix/nameSuffix renamed {'; '.join(said)}"
        if gang:
            text += f"; and in this stream {gang}"
        return f"{text}: {'; or '.join(self._fixes())}"

    def _fixes(self) -> list[str]:
        new = {what: now for what, _, now in self.changes}
        job = (f"the v1 job ({self.source})" if self.source else "the v1 job") + \
            (" (--target trainjob)" if self.label.startswith("TrainJob ") else "")
        dns = any(what.startswith("dnsConfig") for what in self.stale)
        follows = []  # options whose values read the name or namespace at run time, or never name them
        if any(what.startswith("ConfigMap ") for what in self.stale):
            follows.append(f"--mpi-hostfile generated{' (the ConfigMap)' if dns else ''}, whose launcher writes the "
                           "hostfile from its pod's own name and namespace at start")
        if dns and NAME in new:
            follows.append("--subdomain NAME (dnsConfig), which keeps the search domain off the JobSet's name"
                           + (" (not off its namespace)" if NAMESPACE in new else ""))
        own = [fix for _, fix in self.gang]
        if any(what.startswith(YUNIKORN_APP_ID) for what in self.stale):
            own.append(f"set {YUNIKORN_APP_ID} on every pod template to an id of this JobSet's own")
        if self.companions:  # a kustomize overlay: converting the base for one overlay's names breaks the others
            fixes = [f"convert {job} again with {' and '.join(follows)}"] if follows else []
            return list(dict.fromkeys(fixes + ["patch the listed values in the overlay"] + own))
        again = ([f"with --name {new[NAME]}"] if not str(new.get(NAME, "(")).startswith("(") else []) + \
            ([f"in namespace {new[NAMESPACE]}"] if not str(new.get(NAMESPACE, "(")).startswith("(") else [])
        # a YuniKorn id moved alone stays the one the converted JobSet uses: converting again keeps it
        moved_id = NAME not in new and all(what.startswith(YUNIKORN_APP_ID) for what in self.stale)
        fixes = [] if moved_id else [f"convert {job} again" + (f" {' and '.join(again)}" if again else "")]
        fixes += [f"with {option}" for option in follows]
        if any(what.startswith("Service") for what in self.stale):
            fixes.append("write the JobSet hostnames where your ConfigMap names v1's, and drop the Services")
        return list(dict.fromkeys(fixes + own))


def may_hold_record(text: str) -> bool:
    """A record, or (written before records were) a hostfile ConfigMap or a PodGroup kf2jobset wrote beside its JobSet."""
    return NAMED_FOR_ANNOTATION in text or (f"{JOBSET_NAME_LABEL}:" in text and "-mpi-hostfile" in text) \
        or (SOURCE_ANNOTATION in text and "PodGroup" in text)


def _unrecorded(data: dict, others: list) -> tuple[dict | None, list]:
    """A JobSet converted before records were written: the name and namespace its hostfile ConfigMap (in the same
    stream, mounted by the JobSet) was written for, read from the ConfigMap's jobset-name label and hostnames."""
    mounted = {str((v.get("configMap") or {}).get("name")) for rj in (data.get("spec") or {}).get("replicatedJobs") or []
               for v in ((((rj.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}).get("volumes")
               or [] if isinstance(v, dict) and isinstance(v.get("configMap"), dict)}
    for cm in others:
        meta = _meta(cm)
        labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
        data_ = cm.get("data") if isinstance(cm.get("data"), dict) else {}
        # the one it mounts, or that one renamed by a kustomize namePrefix/nameSuffix (in a rendered stream)
        written = next((m for m in sorted(mounted) if m == meta.get("name") or m in str(meta.get("name"))), None)
        if cm.get("kind") != "ConfigMap" or written is None or "hostfile" not in data_ \
                or labels.get(MANAGED_BY[0]) != MANAGED_BY[1] or not labels.get(JOBSET_NAME_LABEL):
            continue
        name = str(labels[JOBSET_NAME_LABEL])
        spelled = re.search(rf"\b{re.escape(name)}-[a-z0-9-]+-[0-9]+-0\.[a-z0-9-]+\.([a-z0-9-]+)\.svc", str(data_["hostfile"]))
        recorded = {NAME: name, **({NAMESPACE: spelled.group(1)} if spelled else {})}
        return recorded, [(f"ConfigMap {written} ({', '.join(data_)})", tuple(recorded))]
    return None, []


def _meta(data: dict) -> dict:
    return data.get("metadata") if isinstance(data.get("metadata"), dict) else {}


def _renamed_companions(stale: list[tuple[str, tuple]], recorded_name: str | None, others: list[dict]) -> tuple:
    """Companions of the record found in the stream under another name that still carries the recorded one."""
    out = []
    for what, _ in stale:
        kind, _, rest = what.partition(" ")
        if kind not in ("ConfigMap", "Service", "Services"):
            continue
        kind = "Service" if kind == "Services" else kind
        written = [n.strip() for n in rest.split(" (")[0].split(",")]
        present = {str(_meta(o).get("name")) for o in others if o.get("kind") == kind}
        for name in written:
            if name in present:
                continue
            renamed = sorted(n for n in present if name in n and n != name and
                             any(_meta(o).get("name") == n and (_meta(o).get("labels") or {}).get(JOBSET_NAME_LABEL)
                                 == recorded_name for o in others))
            out += [(kind, name, renamed[0])] if renamed else []
    return tuple(out)


def _unlike_record(data: dict, recorded: dict, items: list, others: list) -> list[tuple[str, tuple]]:
    """The listed values, as this stream holds them, that name another name or namespace than the record."""
    name, namespace = recorded.get(NAME), recorded.get(NAMESPACE)
    rjobs = [str(rj.get("name")) for rj in (data.get("spec") or {}).get("replicatedJobs") or [] if isinstance(rj, dict)]
    # a pod's hostname of this name: <name>-<replicatedJob>-<index>-0. (a TrainJob's replicatedJobs are its runtime's)
    host = re.compile(rf"(?<![a-z0-9.-]){re.escape(name or '')}-(?:{'|'.join(map(re.escape, rjobs)) or '[a-z0-9]+'})-[0-9]+-0\.")
    out = []
    for what, deps in items:
        kind, _, rest = what.partition(" ")
        if kind == "dnsConfig.searches":
            for rj in (data.get("spec") or {}).get("replicatedJobs") or []:
                pod = (((rj.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
                searches = [s for s in (pod.get("dnsConfig") or {}).get("searches") or [] if isinstance(s, str)]
                sub_ok = lambda s, deps=deps: not (NAME in deps and name) or s.startswith(f"{name}.")  # noqa: E731
                if rj.get("name") in rest.split(" ", 1)[-1].split(", ") and not any(
                        sub_ok(s) and (not namespace or f".{namespace}.svc" in s) for s in searches):
                    out.append((f"dnsConfig.searches of {rj.get('name')} ({', '.join(searches) or 'none'})", deps))
        elif kind == "ConfigMap":
            cm = next((o for o in others if o.get("kind") == "ConfigMap" and _meta(o).get("name") == rest.split(" (")[0]), None)
            data_text = " ".join(str(v) for v in ((cm or {}).get("data") or {}).values())
            if cm is not None and ((NAME in deps and name and not host.search(data_text))
                                   or (NAMESPACE in deps and namespace and f".{namespace}.svc" not in data_text)):
                out.append((what, deps))
        elif kind in ("Service", "Services"):
            names = set(rest.split(" (")[0].split(", "))
            if any(o.get("kind") == "Service" and _meta(o).get("name") in names
                   and ((o.get("spec") or {}).get("selector") or {}).get(JOBSET_NAME_LABEL) != name for o in others):
                out.append((what, deps))
        elif name and (reference := _reference(what)):  # the pods still name the recorded JobSet's gang
            key, where, listed = reference
            if any(_pod_meta(t, where).get(key) not in (None, name) for rj, t in _pod_templates(data, others) if rj in listed):
                out.append((what, deps))
    return out


def _reference(what: str) -> tuple[str, str, list[str]] | None:
    """(key, where on the pod, replicatedJobs) of a gang item of the record: a PodGroup's reference, YuniKorn's id."""
    gang = _GANG_ITEM.match(what)
    if gang:
        where = next((w for w, k in GANG_REFERENCES.values() if k == gang.group("key")), "labels")
        return gang.group("key"), where, gang.group("rjobs").split(", ")
    if what.startswith(f"{YUNIKORN_APP_ID} "):
        return YUNIKORN_APP_ID, "labels", what.partition(" of ")[2].split(", ")
    return None


def _referenced_groups(data: dict, others: list) -> list[tuple[str, tuple]]:
    """A JobSet converted before records were written: the PodGroups its pods name, read as the record would list
    them, where the stream holds PodGroups of that scheduler (only their agreement with the pods is checked)."""
    out = []
    for api, (where, key) in GANG_REFERENCES.items():
        if not any(o.get("kind") == "PodGroup" and str(o.get("apiVersion", "")).split("/")[0] == api for o in others):
            continue
        naming: dict[str, list[str]] = {}
        for rj, t in _pod_templates(data, others):
            if _pod_meta(t, where).get(key) is not None:
                naming.setdefault(str(_pod_meta(t, where)[key]), []).append(rj)
        out += [(f"PodGroup {ref} ({key} of {', '.join(rjobs)})", (NAME,)) for ref, rjobs in naming.items()]
    return out


def _same_namespace(obj: dict, namespace: str | None) -> bool:
    """None on either side: applied wherever the other is, as far as this stream says."""
    there = _meta(obj).get("namespace")
    return there is None or namespace is None or there == namespace


def _gang_mismatches(data: dict, items: list, others: list) -> list[tuple[str, str]]:
    """(what, fix) for each PodGroup kf2jobset wrote that the pods' reference no longer finds in this stream: the
    PodGroup renamed (a kustomize namePrefix, a hand edit) while the reference was not, or in another namespace
    than the JobSet's (a pod's reference names a PodGroup of its own namespace). Silent where the stream holds
    no such PodGroup (it may live in another file)."""
    out = []
    namespace = _meta(data).get("namespace")
    for what, _ in items:
        gang = _GANG_ITEM.match(what)
        if not gang:
            continue
        written, (key, where, listed) = gang.group("group"), _reference(what)
        api = next((a for a, (_, k) in GANG_REFERENCES.items() if k == key), None)
        groups = [o for o in others if o.get("kind") == "PodGroup" and str(o.get("apiVersion", "")).split("/")[0] == api]
        refs = {_pod_meta(t, where).get(key) for rj, t in _pod_templates(data, others) if rj in listed} - {None}
        for ref in sorted(map(str, refs)):
            same = [g for g in groups if _meta(g).get("name") == ref]
            if any(_same_namespace(g, namespace) for g in same):
                continue
            if same:
                there = _meta(same[0]).get("namespace")
                out.append((f"PodGroup {ref} is in namespace {there}, the {data.get('kind')} in {namespace} (its pods' {key} "
                            "names a PodGroup of their own namespace)",
                            f"move PodGroup {ref} to namespace {namespace} with the {data.get('kind')}"))
                continue
            # renamed with the JobSet: by a kustomize prefix or suffix, or by hand
            renamed = sorted(str(_meta(g).get("name")) for g in groups if _same_namespace(g, namespace) and (
                written in str(_meta(g).get("name")) or _meta(g).get("name") == _meta(data).get("name")))
            if renamed:
                out.append((f"the PodGroup is now {renamed[0]}, but the pods' {key} still names {ref} (kustomize "
                            "renames no reference inside a JobSet)",
                            f"set the pods' {key} to {renamed[0]} (in an overlay, patch it there)"))
    return out


def select(doc: str) -> bool:
    return NAMED_FOR_ANNOTATION in doc or JOBSET_NAME_LABEL in doc or "-mpi-hostfile" in doc or "PodGroup" in doc \
        or "TrainingRuntime" in doc


def renamed_jobsets(text: str, parsed: list | None = None) -> list[Renamed]:
    """Every JobSet of the stream whose name or namespace differs from what its name-bound literals were written
    for (unparsable documents and JobSets without a record are left to the rest of the run)."""
    from .yamlio import first_content_line, parse_documents, position, selected_documents

    docs = selected_documents(parsed, select) if parsed is not None else parse_documents(text, select=select, without_comments=True)
    objects = [d.data for d in docs if d.error is None and isinstance(d.data, dict)]
    out = []
    for doc in docs:
        data = doc.data
        if doc.error is not None or not isinstance(data, dict) or data.get("kind") not in ("JobSet", "TrainJob"):
            continue
        meta = _meta(data)
        ann = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
        recorded = parse_named_for(ann.get(NAMED_FOR_ANNOTATION))
        items = parse_literals(ann.get(NAME_LITERALS_ANNOTATION))
        others = [o for o in objects if o is not data]
        if recorded is None and NAMED_FOR_ANNOTATION not in ann and SOURCE_ANNOTATION in ann:
            recorded, items = _unrecorded(data, others)
            items += _referenced_groups(data, others)
            recorded = {} if recorded is None and items else recorded
        if recorded is None:
            continue
        now = {NAME: meta.get("name") or (f"(generateName {meta['generateName']})" if meta.get("generateName") else None),
               NAMESPACE: meta.get("namespace")}
        changes = tuple((what, was, now[what]) for what, was in recorded.items()
                        if now[what] is not None and now[what] != was)
        if recorded.get(NAMESPACE) not in (None, "default") and now[NAMESPACE] is None:
            changes += ((NAMESPACE, recorded[NAMESPACE], "(none: wherever it is applied)"),)
        gang = _gang_mismatches(data, items, others)
        if changes:
            changed = {what for what, _, _ in changes}
            stale = [(what, deps) for what, deps in items if changed & set(deps)] or items
        else:  # the record matches the object: do the values it lists still name what it records?
            stale = _unlike_record(data, recorded, items, others)
            if not stale and not gang:
                continue
        field = changes[0][0] if changes else "annotations" if stale else NAMESPACE if " is in namespace " in gang[0][0] else "name"
        at = position(data, ("metadata", field), doc.start_line)[0]
        out.append(Renamed(at or doc.start_line + first_content_line(doc.text) + 1,
                           f"{data.get('kind')} {now[NAME] or '(unnamed)'} ({data.get('apiVersion')})", changes,
                           tuple(what for what, _ in stale), ann.get(SOURCE_ANNOTATION),
                           _renamed_companions(stale, recorded.get(NAME), others) if changes else (),
                           "" if changes else ann.get(NAMED_FOR_ANNOTATION, ""), tuple(gang)))
    return out
