"""Size as a parameter: which injected values follow a replica edit, and what records the rest.

Under v1 the operator computed every size-derived value (WORLD_SIZE, TF_CONFIG's host lists, the MPI
hostfile, ...) from the replica counts when it made the pods, so editing `replicas` was enough. A
converted JobSet is edited by hand from then on. A value that is the job's pod count is read from the
pod's `jobset.sigs.k8s.io/global-replicas` label (the frameworks' `Side.size_env`), which the JobSet
controller computes from the replicatedJobs (v0.7+) and which never changes under a running pod
(replicatedJobs are immutable). Values no label can carry (host lists, pods x processes) stay literal;
the JobSet then records the replica counts they were written for and the names of those values (the
record's format and its reader: kf2jobset/checks/staleness.py), and `kf2jobset convert --check` fails when the
values, read back (kf2jobset/checks/size_values.py), no longer match the replicas.
"""
from __future__ import annotations

from .. import claims
from ..frameworks.base import LABEL_GLOBAL_REPLICAS
from .layout_guard import LAYOUT_ANNOTATION, layout_record, reads_layout
from ..notes import Note
from .staleness import SIZE_LITERALS_ANNOTATION, SIZED_FOR_ANNOTATION, sized_for

FOLLOWS_PATH = f"metadata.labels['{LABEL_GLOBAL_REPLICAS}']"


def size_contract(job, ctx, profile_literals: list[str], jobset: dict) -> None:
    """Note which values follow the size (SZ001) and which are literals (SZ002); record the sizes of the
    latter on the JobSet so that `--check` can tell when an edit left them stale."""
    follows = [name for name, literal in ctx.sized.items() if literal is None]
    files = [path for path, _ in ctx.follows_files]
    literals = ([name for name, literal in ctx.sized.items() if literal is not None]
                + [path for path in profile_literals if path not in files])
    pods = claims.pod_path("*") + ".spec.containers[*].env"
    if follows:
        ctx.note(Note(
            "SZ001", "rewritten",
            f"{', '.join(follows)} {'follows' if len(follows) == 1 else 'follow'} the replica count: "
            f"each pod reads the job's pod count from its "
            f"{LABEL_GLOBAL_REPLICAS} label, which the JobSet controller computes from the replicatedJobs, as "
            "the operator computed it from the replicas; a replica edit needs no other change",
            target_path="env",  # explains no difference: the values are v1's, pod by pod
            claims=tuple(claims.equals(f"{pods}[{n}].valueFrom.fieldRef.fieldPath", FOLLOWS_PATH) for n in follows),
        ))
    if files:
        ctx.note(Note(
            "SZ001", "rewritten",
            f"{', '.join(files)} follow the replica count: the launcher's init container writes them at start for the "
            f"job's pod count in its {LABEL_GLOBAL_REPLICAS} label less the launcher, which the JobSet controller "
            "computes from the replicatedJobs, as the operator wrote them from the replicas; a replica edit needs no "
            "other change",
            target_path="initContainers",  # explains no difference: the files are v1's
            claims=tuple(dict.fromkeys(claim for _, claim in ctx.follows_files)),
        ))
    # the replicatedJobs, in order, that the size label counts, the ranks follow, the addresses name: --check tells
    # one added, removed or moved under them (layout_guard)
    if follows or files or reads_layout(jobset):
        jobset["metadata"].setdefault("annotations", {})[LAYOUT_ANNOTATION] = layout_record(jobset)
    if not literals:
        return
    annotations = jobset["metadata"].setdefault("annotations", {})
    annotations[SIZED_FOR_ANNOTATION] = sized_for(jobset)
    annotations[SIZE_LITERALS_ANNOTATION] = ", ".join(literals)
    ctx.note(Note(
        "SZ002", "approximated",
        f"{', '.join(literals)} are written for these replica counts ({annotations[SIZED_FOR_ANNOTATION]}); the "
        "operator recomputed them when the replicas changed, the JobSet cannot. The JobSet records the counts in "
        f"{SIZED_FOR_ANNOTATION}, and `kf2jobset convert --check` fails on a JobSet whose values no longer match its replicas",
        target_path=f"metadata.annotations[{SIZED_FOR_ANNOTATION}]",
        action="to resize, convert the v1 job again at the new size (after --in-place it is in git history before the "
               "conversion), or edit every listed value to it",
        claims=(claims.equals(f"metadata.annotations[{SIZED_FOR_ANNOTATION}]", annotations[SIZED_FOR_ANNOTATION]),),
    ))
