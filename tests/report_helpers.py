"""Helpers for the report tests: schema validation and running the report on text."""
from __future__ import annotations

import functools
import json

from kf2jobset.options import ConvertOptions
from kf2jobset.files.pipeline import convert_text
from kf2jobset.report import build_report
from kf2jobset.report.build import job_report
from kf2jobset.data_dirs import data_dir


@functools.lru_cache(maxsize=None)
def _report_validator():
    import jsonschema

    schema = json.loads((data_dir("schemas") / "report.schema.json").read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def validate_report(data: dict) -> None:
    errors = sorted(_report_validator().iter_errors(data), key=lambda e: list(e.path))
    assert not errors, "report JSON does not match schemas/report.schema.json:\n" + "\n".join(
        f"{list(e.path)}: {e.message}" for e in errors[:10])


def report_for(text: str, path: str = "job.yaml", fail_on: str = "breaking", **options):
    opts = ConvertOptions(**options)
    result = convert_text(text, path, opts)
    return build_report([result], opts, fail_on)


def conversion_findings(text: str, path: str, options: ConvertOptions) -> list[tuple]:
    """(conversion, finding) for every finding of every job in the text, as `report` makes them."""
    result = convert_text(text, path, options)
    out = []
    for doc, res in zip(result.documents, result.results, strict=False):
        for conv in res.conversions:
            embedded = ()  # claims are about the conversion's own objects; the location does not matter here
            report = job_report(conv, doc, embedded, options)
            out += [(conv, f) for f in report.findings]
    return out


def stable_json(data: dict) -> str:
    """The report's JSON as the goldens hold it: the tool's version masked."""
    data = dict(data, tool=dict(data["tool"], version="VERSION"))
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
