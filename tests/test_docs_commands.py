"""Docs that cannot rot: every command shown in README.md and docs/*.md runs here, against
the bundled fixtures, and its shown output is checked.

The convention, for whoever writes docs:

* Commands are shown in ```console blocks: a line `$ COMMAND` (a trailing `# comment` is fine; a
  line ending in a backslash continues on the next), then
  the output exactly as a terminal shows it (stdout and stderr as they are written). A line `...`
  stands for any number of lines (zero or more); a command with no lines under it is run and its
  output not checked. `[exit N]` as the last output line: the command must exit N (otherwise 0).
* Each block runs in a fresh directory holding a copy of `fixtures/` (so `--in-place` is safe), its
  commands in order. `kf2jobset ...` runs in process (click's runner: fast); any other command, or a
  kf2jobset command with a pipe or redirect, runs in bash with `kf2jobset` on PATH.
* A block that cannot run here (it needs a cluster, kubectl, or is a synopsis with placeholders) is
  preceded by `<!-- doc-test: skip: REASON -->`; the test reports the reason. A block that needs a
  real binary of the ground truth is preceded by `<!-- doc-test: needs: kustomize -->` (or `helm`,
  Helm 3): it runs where the binary is known ($KF2JOBSET_KUSTOMIZE / $KF2JOBSET_HELM3, which
  .ci/run sets, or on PATH) and is skipped, with that reason, elsewhere.
* Commands belong in console blocks: a bash/sh/shell block fails the test.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from kf2jobset.cli.main import main

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
SKIP = re.compile(r"<!--\s*doc-test:\s*skip:\s*(.+?)\s*-->")
NEEDS = re.compile(r"<!--\s*doc-test:\s*needs:\s*([\w-]+)\s*-->")
TOOLS = {"kustomize": "KF2JOBSET_KUSTOMIZE", "helm": "KF2JOBSET_HELM3"}  # the ground truth's binaries
FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)")
SHELL_LANGS = {"bash", "sh", "shell", "zsh"}
EXIT = re.compile(r"^\[exit (\d+)\]$")
SHELL_SYNTAX = re.compile(r"[|<>;&`]|\$\(")


@dataclass
class Command:
    line: int
    text: str
    expected: list[str] = field(default_factory=list)  # [] with shown=False: not checked
    shown: bool = False
    exit_code: int = 0


@dataclass
class Block:
    path: Path
    line: int
    lang: str
    commands: list[Command]
    skip: str | None
    needs: str | None = None

    @property
    def id(self) -> str:
        where = self.path.relative_to(REPO) if self.path.is_relative_to(REPO) else self.path.name
        return f"{where}:{self.line}"


def parse_blocks(path: Path, text: str | None = None) -> list[Block]:
    text = path.read_text(encoding="utf-8") if text is None else text
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang, start = m.group(1), m.group(2).lower(), i
        j = i + 1
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        body = lines[i + 1: j]
        before = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        skip, needs = SKIP.search(before), NEEDS.search(before)
        if lang == "console" or lang in SHELL_LANGS:
            blocks.append(Block(path, start + 1, lang, _commands(body, start + 2), skip.group(1) if skip else None,
                                needs.group(1) if needs else None))
        i = j + 1
    return blocks


def _commands(body: list[str], first_line: int) -> list[Command]:
    out: list[Command] = []
    for n, line in enumerate(body, first_line):
        if out and out[-1].text.endswith("\\") and not out[-1].expected:  # a command continued on this line
            out[-1].text = out[-1].text[:-1].rstrip() + " " + line.strip()
        elif line.startswith("$ "):
            out.append(Command(n, line[2:].strip()))
        elif out:
            m = EXIT.match(line.strip())
            if m:
                out[-1].exit_code = int(m.group(1))
            else:
                out[-1].expected.append(line.rstrip())
                out[-1].shown = True
    for c in out:  # trailing blank lines are layout, not output
        while c.expected and not c.expected[-1]:
            c.expected.pop()
        c.shown = bool(c.expected)
    return out


def matches(expected: list[str], actual: list[str]) -> bool:
    """`...` lines stand for any number of lines; everything else must be equal, in order."""
    segments, current = [], []
    for line in expected:
        if line.strip() == "...":
            segments.append(current)
            current = []
        else:
            current.append(line)
    segments.append(current)
    if len(segments) == 1:
        return expected == actual
    head, *middle, tail = segments
    if actual[: len(head)] != head or (tail and actual[len(actual) - len(tail):] != tail):
        return False
    pos, end = len(head), len(actual) - len(tail)
    if pos > end:
        return False
    for seg in middle:
        if not seg:
            continue
        found = next((k for k in range(pos, end - len(seg) + 1) if actual[k: k + len(seg)] == seg), None)
        if found is None:
            return False
        pos = found + len(seg)
    return True


def _shim(bin_dir: Path) -> None:
    exe = bin_dir / "kf2jobset"
    exe.write_text(f'#!/bin/sh\nPYTHONPATH="{REPO}" exec "{sys.executable}" -m kf2jobset "$@"\n')
    exe.chmod(0o755)


def run_command(cmd: Command, cwd: Path, bin_dir: Path) -> tuple[int, list[str]]:
    words = shlex.split(cmd.text, comments=True)
    if words and words[0] == "kf2jobset" and not SHELL_SYNTAX.search(cmd.text.split(" #")[0]):
        old = Path.cwd()
        os.chdir(cwd)
        try:
            result = CliRunner().invoke(main, words[1:], prog_name="kf2jobset", terminal_width=80,
                                        env={"NO_COLOR": "1", "COLUMNS": "80"})
        finally:
            os.chdir(old)
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result.exit_code, result.output.splitlines()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "NO_COLOR": "1",
           "COLUMNS": "80", "PYTHONPATH": str(REPO),
           **{f"HELM_{d}_HOME": str(cwd / ".helm" / d.lower()) for d in ("CACHE", "CONFIG", "DATA")}}
    proc = subprocess.run(["bash", "-c", cmd.text], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=60)
    return proc.returncode, proc.stdout.splitlines()


def tool_path(name: str) -> str | None:
    return os.environ.get(TOOLS.get(name, "")) or shutil.which(name)


def check_block(block: Block, workdir: Path) -> list[str]:
    """Run the block's commands in `workdir` (a copy of the fixtures); the problems found."""
    if block.lang in SHELL_LANGS:
        return [f"{block.id}: a ```{block.lang} block: write commands as a ```console block (`$ COMMAND`, "
                "then its output), or mark it <!-- doc-test: skip: REASON -->"]
    problems = []
    bin_dir = workdir / ".bin"
    bin_dir.mkdir(exist_ok=True)
    _shim(bin_dir)
    if block.needs:
        (bin_dir / block.needs).symlink_to(tool_path(block.needs))
    for cmd in block.commands:
        code, out = run_command(cmd, workdir, bin_dir)
        out = [line.rstrip() for line in out]
        if code != cmd.exit_code:
            problems.append(f"{block.path.name}:{cmd.line}: `{cmd.text}` exited {code}, the doc says "
                            f"{cmd.exit_code}\n" + "\n".join(out[-15:]))
        elif cmd.shown and not matches(cmd.expected, out):
            problems.append(f"{block.path.name}:{cmd.line}: `{cmd.text}` printed\n" + "\n".join(out)
                            + "\n--- the doc shows ---\n" + "\n".join(cmd.expected))
    return problems


def fixtures_copy(tmp_path: Path) -> Path:
    work = tmp_path / "work"
    work.mkdir(parents=True)
    shutil.copytree(REPO / "fixtures", work / "fixtures", symlinks=True)
    return work


BLOCKS = [b for doc in DOCS for b in parse_blocks(doc)]


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.id)
def test_documented_commands_run_and_print_what_the_docs_show(block, tmp_path):
    if block.skip:
        pytest.skip(block.skip)
    if block.needs and not tool_path(block.needs):
        pytest.skip(f"needs {block.needs}: set {TOOLS.get(block.needs, 'PATH')} (.ci/run does) or put it on PATH")
    assert block.commands or block.lang != "console", f"{block.id}: a console block without a `$ ` command"
    problems = check_block(block, fixtures_copy(tmp_path))
    assert not problems, "\n\n".join(problems)


def test_the_readme_shows_runnable_commands_of_every_front_end():
    readme = [b for b in BLOCKS if b.path.name == "README.md"]
    ran = [c.text for b in readme if not b.skip for c in b.commands]
    for front in ("kf2jobset convert", "--in-place", "--check", "kf2jobset report", "kf2jobset explain"):
        assert any(front in c for c in ran), front
    assert sum(1 for b in readme if not b.skip) >= 4
    shown = [c for b in readme if not b.skip for c in b.commands if c.shown]
    assert len(shown) >= 4


def _readme_block(predicate) -> Block:
    return next(b for b in parse_blocks(REPO / "README.md") if not b.skip and any(predicate(c) for c in b.commands))


def test_a_changed_command_or_output_fails(tmp_path):
    """Prove the test can fail: mutate copies of the README's report example and run the checker."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = _readme_block(lambda c: c.text.startswith("kf2jobset report") and c.shown)
    cmd = next(c for c in block.commands if c.text.startswith("kf2jobset report") and c.shown)
    assert check_block(block, fixtures_copy(tmp_path / "as-is")) == []

    # another fixture in the command: the shown output no longer matches
    other = cmd.text.replace("master-workers", "elastic-hpa")
    assert other != cmd.text
    mutated = parse_blocks(REPO / "README.md", text.replace(f"$ {cmd.text}\n", f"$ {other}\n", 1))
    block_b = next(b for b in mutated if b.line == block.line)
    assert check_block(block_b, fixtures_copy(tmp_path / "command")), "a changed command went unnoticed"

    # one shown output line changed
    line = next(x for x in cmd.expected if "JS051" in x)
    mutated = parse_blocks(REPO / "README.md", text.replace(line, line.replace("JS051", "JS050"), 1))
    block_c = next(b for b in mutated if b.line == block.line)
    assert check_block(block_c, fixtures_copy(tmp_path / "output")), "a changed output line went unnoticed"

    # the exit code the doc claims
    mutated = parse_blocks(REPO / "README.md", text.replace(f"$ {cmd.text}\n", f"$ {cmd.text} --fail-on any\n", 1))
    block_d = next(b for b in mutated if b.line == block.line)
    assert any("exited 1" in p for p in check_block(block_d, fixtures_copy(tmp_path / "exit")))


def test_shell_blocks_are_refused_and_elision_is_anchored(tmp_path):
    doc = tmp_path / "x.md"
    block = parse_blocks(doc, "```bash\nkf2jobset --version\n```\n")[0]
    assert check_block(block, tmp_path) and "console" in check_block(block, tmp_path)[0]
    assert matches(["a", "...", "c"], ["a", "b", "b2", "c"])
    assert matches(["a", "..."], ["a"]) and matches(["...", "c"], ["x", "c"])
    assert not matches(["a", "...", "c"], ["a", "b"])
    assert not matches(["a", "...", "c", "...", "b"], ["a", "b", "c"])
    assert not matches(["a"], ["a", "b"])
    cont = parse_blocks(doc, "```console\n$ kf2jobset \\\n  --version\nkf2jobset, version 0.1.0\n```\n")[0]
    assert [(c.text, c.expected) for c in cont.commands] == [("kf2jobset --version", ["kf2jobset, version 0.1.0"])]
    assert check_block(cont, tmp_path) == []


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    out, fence = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            out.add(_slug(line.lstrip("#")))
    return out


def test_relative_links_and_anchors_resolve():
    broken = []
    for doc in DOCS:
        for target in LINK.findall(doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            file, _, anchor = target.partition("#")
            dest = (doc.parent / file).resolve() if file else doc
            rel = dest.relative_to(REPO).as_posix() if dest.is_relative_to(REPO) else str(dest)
            if not dest.exists():
                broken.append(f"{doc.relative_to(REPO)}: {rel}")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(f"{doc.relative_to(REPO)}: {target} (no such heading)")
    assert not broken, "\n".join(broken)
