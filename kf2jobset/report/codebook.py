"""`kf2jobset explain`: a finding code's long form (the `rustc --explain` / `ruff rule` convention), the
list of every code by family, and docs/codes.md — all rendered from codes.yaml (report/codes.py)."""
from __future__ import annotations

import difflib
import textwrap

from ..data_dirs import data_dir
from .codes import Code, codes, families

WIDTH = 80
HINT = "kf2jobset explain CODE"  # what the text report names at its end


def example_command(c: Code) -> str | None:
    """The report command that shows the code on its fixture (flags from the fixture's `args`)."""
    if c.example.startswith("kf2jobset "):
        return c.example
    if not c.fixture:
        return None
    args = []
    try:
        case = data_dir("fixtures") / c.fixture.split("/", 1)[1]
        if (case / "args").is_file():
            args = [a for a in (case / "args").read_text().split() if a.strip() and not a.startswith("#")]
    except FileNotFoundError:  # an installed wheel carries no fixtures: the command without its flags
        pass
    return " ".join(["kf2jobset report", *args, f"{c.fixture}/input.yaml"])


def _para(text: str, indent: str = "  ") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False,
                         break_long_words=False)


def long_form(code: str) -> str:
    c = codes()[code]
    out = [f"{c.code}: {c.title}", f"family {c.family}: {families()[c.family]}", ""]
    out += ["Under v1"] + _para(c.v1) + [""]
    out += [f"Under the {c.target}"] + _para(c.now) + [""]
    command = example_command(c)
    out += ["Example"] + ([f"  $ {command}"] if command else _para(c.example)) + [""]
    out += ["What to do"] + _para(c.action)
    return "\n".join(out) + "\n"


def listing() -> str:
    by_family: dict[str, list[Code]] = {}
    for c in codes().values():
        by_family.setdefault(c.family, []).append(c)
    out = []
    for fam, what in families().items():
        out.append(f"{fam}: {what}")
        for c in by_family.get(fam, []):
            out += textwrap.wrap(c.title, WIDTH, initial_indent=f"  {c.code:<7} ", subsequent_indent=" " * 10,
                                 break_on_hyphens=False)
        out.append("")
    out.append(f"{len(codes())} codes. The long form of one: {HINT} (e.g. kf2jobset explain JS051).")
    return "\n".join(out) + "\n"


def lookup(text: str) -> tuple[str | None, list[str]]:
    """The code `text` names (any case), or None and the close matches."""
    known = list(codes())
    wanted = text.strip().upper()
    if wanted in codes():
        return wanted, []
    near = [c for c in known if c.startswith(wanted)] if wanted else []
    near += [c for c in difflib.get_close_matches(wanted, known, n=5, cutoff=0.6) if c not in near]
    return None, near[:8]


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown() -> str:
    """docs/codes.md: every code, by family, with its long form."""
    out = ["# Finding codes", "",
           "<!-- Generated from kf2jobset/report/codes.yaml by `kf2jobset explain --markdown > docs/codes.md`;",
           "     tests/test_codes.py fails when this page is stale. Edit codes.yaml, not this page. -->", "",
           "Every finding of the [report](report.md) has a stable code: a code keeps its meaning forever, a new",
           f"meaning gets a new code. `{HINT}` prints the long form of one on the terminal; `kf2jobset explain`",
           "lists them all.", ""]
    by_family: dict[str, list[Code]] = {}
    for c in codes().values():
        by_family.setdefault(c.family, []).append(c)
    out += ["| family | covers | codes |", "|---|---|---|"]
    for fam, what in families().items():
        members = by_family.get(fam, [])
        out.append(f"| [{fam}](#{fam.lower()}) | {_cell(what)} | {len(members)} |")
    out.append("")
    for fam, what in families().items():
        out += [f"## {fam}", "", f"{what}.", ""]
        for c in by_family.get(fam, []):
            out += markdown_entry(c.code).splitlines() + [""]
    return "\n".join(out).rstrip("\n") + "\n"


def markdown_entry(code: str) -> str:
    c = codes()[code]
    command = example_command(c)
    return "\n".join([f"### {c.code}", "", f"**{c.title}**", "",
                      f"- **Under v1:** {c.v1}",
                      f"- **Under the {c.target}:** {c.now}",
                      "- **Example:** " + (f"`{command}`" if command else c.example),
                      f"- **What to do:** {c.action}"]) + "\n"
