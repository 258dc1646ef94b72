"""Finding codes: titles and long forms, read from codes.yaml beside this module (the one source of the
report's titles, SARIF rules, `kf2jobset explain CODE` and docs/codes.md). Codes are stable: a code keeps
its meaning forever; a new meaning gets a new code.

Why a YAML file and not Python: the long forms are prose, reviewed as text (block scalars, no quoting);
one entry per code, sorted, merges line by line; and the data does not count against the module sizes.
It is read with PyYAML's C loader, once, and only when a title or long form is asked for.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SOURCE = Path(__file__).with_name("codes.yaml")
FIELDS = ("title", "v1", "now", "example", "action")
FIXTURE_EXAMPLE = re.compile(r"^fixtures/[\w.-]+/[\w.-]+$")


@dataclass(frozen=True)
class Code:
    code: str
    family: str
    title: str
    v1: str
    now: str
    example: str
    action: str

    @property
    def fixture(self) -> str | None:
        """The fixture directory whose report shows this code, if the example names one."""
        return self.example if FIXTURE_EXAMPLE.match(self.example) else None

    @property
    def target(self) -> str:
        return "TrainJob" if self.family == "TJ" else "JobSet"


def family_of(code: str) -> str:
    return re.match(r"K8S|[A-Z]+", code).group(0)


@lru_cache(maxsize=1)
def _data() -> dict:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(SOURCE.read_text(encoding="utf-8"), Loader=loader)


def families() -> dict[str, str]:
    """Family prefix -> what it covers, in the order `explain` lists them."""
    return dict(_data()["families"])


@lru_cache(maxsize=1)
def codes() -> dict[str, Code]:
    out = {}
    for code, entry in _data()["codes"].items():
        out[code] = Code(code, family_of(code), *(" ".join(str(entry[f]).split()) for f in FIELDS))
    return out


def title(code: str) -> str:
    entry = codes().get(code)
    return entry.title if entry else f"kf2jobset finding {code}"
