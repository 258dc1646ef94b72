"""What the plugin's commands print, and where: stdout carries data only (manifests, the table,
kubectl-style "created" lines); notes, warnings and errors go to stderr, one line each. Shared by
get, scan and apply (get_command.py, scan_command.py, apply_command.py).
"""
from __future__ import annotations

import json
import sys
from typing import NoReturn

import click

from .. import exitcodes
from ..errors import Kf2JobSetError


def print_error(err: Kf2JobSetError) -> None:
    for problem in err.problems:
        click.echo(f"kf2jobset: error: {problem}", err=True)


def print_warning(text: str) -> None:
    click.echo(f"kf2jobset: warning: {text}", err=True)


def print_note(text: str) -> None:
    click.echo(f"kf2jobset: note: {text}", err=True)


def exit_for(err: Kf2JobSetError) -> NoReturn:
    print_error(err)
    sys.exit(exitcodes.for_error(err))


def dump(objects: list[dict], output: str, single: bool) -> str:
    from ..text.yamlio import dump_documents, to_plain

    if output == "json":
        plain = [to_plain(o) for o in objects]
        data = plain[0] if single and len(plain) == 1 else {"apiVersion": "v1", "kind": "List", "items": plain}
        return json.dumps(data, indent=2) + "\n"
    return dump_documents(objects)


def no_jobs(namespace: str | None, selector: str | None) -> None:
    where = "in any namespace" if namespace is None else f"in namespace {namespace}"
    click.echo(f"No Kubeflow Training Operator jobs found {where}" + (f" matching {selector!r}" if selector else "") + ".", err=True)
