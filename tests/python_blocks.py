"""The ```python blocks of a Markdown page, with the `<!-- doc-test: cluster: ... -->` marker that says a block
needs a cluster (it runs in tests/live, with `api_client` and `namespace` given) or None."""
from __future__ import annotations

import re
from pathlib import Path

_BLOCK = re.compile(r"(?:<!--\s*doc-test:\s*(cluster)\b[^>]*-->\n)?```python\n(.*?)```", re.S)


def python_blocks(page: Path) -> list[tuple[int, str | None, str]]:
    """(line of the block's first code line, marker, code) in page order."""
    text = page.read_text(encoding="utf-8")
    out = []
    for m in _BLOCK.finditer(text):
        line = text.count("\n", 0, m.start(2)) + 1
        out.append((line, m.group(1), m.group(2)))
    return out


def run_block(page: Path, line: int, code: str, scope: dict) -> None:
    """Run a block as the page's own lines (a traceback names the page and line)."""
    exec(compile("\n" * (line - 1) + code, str(page), "exec"), scope)
