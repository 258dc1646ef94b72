"""The compiled schema checks (kf2jobset.k8s.schemacheck) must agree with jsonschema on validity: an
instance they accept never reaches jsonschema, so a check that is more lenient would hide errors.
Checked over every golden JobSet and fixture job, and over random mutations of them."""
from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kf2jobset.k8s import schemas
from kf2jobset.core.convert import convert_job
from kf2jobset.options import ConvertOptions
from kf2jobset.k8s.schemacheck import Unsure
from kf2jobset.text.yamlio import parse_documents, to_plain

from .conftest import FIXTURES
from .strategies import ANY_JOB


def _fast(instance, name):
    try:
        return schemas._fast_check(name)(instance)
    except Unsure:
        return None


def _agrees(instance, name):
    slow = schemas._validate_slowly(instance, name)
    fast = _fast(instance, name)
    assert fast is None or fast == (not slow), (name, fast, slow)
    assert schemas.validate(instance, name) == slow


def _documents(pattern):
    out = []
    for path in sorted(FIXTURES.glob(pattern)):
        for doc in parse_documents(path.read_text()):
            if isinstance(doc.data, dict):
                out.append(doc.data)
    return out


def _schema_of(doc):
    return schemas.schema_name_for(doc.get("apiVersion"), doc.get("kind"))


GOLDEN = [d for d in _documents("*/*/expected.yaml") if _schema_of(d)]
INPUTS = [d for d in _documents("*/*/input.yaml") if _schema_of(d)]


def test_every_schema_compiles():
    for name in schemas.schema_names():
        assert schemas._fast_check(name) is not None, name


@pytest.mark.parametrize("doc", GOLDEN + INPUTS, ids=lambda d: f"{d.get('kind')}/{(d.get('metadata') or {}).get('name')}")
def test_fixtures_agree(doc):
    _agrees(doc, _schema_of(doc))
    _agrees(to_plain(doc), _schema_of(doc))


def _paths(node, path=()):
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, path + (i,))


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 70000), st.sampled_from([1.0, 2.5, -1.5]),
                   st.sampled_from(["", "x", "OnFailure", "Never", "Indexed", "TCP", "jobset.x-k8s.io/v1alpha2", "10Gi"]),
                   st.just([]), st.just({}), st.just({"name": "x"}), st.just([{"name": "x"}, {"name": "x"}]))


@st.composite
def mutated(draw):
    docs = GOLDEN + INPUTS
    doc = copy.deepcopy(to_plain(docs[draw(st.integers(0, len(docs) - 1))]))
    name = _schema_of(doc)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        path = paths[draw(st.integers(0, len(paths) - 1))]
        parent = doc
        for part in path[:-1]:
            parent = parent[part]
        action = draw(st.sampled_from(["set", "delete", "extra", "duplicate"]))
        if action == "set":
            parent[path[-1]] = copy.deepcopy(draw(VALUES))
        elif action == "delete":
            del parent[path[-1]]
        elif action == "extra" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["unknownField", "name", "image", "replicas", "template"]))] = copy.deepcopy(draw(VALUES))
        elif action == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[path[-1]]))
    return doc, name


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutations_agree(case):
    doc, name = case
    _agrees(doc, name)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ANY_JOB)
def test_generated_jobs_and_their_jobsets_agree(job):
    _agrees(job, _schema_of(job))
    conv = convert_job(job, ConvertOptions(accept_mpi_ssh=True, mpi_hostfile="generated"))
    _agrees(conv.jobset, "jobset")
