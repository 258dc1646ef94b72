"""The resize tests' cases and their reference: every converted fixture whose JobSet records size-bound values
(`kf2jobset.dev/sized-for`), and the fresh conversion of its v1 job at another size, which a resize must equal."""
from __future__ import annotations

import copy
from pathlib import Path

from kf2jobset.core.convert import is_job
from kf2jobset.mappings import convertible_mapping
from kf2jobset.files.pipeline import convert_text
from kf2jobset.resize import resizable
from kf2jobset.text.yamlio import dump_documents, parse_documents, to_plain

from .fixture_cases import CONVERTED_CASES, fixture_args, fixture_options

# fixtures that write a JobSet with a size record, converted for the JobSet target, one job in the file
SIZED_CASES = sorted(c for c in CONVERTED_CASES if (c / "expected.yaml").exists()
                     and "kf2jobset.dev/sized-for" in (c / "expected.yaml").read_text()
                     and "--target" not in " ".join(fixture_args(c)).replace("--target=jobset", "")
                     and sum(1 for d in parse_documents((c / "input.yaml").read_text()) if is_job(to_plain(d.data))) == 1
                     and sum(1 for d in parse_documents((c / "expected.yaml").read_text())
                             if isinstance(d.data, dict) and resizable(to_plain(d.data))) == 1)


def converted(case: Path) -> list:
    return [to_plain(d.data) for d in parse_documents((case / "expected.yaml").read_text())]


def v1_job(case: Path) -> tuple[dict, object]:
    """The fixture's job as kubeflow.org/v1 (an older apiVersion read as the v1 job it meant) and its mapping."""
    doc = next(to_plain(d.data) for d in parse_documents((case / "input.yaml").read_text()) if is_job(to_plain(d.data)))
    mapping = convertible_mapping(doc["apiVersion"], doc["kind"])
    if doc["apiVersion"] in mapping.upgrade_from:
        from kf2jobset.upgrade import upgrade

        doc = to_plain(upgrade(copy.deepcopy(doc), mapping).doc)
    return doc, mapping


def sizes_of(case: Path) -> dict:
    job, mapping = v1_job(case)
    return {t: s.get("replicas", 1) for t, s in job["spec"][mapping.replica_specs_field].items()}


def fresh(case: Path, sizes: dict) -> list:
    """The fixture's whole file converted with its job at `sizes` (v1 type -> replicas), as data."""
    job, mapping = v1_job(case)
    for rtype, count in sizes.items():
        job["spec"][mapping.replica_specs_field][rtype]["replicas"] = count
    docs = [to_plain(d.data) for d in parse_documents((case / "input.yaml").read_text())]
    docs = [job if is_job(d) else d for d in docs]
    result = convert_text(dump_documents(docs), str(case / "input.yaml"), fixture_options(case))
    if result.errors:
        raise result.errors[0]
    return [to_plain(d.data) for d in parse_documents(result.new_text or result.text)]


def matching(objects: list, like: list) -> list:
    """`objects` in the order of `like`, paired by kind and name (None where `objects` has no such object)."""
    def key(d):
        return (d.get("kind"), (d.get("metadata") or {}).get("name")) if isinstance(d, dict) else None
    by_key = {key(d): d for d in objects}
    return [by_key.get(key(d)) for d in like]
