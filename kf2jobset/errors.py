"""Typed errors. The core raises them; only the shells (cli, hook, plugin) turn them into exit codes.

Every error can carry where it came from: file, document index, line/column (1-based) and the
field path inside the document, so a message can point at the exact place to fix.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Sequence


def format_path(path: Iterable[str | int], empty: str = "<document>") -> str:
    """The one spelling of a field path in every message, the kubectl way: `('spec', 'containers', 0,
    'name')` -> `spec.containers[0].name`; keys that are not plain words are bracketed:
    metadata.labels["app.kubernetes.io/name"]. `empty`: what the whole document is called."""
    out = ""
    for elem in path:
        if not isinstance(elem, (int, str)) or isinstance(elem, bool):
            elem = str(elem)  # a YAML key read as a number or a boolean
        if isinstance(elem, int):
            out += f"[{elem}]"
        elif not elem or any(c in elem for c in '.[]" '):
            import json  # rare keys only: `--version` and the hook load errors, not json

            out += "[" + json.dumps(elem) + "]"
        elif out:
            out += f".{elem}"
        else:
            out = str(elem)
    return out or empty


@dataclass(frozen=True)
class Location:
    file: str | None = None
    document: int | None = None  # 0-based index in the YAML stream
    line: int | None = None  # 1-based
    column: int | None = None  # 1-based
    path: tuple = ()

    def __str__(self) -> str:
        parts = []
        where = self.file or "<input>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        parts.append(where)
        if self.document is not None:
            parts.append(f"document {self.document + 1}")
        if self.path:
            parts.append(format_path(self.path))
        return ": ".join(parts)


@dataclass
class Problem:
    """One thing wrong with an input, with its location and a hint on how to fix it."""

    message: str
    location: Location = field(default_factory=Location)
    rule: str | None = None
    hint: str | None = None

    @property
    def path(self) -> tuple:
        """The field path inside the document (`location.path`): ('spec', 'containers', 0)."""
        return tuple(self.location.path)

    def __str__(self) -> str:
        loc = self.location
        if loc == Location():  # not about an input (a usage error): no "<input>:" in front
            text = self.message
        else:
            text = f"{self.location}: {self.message}"
        if self.rule:
            text += f" [{self.rule}]"
        if self.hint:
            text += f" (hint: {self.hint})"
        return text


class Kf2JobSetError(Exception):
    """Base class. The shells map it to an exit code in one place: `exitcodes.for_error`."""

    kind = "error"

    def __init__(self, problems: Problem | Sequence[Problem] | str):
        if isinstance(problems, str):
            problems = [Problem(problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))

    def located(self, **where) -> "Kf2JobSetError":
        """Return a copy whose problems have the missing location fields filled in."""
        fixed = []
        for p in self.problems:
            loc = p.location
            updates = {k: v for k, v in where.items() if getattr(loc, k) in (None, ())}
            fixed.append(Problem(p.message, replace(loc, **updates), p.rule, p.hint))
        new = type(self)(fixed)
        return new

    def rephrased(self, spell: Callable[[str], str]) -> "Kf2JobSetError":
        """A copy (same type, same attributes) whose messages and hints are `spell(text)`: how a front end
        other than the CLI words them (the Python API names keywords where the CLI names flags)."""
        new = copy.copy(self)
        new.problems = [Problem(spell(p.message), p.location, p.rule, spell(p.hint) if p.hint else p.hint)
                        for p in self.problems]
        new.args = ("\n".join(str(p) for p in new.problems),)
        return new


class InputError(Kf2JobSetError):
    """The bytes are not usable YAML/JSON (syntax, encoding, duplicate keys)."""

    kind = "input"


class InvalidJobError(Kf2JobSetError):
    """The document is a Kubeflow job, but the operator would have rejected it."""

    kind = "invalid-job"


class UnsupportedError(Kf2JobSetError):
    """A valid job that cannot be converted faithfully without an explicit user decision."""

    kind = "unsupported"


class RejectedJobSetError(Kf2JobSetError):
    """The JobSet we would emit breaks a JobSet API rule (schema, webhook or CEL)."""

    kind = "rejected-jobset"


class UsageError(Kf2JobSetError):
    """Bad command-line options."""

    kind = "usage"


class ClusterAuthError(Kf2JobSetError):
    """kubectl plugin: the API server refused the credentials (401) or the action (403)."""

    kind = "cluster-auth"


class ClusterUnreachableError(Kf2JobSetError):
    """kubectl plugin: no usable kubeconfig, connection/TLS failure, timeout, or the server failed (5xx)."""

    kind = "cluster-unreachable"


class NotFoundError(Kf2JobSetError):
    """kubectl plugin: no such object, or its CRD is not installed (not served)."""

    kind = "not-found"
