"""The report's data: findings with stable codes, grouped by job and file, plus the fail-on rule.

Categories, mildest first: unchanged, rewritten (different text, same meaning), approximated (close,
not identical), dropped (no JobSet equivalent), prerequisite (the same once you act before applying:
create a Secret, delete the old object), breaking (the workload must change), and
unexplained (a runtime difference no mapping note accounts for: a kf2jobset bug, please report it).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..choices import FAIL_ON

CATEGORIES = ("unchanged", "rewritten", "approximated", "dropped", "prerequisite", "breaking", "unexplained")
RANK = {c: i for i, c in enumerate(CATEGORIES)}

# Severity, as CI systems know it (SARIF level, GitHub annotation, JUnit failure).
SEVERITY = {
    "unexplained": "error",
    "breaking": "error",
    "prerequisite": "warning",
    "dropped": "warning",
    "approximated": "warning",
    "rewritten": "note",
    "unchanged": "note",
}

FAIL_ON_CHOICES = tuple(FAIL_ON)


def fails(category: str, fail_on: str) -> bool:
    threshold = FAIL_ON[fail_on]
    return threshold is not None and RANK[category] >= RANK[threshold]


@dataclass(frozen=True)
class Evidence:
    """One runtime difference (or equivalence) behind a finding."""

    aspect: str
    subject: str
    change: str  # missing | extra | changed | equivalent
    where: str  # "master/0 pytorch", "worker", "job"
    operator: str | None = None
    jobset: str | None = None


@dataclass
class Finding:
    code: str
    category: str
    message: str
    replica_type: str | None = None  # None = the whole job
    pod: str | None = None  # "worker/3" when one pod is concerned
    container: str | None = None
    source_path: str | None = None
    target_path: str | None = None
    line: int | None = None
    column: int | None = None
    action: str | None = None
    evidence: list[Evidence] = field(default_factory=list)
    # The note's claims about the emitted objects and, when it has none, why (kf2jobset/claims.py);
    # not rendered: tests/test_claims.py checks them against the JobSet.
    claims: tuple = ()
    unchecked: str | None = None

    @property
    def severity(self) -> str:
        return SEVERITY[self.category]

    @property
    def rank(self) -> int:
        return RANK[self.category]

    @property
    def scope(self) -> str:
        return "pod" if self.pod else "replica" if self.replica_type else "job"


@dataclass
class JobReport:
    kind: str
    api_version: str
    name: str  # display name
    namespace: str | None
    jobset: str | None  # JobSet name, or None when generated (generateName, Katib trial)
    document: int  # 0-based index in the file
    line: int | None
    embedded_path: str | None = None  # e.g. spec.trialTemplate.trialSpec (Katib), items[2] (List)
    replica_types: list[str] = field(default_factory=list)  # in replicatedJobs order
    findings: list[Finding] = field(default_factory=list)
    defaults: list[tuple[str, str, str]] = field(default_factory=list)  # (path, value, why)
    written_kind: str = "JobSet"  # what the job becomes: JobSet, or TrainJob (--target trainjob)

    def counts(self) -> dict:
        out = {c: 0 for c in CATEGORIES}
        for f in self.findings:
            out[f.category] += 1
        return out

    def worst(self) -> str | None:
        ranked = [f for f in self.findings if f.category != "unchanged"]
        return max(ranked, key=lambda f: f.rank).category if ranked else None


@dataclass
class FileError:
    message: str
    line: int | None = None
    column: int | None = None
    document: int | None = None
    kind: str = "input"  # the error class (input, invalid-job, unsupported, rejected-jobset)
    path: str | None = None  # the field, as `spec.x.y[0]`, when the problem is about one
    rule: str | None = None  # the rule that refused it (schema, dns-1035, yaml, ...)

    def where(self, file: str) -> str:
        """`file:line:column: document N: field.path`, the way convert's messages start."""
        text = file + (f":{self.line}" if self.line else "") + (f":{self.column}" if self.line and self.column else "")
        if self.document is not None:
            text += f": document {self.document + 1}"
        return text + (f": {self.path}" if self.path else "")

    def text(self) -> str:
        """The message with its rule, as convert prints it."""
        return self.message + (f" [{self.rule}]" if self.rule else "")


@dataclass(frozen=True)
class FileWarning:
    """Something of the file no conversion changes, said beside the jobs: a converted JobSet or TrainJob whose
    sizes (`resized`), replicatedJobs (`reshaped`), name or namespace (`renamed`) were edited since conversion,
    in --check's words. Fails no --fail-on."""

    category: str  # resized, reshaped, renamed
    object: str  # KIND NAME (APIVERSION)
    message: str
    line: int | None
    listing: str  # FILE:LINE: OBJECT: CATEGORY: MESSAGE, the line `convert --check` lists and `convert` warns with


@dataclass
class FileReport:
    path: str
    jobs: list[JobReport] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    warnings: list[FileWarning] = field(default_factory=list)


@dataclass
class Report:
    files: list[FileReport]
    fail_on: str = "breaking"
    parameters: dict = field(default_factory=dict)  # the conversion options used
    # --target trainjob: the runtimes the TrainJobs name, [(name, kind, how installed, TrainJobs)]
    runtimes: list = field(default_factory=list)

    @property
    def jobs(self) -> list[JobReport]:
        return [j for f in self.files for j in f.jobs]

    @property
    def findings(self) -> list[Finding]:
        return [x for j in self.jobs for x in j.findings]

    def counts(self) -> dict:
        out = {c: 0 for c in CATEGORIES}
        for f in self.findings:
            out[f.category] += 1
        return out

    @property
    def errors(self) -> list[FileError]:
        return [e for f in self.files for e in f.errors]

    @property
    def warnings(self) -> list[FileWarning]:
        return [w for f in self.files for w in f.warnings]

    def failing(self) -> list[Finding]:
        return [f for f in self.findings if fails(f.category, self.fail_on)]

    def worst(self) -> str | None:
        ranked = [f for f in self.findings if f.category != "unchanged"]
        return max(ranked, key=lambda f: f.rank).category if ranked else None


def sort_findings(findings: list[Finding], order: list[str] | None = None) -> list[Finding]:
    """Worst first; then job-wide before per-replica-type (in the job's order), then code."""
    order = order or []

    def key(f: Finding):
        rt = f.replica_type
        pos = -1 if rt is None else (order.index(rt) if rt in order else len(order))
        return (-f.rank, pos, f.code, f.pod or "", f.message)

    return sorted(findings, key=key)
