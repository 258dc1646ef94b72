"""Every command's --help reads as written: within 80 columns, and no option table or list
rewrapped into a run-on paragraph (click rewraps a paragraph unless it is marked with \\b)."""
from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from kf2jobset.cli.main import main
from kf2jobset.live.plugin import plugin

# words, then a wide gap, then more: a table or list glued into a paragraph ("...a stream):   --in-place
# rewrite files ..."). A table row has its gap right after its first token, which is fine.
RUN_ON = re.compile(r"\S+ +\S+.* {3,}\S")


def _commands(group: click.Group, prefix: tuple = ()) -> list[tuple]:
    ctx = click.Context(group)
    out = [prefix]
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            out += _commands(cmd, prefix + (name,))
        elif cmd is not None:
            out.append(prefix + (name,))
    return out


COMMANDS = [("kf2jobset", main, c) for c in _commands(main)] + [("kubectl-kf2jobset", plugin, c) for c in _commands(plugin)]


@pytest.mark.parametrize("prog, group, path", COMMANDS, ids=lambda x: " ".join(x) if isinstance(x, tuple) else str(x)
                         if isinstance(x, str) else "")
def test_help_fits_80_columns_and_has_no_run_on_paragraph(prog, group, path):
    result = CliRunner().invoke(group, [*path, "--help"], prog_name=prog, terminal_width=80)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    wide = [line for line in lines if len(line) > 80]
    assert not wide, "\n".join(wide)
    # prose lines (not the Options table, whose columns are click's own): nothing glued together
    prose = lines[: next((i for i, line in enumerate(lines) if line.startswith("Options:")), len(lines))]
    glued = [line for line in prose if RUN_ON.search(line.strip())]
    assert not glued, "\n".join(glued)


def test_the_convert_help_lists_repo_mode_as_a_table():
    out = CliRunner().invoke(main, ["convert", "--help"], terminal_width=80).output
    assert "\n    --in-place " in out and "\n    --check " in out

