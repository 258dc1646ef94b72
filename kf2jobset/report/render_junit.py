"""JUnit XML for CI test tabs: a testsuite per file, a testcase per job.

A job whose findings reach --fail-on is a <failure> (its findings listed in the body); an input
that could not be converted is an <error> testcase; every finding is also listed in system-out.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

from .render_helpers import counts_text
from .model import Report, fails


def render(report: Report) -> str:
    root = ET.Element("testsuites", name="kf2jobset")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for fr in report.files:
        suite = ET.SubElement(root, "testsuite", name=fr.path)
        counts = {"tests": 0, "failures": 0, "errors": 0}
        for err in fr.errors:
            case = ET.SubElement(suite, "testcase", classname=fr.path,
                                 name=f"document {err.document + 1 if err.document is not None else '?'}"
                                      + (f" line {err.line}" if err.line else ""))
            e = ET.SubElement(case, "error", type=err.kind, message=err.text())
            e.text = f"{err.where(fr.path)}: {err.text()}"
            counts["tests"] += 1
            counts["errors"] += 1
        for job in fr.jobs:
            case = ET.SubElement(suite, "testcase", classname=fr.path, name=f"{job.kind} {job.name}")
            counts["tests"] += 1
            failing = [f for f in job.findings if fails(f.category, report.fail_on)]
            if failing:
                counts["failures"] += 1
                worst = failing[0]
                fail = ET.SubElement(case, "failure", type=worst.category,
                                     message=f"{len(failing)} finding(s) at or above --fail-on {report.fail_on}: "
                                             f"{worst.code} {worst.message}"[:500])
                fail.text = "\n".join(_line(f) for f in failing)
            out = ET.SubElement(case, "system-out")
            out.text = f"{counts_text(job.counts())}\n" + "\n".join(_line(f) for f in job.findings)
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
    for k, v in totals.items():
        root.set(k, str(v))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _line(f) -> str:
    where = f" [{f.pod or f.replica_type}]" if (f.pod or f.replica_type) else ""
    loc = f" (line {f.line})" if f.line else ""
    return f"{f.category} {f.code}{where}{loc}: {f.message}" + (f" -- action: {f.action}" if f.action else "")
