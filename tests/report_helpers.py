"""Helpers for the report tests: schema validation and running the report on text."""
from __future__ import annotations

import functools
import json

from kf2jobset.options import ConvertOptions
from kf2jobset.pipeline import convert_text
from kf2jobset.report import build_report
from kf2jobset.resources import data_dir


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
