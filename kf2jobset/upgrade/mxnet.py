"""MXJob kubeflow.org/v1beta1 read as the kubeflow.org/v1 MXJob it meant. Facts, from
kubeflow/mxnet-operator v0.1.0-v1.1.0 (`pkg/apis/mxnet/v1beta1/types.go`, `defaults.go`,
`pkg/controller.v1beta1/mxnet`; every release to v1.1.0 ships the v1beta1 controller beside the
v1 one):

- the spec is v1's `jobMode` and `mxReplicaSpecs` with the run fields `cleanPodPolicy` (default
  All) and `ttlSecondsAfterFinished` at its top, plus `successPolicy` ("" or AllWorkers);
- a replica spec is v1's (`replicas`, `template`, `restartPolicy`, default Never) plus `label`, the
  MXTune tuner-server key, which v1 (training-operator's mxnet controller) reads from the template's
  `tuner-server-key` annotation instead;
- the env is v1's (MX_CONFIG with the label in `labels`, DMLC_*), from the same default container
  `mxnet` and port `mxjob-port` 9091; pods carried group_name, mxnet_job_name, mxnet-replica-type
  and mxnet-replica-index labels.
"""
from __future__ import annotations

from .moves import Upgrade, as_mapping, contract, known_fields, map_specs, old_default, refuse, run_policy_from_top

TOP_RUN_FIELDS = ("cleanPodPolicy", "ttlSecondsAfterFinished")
TUNER_SERVER_KEY = "tuner-server-key"  # training-operator v1.8.1 pkg/controller.v1/mxnet: mxJobTunerServerKey


def mx_v1beta1(up: Upgrade, spec: dict, mapping, source) -> None:
    known_fields(up, spec, ("jobMode", "mxReplicaSpecs", "runPolicy", "successPolicy") + TOP_RUN_FIELDS,
                 "MXJob v1beta1")
    policy = spec.pop("successPolicy", None)
    if policy == "AllWorkers":
        raise refuse(("spec", "successPolicy"), "successPolicy AllWorkers ended an MXJob v1beta1 when every Worker "
                     "succeeded (not the Scheduler); v1 has no successPolicy, and its rule is the Scheduler's success",
                     "remove successPolicy to accept v1's rule, or convert this job by hand")
    if policy not in (None, ""):
        raise refuse(("spec", "successPolicy"), f"successPolicy {policy!r} is not one of '', AllWorkers",
                     "the v1beta1 operator knew only those two")
    if policy is not None:
        up.note("UP012", "dropped", "spec.successPolicy '' (the default) is not a field of v1: its rule is v1's",
                source=("spec", "successPolicy"))
    specs = map_specs(up, spec, mapping.replica_specs_field)
    for rtype, rspec in specs.items():
        _label(up, rtype, rspec, mapping.replica_specs_field)
    run_policy_from_top(up, spec, TOP_RUN_FIELDS)
    old_default(up, spec, "cleanPodPolicy", "All", "the default of MXJob v1beta1 (the mxnet-operator deleted every pod "
                "of a finished job; v1 defaults to None)")
    contract(up, mapping, source)


def _label(up: Upgrade, rtype: str, rspec: dict, field: str) -> None:
    where = ("spec", field, rtype)
    label = rspec.pop("label", None)
    if label is None:
        return
    template = as_mapping(rspec.get("template"), where + ("template",))
    rspec["template"] = template
    meta = as_mapping(template.get("metadata"), where + ("template", "metadata"))
    template["metadata"] = meta
    annotations = as_mapping(meta.get("annotations"), where + ("template", "metadata", "annotations"))
    meta["annotations"] = annotations
    before = annotations.get(TUNER_SERVER_KEY)
    annotations[TUNER_SERVER_KEY] = str(label)
    up.move(where + ("template", "metadata", "annotations", TUNER_SERVER_KEY), where + ("label",))
    up.note("UP035", "rewritten", f"{rtype}: label {label!r} becomes the template's {TUNER_SERVER_KEY} annotation, where v1 "
            "reads the tuner-server key (MX_CONFIG labels)" + (f"; it replaces the annotation's {before!r}, which the "
                                                               "v1beta1 operator never read" if before not in (None, label) else ""),
            source=where + ("label",), target=where + ("template", "metadata", "annotations", TUNER_SERVER_KEY))
