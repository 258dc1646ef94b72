"""envsubst templates in tests: the values of a fixture (fixtures/envsubst/<case>/env) and a
substitution that follows GNU envsubst's rules (kf2jobset.sources.envsubst), for checks that need the
JobSet as it will be applied rather than the template kf2jobset writes."""
from __future__ import annotations

from pathlib import Path


def case_values(case: Path) -> dict[str, str]:
    """NAME=value lines of the case's `env` file ({} when the case is not a template)."""
    env = case / "env"
    if not env.exists():
        return {}
    out = {}
    for line in env.read_text().splitlines():
        if line.strip() and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            out[key] = value
    return out


def render(text: str, case: Path) -> str:
    """The case's `render` file (`{{ placeholder }}=value` lines) filled into a `{{ }}` template's text."""
    for line in (case / "render").read_text().splitlines():
        if "}}=" in line:
            spelling, _, value = line.partition("}}=")
            text = text.replace(spelling + "}}", value)
    assert "{{" not in text, text
    return text


def fill(text: str, values: dict[str, str], default: str | None = None) -> str:
    """`envsubst '${A} ${B}'` for the names in `values`; with `default`, every other placeholder (and
    the `${A:-x}` forms GNU leaves alone) becomes `default` too."""
    from kf2jobset.sources.envsubst import PLACEHOLDER_RE, gnu_substitutes, variable

    def one(m):
        name = variable(m.group(0))
        if name in values and gnu_substitutes(m.group(0)):
            return values[name]
        return default if default is not None else m.group(0)

    return PLACEHOLDER_RE.sub(one, text)
