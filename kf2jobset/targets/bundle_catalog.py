"""kf2jobset's compat bundle: the ClusterTrainingRuntimes of mappings/trainer/bundle.yaml, each derived
from its canonical v1 job by kf2jobset/targets/bundle.py, so a converted job runs on one exactly when
the runtime derived from it is that one. `kf2jobset runtimes` prints them (`runtime_objects`). Pure."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from ..emit import emit
from ..mappings import all_mappings
from ..options import ConvertOptions
from ..parse import parse_job
from ..data_dirs import data_dir
from ..frameworks import profile

API_VERSION = "trainer.kubeflow.org/v1alpha1"
GROUP = "trainer.kubeflow.org"
KIND = "ClusterTrainingRuntime"
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"
CREATED_BY = ("app.kubernetes.io/created-by", "kf2jobset")
BUNDLE_LABEL = "kf2jobset.dev/bundle"
GANG_LABEL = "kf2jobset.dev/bundle-gang"  # the flavour (bundle_gang.py)
# Trainer's own runtimes (installed with it), for the list of what a tree needs
BUILT_IN = ("torch-distributed", "jax-distributed", "xgboost-distributed", "deepspeed-distributed", "mlx-distributed")


@dataclass(frozen=True)
class BundleRuntime:
    name: str
    framework: str
    why: str
    spec_json: str  # the runtime's spec (mlPolicy, template), canonical JSON: what a job's must equal

    @property
    def spec(self) -> dict:
        return json.loads(self.spec_json)

    def object(self, gang=None) -> dict:
        """The runtime as the platform installs it; `gang` (bundle_gang.Gang): in that flavour."""
        from .bundle_gang import flavoured

        labels = {FRAMEWORK_LABEL: self.framework, CREATED_BY[0]: CREATED_BY[1], BUNDLE_LABEL: "v1"}
        if gang is not None:
            labels[GANG_LABEL] = gang.flavour
        return {"apiVersion": API_VERSION, "kind": KIND,
                "metadata": {"name": self.name, "labels": labels, "annotations": {"kf2jobset.dev/shape": self.why}},
                "spec": flavoured(self.spec, gang)}


def canonical(spec: dict) -> str:
    return json.dumps(spec, sort_keys=True, separators=(",", ":"))


def _job(entry: dict):
    """The canonical v1 job of a bundle entry, and its kind's mapping."""
    desc = entry["job"]
    mapping = next(m for m in all_mappings() if m.kind == desc["kind"]
                   and desc.get("apiVersion", m.api_versions[0]) in m.api_versions)
    specs = {}
    for rtype, n in desc["replicas"].items():
        container = {"name": mapping.default_container or rtype.lower(), "image": "registry.example.com/image:1"}
        if (desc.get("command") or {}).get(rtype):
            container["command"] = list(desc["command"][rtype])
        spec = {"replicas": n, "template": {"spec": {"containers": [container]}}}
        if (desc.get("restartPolicy") or {}).get(rtype):
            spec["restartPolicy"] = desc["restartPolicy"][rtype]
        specs[rtype] = spec
    return {"apiVersion": mapping.api_versions[0], "kind": mapping.kind, "metadata": {"name": "bundle"},
            "spec": {mapping.replica_specs_field: specs}}, mapping


@lru_cache(maxsize=None)
def catalog() -> tuple[BundleRuntime, ...]:
    from ruamel.yaml import YAML

    from .bundle import derive

    data = YAML(typ="safe", pure=True).load((data_dir("mappings") / "trainer" / "bundle.yaml").read_text(encoding="utf-8"))
    out = []
    options = ConvertOptions(target="trainjob", accept_mpi_ssh=True)  # an MPIJob v1 converts only so
    for entry in data["runtimes"]:
        job = parse_job(*_job(entry))
        derived = derive(emit(job, options), options)
        out.append(BundleRuntime(entry["name"], profile(job.mapping.profile).runtime_framework, entry["why"],
                                 canonical(derived.runtime_spec)))
    names = [r.name for r in out]
    if len(set(names)) != len(names) or len({r.spec_json for r in out}) != len(out):
        raise ValueError("mappings/trainer/bundle.yaml: two runtimes share a name or a shape")
    return tuple(out)


def find(spec: dict) -> BundleRuntime | None:
    text = canonical(spec)
    return next((r for r in catalog() if r.spec_json == text), None)


def runtime_objects(gang=None) -> list[dict]:
    """Every runtime of the bundle, as the platform installs them (in `gang`'s flavour)."""
    return [r.object(gang) for r in catalog()]


PLAIN_INSTALL = "kf2jobset runtimes | kubectl apply -f -"


def header(install: str = PLAIN_INSTALL) -> str:
    """The stream's opening comment; ``install`` is the command that prints this very stream (its flavour)."""
    return ("# kf2jobset's compat bundle of ClusterTrainingRuntimes for Kubeflow Trainer v2.3 (kf2jobset runtimes):\n"
            "# what TrainJobs converted with --target trainjob run on where no Trainer built-in runtime keeps the\n"
            f"# v1 contract. Review, then install once: {install}\n")


def _chosen(names) -> list[BundleRuntime]:
    known = {r.name: r for r in catalog()}
    for n in names:
        if n not in known:
            raise KeyError(n)
    return [r for r in catalog() if not names or r.name in names]


def bundle_stream(names=(), gang=None) -> str:
    """The runtimes as one YAML stream (all of them, or those named; in `gang`'s flavour)."""
    from ..yamlio import dump_documents

    top = header() if gang is None else header(gang.command) + (
        f"# Flavour {gang.flavour}: the same runtimes, for a platform whose pods are gang-scheduled by "
        f"{gang.scheduler_name}; install one flavour only.\n")
    return top + dump_documents([r.object(gang) for r in _chosen(names)])


def bundle_listing(names=()) -> str:
    rows = [(r.name, r.framework, r.why) for r in _chosen(names)]
    width = max(len(n) for n, _, _ in rows)
    return "".join(f"{n.ljust(width)}  {f.ljust(10)}  {w}\n" for n, f, w in rows)


def describe(name: str, gang=None) -> str:
    """How a ClusterTrainingRuntime a TrainJob names gets installed: Trainer's, the bundle's (in `gang`'s
    flavour), or unknown."""
    if name in BUILT_IN:
        return "built in (installed with Kubeflow Trainer)"
    if any(r.name == name for r in catalog()):
        if gang is not None:
            return f"kf2jobset bundle, {gang.flavour} flavour ({gang.command})"
        return "kf2jobset bundle (kf2jobset runtimes | kubectl apply -f -)"
    return "not built in"
