"""How a command ends on errors: every problem on stderr, then the exit code of the worst error."""
from __future__ import annotations

import sys
from typing import NoReturn

import click

from ... import exitcodes


def print_problems(errors) -> None:
    for err in errors:
        for problem in err.problems:
            click.echo(f"kf2jobset: {problem}", err=True)


def fail(err) -> NoReturn:
    print_problems([err])
    sys.exit(exitcodes.for_error(err))


def fail_all(errors) -> NoReturn:
    print_problems(errors)
    sys.exit(exitcodes.worst(exitcodes.for_error(e) for e in errors))
