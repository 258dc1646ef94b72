"""Pod specs the real API server accepts must not be refused by kf2jobset's pod rules (podrules.py).

Each was refused once and then seen accepted by the real kube-apiserver v1.36.3 of tests/e2e (on the
Training Operator's pods, and, where noted, on a Job template and a JobSet's pods);
tests/e2e/test_refusals.py holds the rules that do refuse to the same server.
"""
from __future__ import annotations

import pytest

from kf2jobset.k8s.podrules import check_pod_template

ACCEPTED = {
    # any string: the server does not validate schedulerName
    "scheduler name with '_'": {"schedulerName": "gpu_binpack", "containers": [{"name": "c", "image": "x"}]},
    # the pod gets 1 s (also on a Job template and a JobSet's pods)
    "negative terminationGracePeriodSeconds": {"terminationGracePeriodSeconds": -5, "containers": [{"name": "c", "image": "x"}]},
    # port names are unique per container, not per pod
    "one port name in two containers": {"containers": [
        {"name": "c", "image": "x", "ports": [{"name": "metrics", "containerPort": 9090}]},
        {"name": "d", "image": "x", "ports": [{"name": "metrics", "containerPort": 9091}]}]},
    "one port name in an init container and a container": {
        "initContainers": [{"name": "i", "image": "x", "ports": [{"name": "metrics", "containerPort": 9090}]}],
        "containers": [{"name": "c", "image": "x", "ports": [{"name": "metrics", "containerPort": 9091}]}]},
}


@pytest.mark.parametrize("spec", ACCEPTED.values(), ids=ACCEPTED.keys())
def test_what_the_api_server_accepts_is_not_refused(spec):
    assert check_pod_template({"spec": spec}, ("template",)) == []


def test_a_port_name_twice_in_one_container_is_refused():
    spec = {"containers": [{"name": "c", "image": "x", "ports": [{"name": "m", "containerPort": 1}, {"name": "m", "containerPort": 2}]}]}
    assert [p.rule for p in check_pod_template({"spec": spec}, ("template",))] == ["port-name"]
