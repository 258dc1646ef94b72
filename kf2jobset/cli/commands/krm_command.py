"""`kf2jobset krm`: a kustomize exec function. The ResourceList on stdin, the transformed list (or one
with error results) on stdout; the options come from the function config's data."""
from __future__ import annotations

import re
import sys

import click

from ..shared_options import build_options, conversion_options
from ...errors import Kf2JobSetError, Location, Problem, UsageError
from ...files.krm import error_output, function_config_data, read_resource_list, transform
from ...notes import warning_lines
from ...repo.fsio import read_text
from .exits import fail, fail_all


def run_krm() -> None:
    try:
        rl = read_resource_list(read_text("-"))
        options = krm_options(function_config_data(rl))
    except Kf2JobSetError as err:
        sys.stdout.write(error_output(err))
        fail(err)
    run = transform(rl, options)
    sys.stdout.write(run.output)
    if run.errors:
        fail_all(run.errors)
    for line in run.warnings:
        click.echo(f"kf2jobset: warning: {line}", err=True)
    for line in warning_lines([("<ResourceList>", c.job.display_name(), n) for c in run.conversions for n in c.notes if n.printed]):
        click.echo(f"kf2jobset: {line}", err=True)


def krm_options(data: dict):
    """functionConfig data -> ConvertOptions, parsed by convert's own click options (same choices,
    defaults and checks): `scheduler: kueue` is `--scheduler kueue`, `acceptMpiSsh: "true"` the flag."""
    params = conversion_options(lambda **kw: kw).__click_params__
    by_key = {re.sub(r"_(.)", lambda m: m.group(1).upper(), p.name): p for p in params if p.name != "name"}
    argv = []
    for key, value in data.items():
        where = Location(file="<function config>", path=("data", key))
        param = by_key.get(key)
        if param is None:
            raise UsageError(Problem(f"unknown option; known: {', '.join(sorted(by_key))}", where))
        if param.is_flag:
            if value not in ("true", "false"):
                raise UsageError(Problem(f"expected \"true\" or \"false\", got {value!r}", where))
            argv += [param.opts[0]] if value == "true" else []
            continue
        try:
            click.Command("krm", params=[param]).make_context("krm", [param.opts[0], value])
        except click.UsageError as exc:
            raise UsageError(Problem(exc.format_message(), where)) from None
        argv += [param.opts[0], value]
    ctx = click.Command("krm", params=params).make_context("krm", argv)
    return build_options(dict(ctx.params))
