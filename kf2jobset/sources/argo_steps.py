"""Argo Workflows resource steps that create a v1 job (Workflow, WorkflowTemplate, ClusterWorkflowTemplate, and
CronWorkflow under `spec.workflowSpec`): where their templates are; Argo's `{{...}}` placeholders swapped for
envsubst stand-ins, so that kf2jobset/sources/envsubst.py's rules decide where they may sit, and put back, in the text,
the problems and the notes; the step's success/failure conditions rewritten for JobSet status where they can be.
Pure: text and dicts in and out (the step's text is converted by kf2jobset/sources/jobs_in_strings.py)."""
from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, Callable

from .envsubst import RULE as ENVSUBST
from ..errors import Problem, format_path
from ..notes import Note

ARGO_FULL_OBJECT_ACTIONS = ("create", "apply", "replace")  # the others (get, delete, patch) do not hold a whole job

# Argo's template tags (fasttemplate with `{{` and `}}`), expressions `{{=...}}` included
ARGO_PLACEHOLDER_RE = re.compile(r"\{\{.*?\}\}", re.S)
_TOKEN = "KF2JOBSET_ARGO_{}"

# Argo conditions on v1 status that have a JobSet counterpart (keys are gjson paths)
_SUCCEEDED = re.compile(r"status\.replicaStatuses\.[A-Za-z0-9_-]+\.succeeded")
_FAILED = re.compile(r"status\.replicaStatuses\.[A-Za-z0-9_-]+\.failed")
JOBSET_SUCCESS = "status.terminalState == Completed"
JOBSET_FAILURE = "status.terminalState == Failed"

# the objects whose templates may hold a resource step
ARGO_KINDS = ("Workflow", "WorkflowTemplate", "ClusterWorkflowTemplate", "CronWorkflow")


def argo_templates(data: dict) -> tuple[tuple, list]:
    """(path of the templates list, the list) of a Workflow-like object; CronWorkflow nests it."""
    spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
    if data.get("kind") == "CronWorkflow":
        inner = spec.get("workflowSpec") if isinstance(spec.get("workflowSpec"), dict) else {}
        return ("spec", "workflowSpec", "templates"), inner.get("templates") if isinstance(inner.get("templates"), list) else []
    return ("spec", "templates"), spec.get("templates") if isinstance(spec.get("templates"), list) else []


def with_stand_ins(text: str) -> tuple[str, dict[str, str]]:
    """The text with every `{{...}}` replaced by an envsubst placeholder `${KF2JOBSET_ARGO_n}` (so the
    envsubst rules decide where it may sit), and token -> original spelling."""
    swap, back = _stand_in_swapper(text)
    return swap(text), back


def tree_with_stand_ins(doc: Any) -> tuple[Any, dict[str, str]]:
    """`with_stand_ins` for a job given as data (dicts, lists, strings; keys too): one table for the whole tree,
    for a manifest a program fills with Argo parameters before handing it over."""
    swap, back = _stand_in_swapper(json.dumps(doc, default=str))
    return _map_strings(doc, swap), back


def tree_put_back(obj: Any, back: dict[str, str]) -> Any:
    """`put_back` in every string of a converted tree."""
    return _map_strings(obj, lambda s: put_back(s, back)) if back else obj


def _map_strings(node: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(node, str):
        return fn(node)
    if isinstance(node, dict):
        return {_map_strings(k, fn): _map_strings(v, fn) for k, v in node.items()}
    if isinstance(node, list):
        return [_map_strings(v, fn) for v in node]
    return node


def _stand_in_swapper(avoid: str) -> tuple[Callable[[str], str], dict[str, str]]:
    """A function swapping `{{...}}` for stand-ins (the same one for the same spelling, never a token that
    `avoid` holds already), and the table token -> spelling it fills."""
    table: dict[str, str] = {}
    back: dict[str, str] = {}

    def swap(m):
        spelling = m.group(0)
        if spelling not in table:
            n = len(table) + 1
            while _TOKEN.format(n) in avoid:
                n += 1000
            table[spelling] = _TOKEN.format(n)
            back[_TOKEN.format(n)] = spelling
        return "${" + table[spelling] + "}"

    return (lambda text: ARGO_PLACEHOLDER_RE.sub(swap, text) if "{{" in text else text), back


def put_back(text: str, back: dict[str, str]) -> str:
    for token, spelling in sorted(back.items(), key=lambda kv: -len(kv[0])):
        text = text.replace("${" + token + "}", spelling).replace("$" + token, spelling).replace(token, spelling)
    return text


ARGO_FORWARD = ("write the value into the manifest (kf2jobset derives what the pods get, e.g. WORLD_SIZE, from it), "
                "convert, and keep the Argo parameter where only a carried string uses it")


def argo_problem(p: Problem, back: dict[str, str], said: str = "Argo placeholder", forward: str = ARGO_FORWARD,
                 rule: str | None = None) -> Problem:
    """An envsubst problem about a stand-in: said of the placeholder as its engine names it (`said`), with that
    engine's way forward and rule (also Katib's trial parameters, kf2jobset/sources/katib_parameters.py, and Go
    text/template or Jinja placeholders, kf2jobset/sources/brace_templates.py)."""
    message = put_back(p.message, back)
    hint = put_back(p.hint, back) if p.hint else p.hint
    if p.rule == ENVSUBST and any(t in p.message for t in back):
        message = message.replace("envsubst placeholder", said)
        return Problem(message, p.location, rule or p.rule, forward)
    return Problem(message, p.location, p.rule, hint)


def argo_notes(notes: list, back: dict[str, str], said: str = "Argo placeholder") -> list:
    """Notes of a conversion with stand-ins: placeholders put back; TPL001 (substitute with envsubst when
    applying) only for real envsubst variables, since Argo (or Katib) fills its own when the step (trial) runs."""
    out = []
    stand_in = re.compile(r" ?\$\{(?:" + "|".join(re.escape(t) for t in back) + r")\}") if back else None
    for note in notes:
        if note.code == "TPL001":
            names = re.findall(r"still needs ([^;(]*)", note.message)
            variables = [n.strip() for n in (names[0].split(",") if names else []) if n.strip()]
            if variables and all(v in back for v in variables):
                continue
            # envsubst variables beside Argo's: the note names only the variables envsubst fills
            own = ", ".join(v for v in variables if v not in back)
            note = dataclasses.replace(
                note, message=note.message.replace(names[0], own + (" " if names[0].endswith(" ") else ""), 1),
                action=stand_in.sub("", note.action).replace("' ", "'", 1) if note.action and stand_in else note.action)
        message = put_back(note.message, back)
        if any(spelling in message for spelling in back.values()):
            message = message.replace("envsubst placeholder", said)
        out.append(dataclasses.replace(note, message=message,
                                       action=put_back(note.action, back) if note.action else note.action))
    return out


def _requirements(condition: str) -> list[str]:
    """The comma-separated requirements of a label selector (commas inside `in (a, b)` kept)."""
    out, depth, cur = [], 0, ""
    for ch in condition:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


_REQUIREMENT = re.compile(r"^(?P<key>[A-Za-z0-9_./-]+)\s*(?P<op>==|=|>|\bin\b)\s*(?P<value>.+)$")


def _reads(requirement: str, pattern) -> bool:
    """A requirement that holds once pods of a type reached a count (`> 0`, `= 2`, `in (1, 2)`)."""
    m = _REQUIREMENT.match(requirement)
    return bool(m) and bool(pattern.fullmatch(m.group("key")))


def translate_condition(field_name: str, condition: str) -> str | None:
    """The JobSet condition for an Argo step's v1 condition, or None when it cannot be said. Argo evaluates
    each as k8s label-selector requirements whose keys are gjson paths into the created object
    (workflow/executor/resource.go): success needs all of them, failure any one. v1 replica counters
    (`status.replicaStatuses.Worker.succeeded > 0`) become the JobSet's `status.terminalState`."""
    success = field_name == "successCondition"
    reqs = _requirements(condition)
    if reqs and all(_reads(r, _SUCCEEDED if success else _FAILED) for r in reqs):
        return JOBSET_SUCCESS if success else JOBSET_FAILURE
    return None


def condition_notes(conditions: dict, where: tuple) -> list[Note]:
    """AR001 for the conditions rewritten, AR002 for those kept: {field: (as written, new or None)}."""
    at = format_path(where)
    done = {f: (old, new) for f, (old, new) in conditions.items() if new is not None and new != old}
    kept = {f: old for f, (old, new) in conditions.items() if new is None and "terminalState" not in old}
    notes = []
    if done:
        notes.append(Note(
            "AR001", "approximated",
            f"Argo step {at}: " + "; ".join(f"{f} `{old}` now reads `{new}`" for f, (old, new) in done.items())
            + ": the step ends when the JobSet ends (its successPolicy: the pods that decided success under v1; "
            "its failurePolicy), not when that count of a replica type's pods has",
            source_path="(Argo resource template)", target_path="(Argo resource template)",
            action="check the step waits for what the workflow needs", warn=True,
            unchecked="about the Argo step around the JobSet, not the JobSet itself; tests/test_argo.py pins it"))
    for f, old in kept.items():
        target = JOBSET_SUCCESS if f == "successCondition" else JOBSET_FAILURE
        notes.append(Note(
            "AR002", "breaking",
            f"Argo step {at}: {f} `{old}` reads v1 status a JobSet does not have: kept as written, the step would "
            + ("never succeed" if f == "successCondition" else "never fail on it"),
            source_path="(Argo resource template)", target_path="(Argo resource template)",
            action=f"rewrite it for JobSet status, e.g. `{target}` (Argo reads label-selector requirements over gjson "
                   "paths: list queries such as conditions.#(...) do not parse)",
            unchecked="about the Argo step around the JobSet, not the JobSet itself; tests/test_argo.py pins it"))
    return notes


_PLAIN_PLACEHOLDER = re.compile(r"(?m)^(?P<lead>[ \t]*(?:- +)*(?:[A-Za-z0-9_./-]+: +)?)(?P<value>\{\{[^\n]*?)"
                                r"(?P<end>[ \t]+#[^\n]*)?(?P<nl>\r?)$")


def _quote_plain_placeholders_line(m) -> str:
    if m.group("lead").strip() == "replicas:":
        return m.group(0)  # a count Argo fills in before the text is parsed: quoted it would be a string
    return m.group("lead") + json.dumps(m.group("value"), ensure_ascii=False) + (m.group("end") or "") + m.group("nl")


def quote_placeholder_scalars(text: str) -> str:
    """A plain scalar starting with `{{` is a flow mapping to YAML before Argo fills it in: written quoted,
    which means the same text once filled (only strings carry placeholders), except a replicatedJob's
    `replicas:` (a replica-count placeholder carried whole: kf2jobset/sources/envsubst.py)."""
    return _PLAIN_PLACEHOLDER.sub(_quote_plain_placeholders_line, text)
