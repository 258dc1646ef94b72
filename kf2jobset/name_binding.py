"""Values a converted JobSet holds with its own name or namespace spelled out, and the JobSets edited away from them.

Most of what kf2jobset writes reads the JobSet's name and namespace at run time (the pod's own
`jobset-name` label, `metadata.namespace`: `$(KF2JOBSET_JOBSET_NAME)`, `$(KF2JOBSET_NAMESPACE)`), so a
renamed or moved JobSet keeps working. A few values cannot: the MPI hostfile ConfigMap (`--mpi-hostfile
configmap`, the default for a named job: its hostnames, the ConfigMap's own name), the dnsConfig search
domain of Intel MPI/MPICH pods (`<subdomain>.<namespace>.svc.<domain>`: dnsConfig takes no variables) and
JS066's companion Services (their selector names the JobSet). Where such a value is written, the JobSet
records what it was written for (`kf2jobset.dev/named-for: name=N[,namespace=NS]`) and which values
depend on it (`kf2jobset.dev/name-literals`). `convert --check` lists a JobSet whose name or namespace no
longer matches its record (`renamed`); every other mode warns in the same words (`Renamed.listing`).

A JobSet converted before records were written is read from the hostfile ConfigMap it mounts, where that is in
the same stream (its jobset-name label and hostnames say what it was written for).

In one stream (a file, or `kustomize build` piped to `convert --check -`) a companion kf2jobset wrote may
also be renamed by kustomize's namePrefix/nameSuffix while the JobSet's reference to it is not (kustomize
knows no name reference inside a JobSet): that is said on the JobSet's line.

Light to import (the hook reads every staged file): the YAML reader is loaded only for a file that holds
a record.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from .categories import RENAMED
from .staleness import SOURCE_ANNOTATION

NAMED_FOR_ANNOTATION = "kf2jobset.dev/named-for"
NAME_LITERALS_ANNOTATION = "kf2jobset.dev/name-literals"
NAME, NAMESPACE = "name", "namespace"
JOBSET_NAME_LABEL = "jobset.sigs.k8s.io/jobset-name"
MANAGED_BY = ("app.kubernetes.io/managed-by", "kf2jobset")
_ITEM = re.compile(r"^(?P<what>.+?) \[(?P<deps>[a-z, ]+)\]$")


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


def record(jobset: dict, companions: list, name: str | None, namespace: str | None, subdomain: str | None) -> None:
    """Record on the JobSet (or a TrainJob, whose JobSet Trainer names after it) the name and namespace its
    name-bound literals were written for, where it has any.
    `namespace`: the manifest's (None: none, and a literal that must name one says `default`, MPI014)."""
    if not name:
        return  # no name known: kf2jobset wrote nothing name-bound (generateName: every address follows the label)
    items = (_hostfile_configmaps(companions, name, namespace)
             + _dns_searches(jobset, name, namespace or "default", subdomain)
             + _selecting_services(companions, name))
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

    def listing(self, path: str) -> str:
        """`FILE:LINE: KIND NAME (APIVERSION): renamed: ...`, as --check lists it and the other modes warn."""
        return f"{path}:{self.line}: {self.label}: {RENAMED}: {self.message()}"

    def message(self) -> str:
        if not self.changes:
            return (f"{NAMED_FOR_ANNOTATION} records {self.record}, but {' and '.join(self.stale)} name another (was the "
                    f"record edited without them?): {'; or '.join(self._fixes())}")
        moved = ", ".join((f"{what} " if len(self.changes) > 1 else "") + f"{was} -> {now}" for what, was, now in self.changes)
        text = (f"{' and '.join(what for what, _, _ in self.changes)} changed since conversion ({moved}), "
                f"but {' and '.join(self.stale)} still name the old {'one' if len(self.changes) == 1 else 'ones'}")
        if self.companions:
            said = [f"{kind} {was} to {now}, but not the JobSet's volume naming it (kustomize has no name reference into "
                    "a JobSet)" if kind == "ConfigMap" else
                    f"{kind} {was} to {now}, so the v1 name {was} your ConfigMap uses resolves to nothing"
                    for kind, was, now in self.companions]
            text += f"; and in this stream kustomize's namePrefix/nameSuffix renamed {'; '.join(said)}"
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
        if self.companions:  # a kustomize overlay: converting the base for one overlay's names breaks the others
            fixes = [f"convert {job} again with {' and '.join(follows)}"] if follows else []
            return fixes + ["patch the listed values in the overlay"]
        again = ([f"with --name {new[NAME]}"] if not str(new.get(NAME, "(")).startswith("(") else []) + \
            ([f"in namespace {new[NAMESPACE]}"] if not str(new.get(NAMESPACE, "(")).startswith("(") else [])
        fixes = [f"convert {job} again" + (f" {' and '.join(again)}" if again else "")]
        fixes += [f"with {option}" for option in follows]
        if any(what.startswith("Service") for what in self.stale):
            fixes.append("write the JobSet hostnames where your ConfigMap names v1's, and drop the Services")
        return fixes


def may_hold_record(text: str) -> bool:
    """A record, or (written before records were) a hostfile ConfigMap kf2jobset wrote beside its JobSet."""
    return NAMED_FOR_ANNOTATION in text or (f"{JOBSET_NAME_LABEL}:" in text and "-mpi-hostfile" in text)


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
                sub_ok = lambda s: not (NAME in deps and name) or s.startswith(f"{name}.")  # noqa: E731
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
    return out


def select(doc: str) -> bool:
    return NAMED_FOR_ANNOTATION in doc or JOBSET_NAME_LABEL in doc or "-mpi-hostfile" in doc


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
        if recorded is None:
            continue
        now = {NAME: meta.get("name") or (f"(generateName {meta['generateName']})" if meta.get("generateName") else None),
               NAMESPACE: meta.get("namespace")}
        changes = tuple((what, was, now[what]) for what, was in recorded.items()
                        if now[what] is not None and now[what] != was)
        if recorded.get(NAMESPACE) not in (None, "default") and now[NAMESPACE] is None:
            changes += ((NAMESPACE, recorded[NAMESPACE], "(none: wherever it is applied)"),)
        if changes:
            changed = {what for what, _, _ in changes}
            stale = [(what, deps) for what, deps in items if changed & set(deps)] or items
        else:  # the record matches the object: do the values it lists still name what it records?
            stale = _unlike_record(data, recorded, items, others)
            if not stale:
                continue
        at = position(data, ("metadata", changes[0][0] if changes else "annotations"), doc.start_line)[0]
        out.append(Renamed(at or doc.start_line + first_content_line(doc.text) + 1,
                           f"{data.get('kind')} {now[NAME] or '(unnamed)'} ({data.get('apiVersion')})", changes,
                           tuple(what for what, _ in stale), ann.get(SOURCE_ANNOTATION),
                           _renamed_companions(stale, recorded.get(NAME), others) if changes else (),
                           "" if changes else ann.get(NAMED_FOR_ANNOTATION, "")))
    return out
