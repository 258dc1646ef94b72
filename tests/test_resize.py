"""`kf2jobset resize` on every converted fixture whose JobSet holds size-bound values: resized up and down, the
result equals a fresh conversion of its v1 job at the new size (as data); a size the v1 job could not have had is
refused as the converter refuses it; user edits made before the resize stay; `--check` passes on the result."""
from __future__ import annotations

import copy

import pytest

from kf2jobset.errors import Kf2JobSetError, UnsupportedError
from kf2jobset.resize import ResizeRequest, resize
from kf2jobset.resize.delta import changes, spell
from kf2jobset.checks.staleness import SOURCE_ANNOTATION, resized_jobsets
from kf2jobset.text.yamlio import dump_documents

from .resize_cases import SIZED_CASES, converted, fresh, matching, sizes_of

# The new size changes the layout the conversion wrote (a replicatedJob, an env variable or a record appears or
# goes away): resize refuses and says to convert again. (case, v1 type, new size) -> what changes.
LAYOUT_CHANGES = {
    "single-replica": "TF_CONFIG is set only for more than one replica",
    "all-workers": "TF_CONFIG is set only for more than one replica",
    "worker-only": "TF_CONFIG is set only for more than one replica",
    "env-override": "TF_CONFIG is set only for more than one replica",
    "exitcode": "TF_CONFIG is set only for more than one replica",
    "master-worker": "Paddle's first type gets a one-pod replicatedJob of its own past one pod",
    "scheduler-plugins-min-resources": "Paddle's first type gets a one-pod replicatedJob of its own past one pod",
    "scheduler-plugins-mpijob": "the gang drops the start order only for some sizes (JS092)",
    "single-worker": "MXNet's lone-worker success rule holds for one worker only",
}
# Values the user wrote in the v1 job that convert rewrites per size and resize keeps as written: addresses of v1
# pods in command, args and env (JS065) and the Services that serve those left (JS066).
USER_TEXT_NAMES_V1_PODS = {"ps-hosts-args", "user-hostfile-fqdn", "user-hostfile-configmap"}
# Other documents of the file whose selectors convert rewrote to a pod's job-global-index, which moves with the
# sizes of the replicatedJobs listed before it; resize leaves other documents alone.
PEER_SELECTORS = {"selecting-objects": "spec.selector.jobset.sigs.k8s.io/job-global-index"}
USER_TEXT_PATHS = ("metadata.annotations.kf2jobset.dev/named-for", "metadata.annotations.kf2jobset.dev/name-literals",
                   "metadata.annotations.kf2jobset.dev/replicated-jobs", ".command[", ".args[", ".env[KF2JOBSET_")


def _cases():
    out = []
    for case in SIZED_CASES:
        for rtype, count in sizes_of(case).items():
            for new in (count + 1, count - 1):
                if new >= 1:
                    out.append(pytest.param(case, rtype, new, id=f"{case.parent.name}/{case.name}-{rtype}-{count}to{new}"))
    return out


def _applied(stream: list, result) -> list:
    out = copy.deepcopy(stream)
    for e in result.edits:
        node = out[e.document]
        for part in e.path[:-1]:
            node = node[part]
        node[e.path[-1]] = e.value
    return out


@pytest.mark.parametrize("case, rtype, new", _cases())
def test_resized_equals_a_fresh_conversion_at_the_new_size(case, rtype, new):
    stream = converted(case)
    index = next(i for i, d in enumerate(stream) if isinstance(d, dict) and SOURCE_ANNOTATION in
                 ((d.get("metadata") or {}).get("annotations") or {}))
    sizes = {**sizes_of(case), rtype: new}
    try:
        result = resize(stream, index, ResizeRequest(((rtype, new),)))
    except UnsupportedError as err:
        said = str(err)
        if "could not have had" in said:
            with pytest.raises(Kf2JobSetError):  # the converter refuses the v1 job at that size too
                fresh(case, sizes)
            return
        if "no such replica type" in said:  # a type the operator ignored: the JobSet has no pods of it
            assert rtype.lower() not in [r["name"] for r in stream[index]["spec"]["replicatedJobs"]], said
            return
        if "changes the layout" in said:
            assert case.name in LAYOUT_CHANGES, said
            return
        assert "a gang scheduler reads" in said and "yunikorn" in said, said
        return
    got = _applied(stream, result)
    want = fresh(case, sizes)
    jobset = next(d for d in want if isinstance(d, dict) and d.get("kind") == "JobSet")
    jobset["metadata"]["annotations"][SOURCE_ANNOTATION] = got[index]["metadata"]["annotations"][SOURCE_ANNOTATION]
    pairs = zip(matching(got, want), want, strict=True)
    differ = [f"{d.get('kind')} {spell(c.path)}: {str(c.old)[:120]} != {str(c.new)[:120]}"
              for g, d in pairs for c in changes(g, d)]
    if case.name in USER_TEXT_NAMES_V1_PODS:  # only the JobSet's user text, its records of it and its Services
        differ = [d for d in differ if not d.startswith("Service ")
                  and not (d.startswith("JobSet ") and any(p in d.split(": ")[0] for p in USER_TEXT_PATHS))]
    if case.name in PEER_SELECTORS:
        differ = [d for d in differ if PEER_SELECTORS[case.name] not in d.split(": ")[0]]
    assert differ == []
    assert resized_jobsets(dump_documents(got)) == []  # --check passes on the result
