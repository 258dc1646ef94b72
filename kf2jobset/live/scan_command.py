"""`kubectl kf2jobset scan`: an inventory of the v1 jobs in a cluster (state, replicas, worst finding),
and with --report the full semantic report of `kf2jobset report`.
"""
from __future__ import annotations

import dataclasses
import json
import sys

import click

from .. import exitcodes
from ..cli.shared_options import build_options, conversion_options
from ..errors import Kf2JobSetError, UsageError
from .flags import connect, connection_options, selection_options
from .objects import clean, format_replicas
from .output import exit_for, no_jobs
from .reading import job_pages, kinds_to_read
from .scanning import base_row, default_workers, finish_row, object_ref, scan_rows


_SCAN_HELP = """Inventory the v1 jobs: namespace, kind, name, state, replicas and worst finding.

STATE is the operator's latest condition (Created, Running, Restarting, Succeeded, Failed,
Suspended; - before it has any). WORST is the most severe mapping note of the conversion
(unchanged < rewritten < approximated < dropped < prerequisite < breaking) with its code, or `error: KIND` when
the job cannot be converted as it is. MPIJob v1 is assessed as if --accept-mpi-ssh were given (the
switch to SSH shows as breaking MPI001).

--report FORMAT[:FILE] (text, markdown, json, junit, sarif, github; repeatable) adds the full
semantic report of `kf2jobset report`; a report without :FILE goes to stdout instead of the table."""


@click.command(help=_SCAN_HELP)
@click.argument("kind", required=False)
@connection_options
@selection_options
@click.option("-o", "--output", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True,
              help="The inventory as a table, or as data.")
@click.option("--report", "report_specs", multiple=True, metavar="FORMAT[:FILE]",
              help="Also the semantic diff report (to stdout instead of the table, or to FILE).")
@click.option("--jobs", "-j", "workers", type=click.IntRange(min=0), default=0, show_default=True,
              help="Convert in this many worker processes; 0 = one per CPU (at most 4), 1 = in this process.")
@conversion_options
def scan(kind, output, report_specs, all_namespaces, selector, chunk_size, workers, **kw):
    try:
        options = dataclasses.replace(build_options(kw), accept_mpi_ssh=True)
        if options.name:
            raise UsageError("--name applies to one job; scan reads many")
        specs = None
        if report_specs:
            from ..report.outputs import resolve

            specs = resolve(report_specs, None)
        cluster = connect(kw)
    except Kf2JobSetError as err:
        exit_for(err)
    rows: list[dict] = []
    results = []
    with cluster:
        try:
            namespace = None if all_namespaces else (kw.get("namespace") or cluster.namespace)
            kinds = kinds_to_read(cluster, kind)
            pages = job_pages(cluster, kinds, namespace, selector, chunk_size)
            if specs is None:
                rows = scan_rows(pages, options, workers or default_workers())
            else:
                for page in pages:
                    for obj in page:
                        row, result = _scan_with_report(obj, options)
                        rows.append(row)
                        results.append(result)
        except Kf2JobSetError as err:
            exit_for(err)
    rows.sort(key=lambda r: (r["namespace"], r["kind"], r["name"]))
    if not rows:
        no_jobs(namespace, selector)
    report_on_stdout = bool(specs) and any(s.path in (None, "-") for s in specs)
    if specs:
        from ..report import build_report
        from ..report.outputs import write

        results.sort(key=lambda r: r.path)
        try:
            write(build_report(results, options, "never"), specs, sys.stdout, "auto")
        except Kf2JobSetError as err:
            exit_for(err)
    if not report_on_stdout:
        sys.stdout.write(_inventory(rows, output))
    sys.exit(exitcodes.OK)


def _scan_with_report(obj: dict, options):
    """The row and the report's DocumentResult; the report needs the document as text (it points at lines)."""
    from ..files.pipeline import convert_text
    from ..text.yamlio import dump_documents

    doc, _owners = clean(obj)
    result = convert_text(dump_documents([doc]), object_ref(obj), options)
    return finish_row(base_row(obj), result.conversions, result.errors), result


def _worst_cell(row: dict) -> str:
    if row["error"]:
        return f"error: {row['error']['kind']}"
    w = row["worst"] or {}
    return f"{w.get('category')} {w['code']}" if w.get("code") else str(w.get("category"))


def _inventory(rows: list[dict], output: str) -> str:
    if output in ("json", "yaml"):
        data = {"items": rows}
        if output == "json":
            return json.dumps(data, indent=2) + "\n"
        from ..text.yamlio import dump_documents

        return dump_documents([data])
    if not rows:
        return ""
    header = ("NAMESPACE", "KIND", "NAME", "STATE", "REPLICAS", "WORST")
    table = [header] + [(r["namespace"], r["kind"], r["name"], r["state"], format_replicas(r["replicas"]), _worst_cell(r))
                        for r in rows]
    widths = [max(len(str(line[i])) for line in table) for i in range(len(header))]
    return "".join("   ".join(str(c).ljust(w) for c, w in zip(line, widths, strict=False)).rstrip() + "\n" for line in table)
