"""What every pre-v1 apiVersion upgrade shares: the `Upgrade` record (the v1 dict, its UP notes, the
path moves from v1 back to the document as written), the typed refusals, the moves every version
makes (unknown fields dropped, top-level run fields into runPolicy, old defaults made explicit) and
the runtime-contract note. The per-version readers (upgrade.py, upgrade_mpi.py) build on it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import InvalidJobError, Location, Problem, UnsupportedError, format_path
from ..notes import Note

_TOKEN = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")  # a path as format_path writes it
# UP notes describe the older apiVersion read as v1; the v1 job then converts like any other, and
# the JobSet-side claims are its notes' own.
UPGRADE_ONLY = "about reading the older apiVersion as kubeflow.org/v1, before any JobSet exists"
RUN_FIELDS = ("cleanPodPolicy", "ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit", "schedulingPolicy")


@dataclass
class Upgrade:
    source_api_version: str
    doc: dict  # the job as kubeflow.org/v1
    notes: list[Note] = field(default_factory=list)
    # (path in the v1 job, path in the document as written); the longest matching prefix wins
    moves: list[tuple[tuple, tuple]] = field(default_factory=list)

    def note(self, code, category, message, source=None, target=None, action=None, warn=False):
        self.notes.append(Note(code, category, message, source_path=_text(source), target_path=_text(target),
                               action=action, warn=warn, unchecked=UPGRADE_ONLY))

    def move(self, new: tuple, old: tuple) -> None:
        self.moves.append((tuple(new), tuple(old)))

    def old_path(self, path) -> tuple:
        """Where a path of the v1 job was written in the original document."""
        path = tuple(path)
        best = None
        for new, old in self.moves:
            if path[:len(new)] == new and (best is None or len(new) > len(best[0])):
                best = (new, old)
        return best[1] + path[len(best[0]):] if best else path

    def old_path_text(self, text: str) -> str:
        parts = [m.group(1) if m.group(1) is not None else (int(m.group(2)) if m.group(2).isdigit() else m.group(2))
                 for m in _TOKEN.finditer(text)]
        if not parts:
            return text
        prefixed = parts[0] != "spec" and parts[0] not in ("metadata", "apiVersion", "kind")
        old = self.old_path((("spec",) if prefixed else ()) + tuple(parts))
        if old == (("spec",) if prefixed else ()) + tuple(parts):
            return text
        return format_path(old)

    def relocate(self, err):
        """The error with its paths pointing into the document as written."""
        problems = [Problem(p.message, Location(p.location.file, p.location.document, p.location.line, p.location.column,
                                                self.old_path(p.location.path)), p.rule, p.hint) for p in err.problems]
        return type(err)(problems)


def _text(path) -> str | None:
    if path is None or isinstance(path, str):
        return path
    return format_path(path)


def bad(path, message, hint=None) -> InvalidJobError:
    return InvalidJobError(Problem(message, Location(path=tuple(path)), rule="schema", hint=hint))


def refuse(path, message, hint) -> UnsupportedError:
    return UnsupportedError(Problem(message, Location(path=tuple(path)), rule="api-version", hint=hint))


def as_mapping(value, path) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise bad(path, f"expected a mapping, got {type(value).__name__}")
    return value


# --------------------------------------------------------------------------- shared moves

def known_fields(up: Upgrade, spec: dict, known: tuple, version_name: str) -> None:
    """Spec fields the old operator's types did not have never reached it (its decoder dropped them)."""
    for key in [k for k in spec if k not in known]:
        del spec[key]
        up.note("UP012", "dropped", f"spec.{key} is not a field of {version_name}: its operator never read it",
                source=("spec", key), action=f"remove spec.{key}, or set it in the v1 job if you want it now")


def run_policy_from_top(up: Upgrade, spec: dict, fields: tuple, old_runpolicy_read: tuple = ()) -> None:
    """Top-level run fields -> runPolicy. `old_runpolicy_read`: runPolicy fields the old operator read
    itself (MPIJob v1alpha2), which then won over the top-level ones; any other runPolicy content was
    never read by it and is dropped."""
    written = spec.get("runPolicy")
    old_rp = as_mapping(written, ("spec", "runPolicy"))
    rp: dict = {}
    for key in list(old_rp):
        if key in old_runpolicy_read:
            rp[key] = old_rp[key]
            up.move(("spec", "runPolicy", key), ("spec", "runPolicy", key))
        else:
            up.note("UP012", "dropped", f"spec.runPolicy.{key} was never read by the operator that served {up.source_api_version} "
                    "(it read the top-level fields only)", source=("spec", "runPolicy", key),
                    action=f"move it to the top level of the old job, or set runPolicy.{key} once the job is v1")
    for key in fields:
        if key not in spec:
            continue
        value = spec.pop(key)
        if key in rp:
            up.note("UP013", "rewritten", f"spec.{key} ({value!r}) and spec.runPolicy.{key} ({rp[key]!r}) both set: the "
                    f"{up.source_api_version} operator used runPolicy.{key}, and so does the v1 job",
                    source=("spec", key), target=("spec", "runPolicy", key))
            continue
        rp[key] = value
        up.move(("spec", "runPolicy", key), ("spec", key))
        up.note("UP010", "rewritten", f"spec.{key} moved to spec.runPolicy.{key}", source=("spec", key),
                target=("spec", "runPolicy", key))
    spec.pop("runPolicy", None)
    if rp:
        spec["runPolicy"] = rp


def old_default(up: Upgrade, spec: dict, key: str, value, why: str) -> None:
    rp = spec.setdefault("runPolicy", {})
    if key not in rp:
        rp[key] = value
        up.move(("spec", "runPolicy", key), ("spec",))
        up.note("UP011", "rewritten", f"runPolicy.{key}: {value} made explicit: {why}",
                source="spec", target=("spec", "runPolicy", key))


def map_specs(up: Upgrade, spec: dict, field_name: str) -> dict:
    specs = as_mapping(spec.get(field_name), ("spec", field_name))
    for key, value in specs.items():
        up.move(("spec", field_name, key), ("spec", field_name, key))
        as_mapping(value, ("spec", field_name, key))
    return specs


# --------------------------------------------------------------------------- runtime contract

def contract(up: Upgrade, mapping, source) -> None:
    """UP002: what the old operator's pods got that v1's do not (`source`: the mapping's UpgradeSource)."""
    old = source.contract or mapping.upgrade_contract
    up.note("UP002", "approximated", f"the JobSet carries training-operator v1's runtime contract (env, labels, pod names, "
            f"start order, success and restart rules); under {source.operator} {old}",
            source="apiVersion", action="check code that read what the old operator injected")
