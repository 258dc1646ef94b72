"""The Kubeflow v1 job kinds the plugin reads from a cluster, and how users name them on the command line."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError

GROUP = "kubeflow.org"


@dataclass(frozen=True)
class LiveKind:
    kind: str
    plural: str
    versions: tuple[str, ...]  # versions kf2jobset converts, in order of preference when several are served
    group: str = GROUP

    @property
    def resource(self) -> str:
        """`tfjobs.kubeflow.org`: the CRD name, as kubectl and RBAC messages spell it."""
        return f"{self.plural}.{self.group}"


def _kinds() -> tuple[LiveKind, ...]:
    """From mappings/*.yaml: every kind with the kubeflow.org versions we convert, plural = lower-case
    kind + s (as the Kubeflow CRDs name them). Several versions: the newest first — MPIJob's v1
    (training-operator) and v2beta1 (mpi-operator) share one CRD name, so a cluster serves one; should
    a CRD serve both, v2beta1 is the newer operator's."""
    from ..mappings import JOB_KINDS, all_mappings

    out = []
    for kind in JOB_KINDS:
        versions = [v.split("/", 1)[1] for m in all_mappings() if m.kind == kind for v in m.api_versions
                    if v.startswith(GROUP + "/")]
        out.append(LiveKind(kind, kind.lower() + "s", tuple(sorted(set(versions), reverse=True))))
    return tuple(out)


KINDS: tuple[LiveKind, ...] = _kinds()


def _aliases() -> dict[str, LiveKind]:
    out = {}
    for k in KINDS:
        singular = k.kind.lower()
        for name in (singular, k.plural, f"{singular}.{k.group}", k.resource):
            out[name] = k
        for v in k.versions:  # kubectl's fully qualified form: pytorchjobs.v1.kubeflow.org
            out[f"{k.plural}.{v}.{k.group}"] = k
            out[f"{singular}.{v}.{k.group}"] = k
    return out


_BY_NAME = _aliases()


def resolve_kind(text: str) -> LiveKind:
    """`tfjob`, `TFJob`, `tfjobs`, `tfjobs.kubeflow.org` … -> LiveKind; UsageError otherwise."""
    found = _BY_NAME.get(text.strip().lower())
    if found is None:
        raise UsageError(
            f"unknown kind {text!r}: the plugin reads "
            + ", ".join(k.kind for k in KINDS)
            + " (singular, plural or plural.kubeflow.org, any case)"
        )
    return found


def split_kind_name(kind: str | None, name: str | None) -> tuple[str | None, str | None]:
    """kubectl's `KIND/NAME` form as one argument: (`tfjob/mnist`, None) -> (`tfjob`, `mnist`)."""
    if kind and "/" in kind:
        if name:
            raise UsageError(f"give either KIND/NAME or KIND NAME, not {kind!r} and {name!r}")
        kind, _, name = kind.partition("/")
        if not kind or not name:
            raise UsageError("KIND/NAME needs both a kind and a name")
    return kind, name
