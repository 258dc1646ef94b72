"""v1 jobs held as YAML text inside a string scalar of another object, converted in place.

Two holders are read (what each system itself reads, at the tags named in docs/argo-and-katib-configmaps.md):

* Argo Workflows (`argoproj.io/v1alpha1` Workflow, WorkflowTemplate, ClusterWorkflowTemplate, and
  CronWorkflow under `spec.workflowSpec`): a template's `resource.manifest` string, for the actions
  that send the whole object (`create`, `apply`, `replace`). Kubeflow Pipelines v1 `ResourceOp`
  compiles to exactly this. Argo fills `{{...}}` placeholders into the text before it parses it, so
  they are swapped for envsubst-style stand-ins here and converted by kf2jobset/envsubst.py's rules
  (carried where the value is only copied, an error where conversion needs it), then put back.
  `successCondition`/`failureCondition` (k8s label-selector requirements over gjson paths of the
  created object, evaluated by Argo's executor) are rewritten for JobSet status where they can be.
* Katib trial templates in ConfigMaps (`--katib`): a `data` value whose YAML is a v1 job (Katib reads
  `data[templatePath]` as the trial's text). Experiments whose `trialTemplate.configMap` names such a
  value get the success/failure conditions and primaryPodLabels the inline `--katib` path writes.

Only the text of the scalar (and of the conditions) changes: every other byte of the document stays,
and the scalar keeps its style (a literal block stays a literal block; a folded block becomes literal;
a quoted scalar is written double-quoted). The inner text is converted like a file of its own (the
caller passes pipeline.convert_text: comments, layout, envsubst), so nothing here is duplicated.

A `resource` step and a ConfigMap value hold one object: conversions that need companions (an MPI
hostfile ConfigMap, a Volcano PodGroup, a TrainingRuntime) are refused with the way forward.

Pure: dicts and text in, text and DocumentResults out.
"""
from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from .convert import (ARGO_KINDS, KATIB_EXPERIMENT, DocumentResult, argo_templates, convert_job, embedded_jobs, is_job,
                      katib_note, katib_trial_fields, yaml_objects)
from .emit import SOURCE_ANNOTATION
from .envsubst import PlaceholderRestorer, RULE as ENVSUBST
from .errors import InvalidJobError, Kf2JobSetError, Location, Problem, UnsupportedError, format_path
from .mappings import convertible_mapping, kubeflow_job_kind
from .notes import Note
from .targets import target_of
from .text import yamledit
from .text.classify import may_hold_job
from .text.yamledit import Edit, quote
from .treecopy import copy_tree

ARGO_FULL_OBJECT_ACTIONS = ("create", "apply", "replace")  # the others (get, delete, patch) do not hold a whole job
# Argo's template tags (fasttemplate with `{{` and `}}`), expressions `{{=...}}` included
ARGO_PLACEHOLDER_RE = re.compile(r"\{\{.*?\}\}", re.S)
_TOKEN = "KF2JOBSET_ARGO_{}"
RULE = "embedded-companions"

# Argo conditions on v1 status that have a JobSet counterpart (keys are gjson paths)
_SUCCEEDED = re.compile(r"status\.replicaStatuses\.[A-Za-z0-9_-]+\.succeeded")
_FAILED = re.compile(r"status\.replicaStatuses\.[A-Za-z0-9_-]+\.failed")
JOBSET_SUCCESS = "status.terminalState == Completed"
JOBSET_FAILURE = "status.terminalState == Failed"


@dataclass(frozen=True)
class Holder:
    path: tuple  # of the string scalar, in the outer document
    owner: str  # Workflow, ConfigMap, ...
    argo: bool  # Argo placeholders and conditions apply


def may_hold(data: Any, options) -> bool:
    """Cheap test: could this document hold job text (or be an Experiment reading one)?"""
    if not isinstance(data, dict):
        return False
    kind = data.get("kind")
    if kind in ARGO_KINDS:
        return str(data.get("apiVersion", "")).startswith("argoproj.io/")
    return bool(options.katib) and kind in ("ConfigMap", "Experiment")


def holders(data: dict, options) -> list[Holder]:
    found = []
    kind = data.get("kind")
    if kind in ARGO_KINDS:
        base, templates = argo_templates(data)
        for i, tpl in enumerate(templates):
            resource = tpl.get("resource") if isinstance(tpl, dict) else None
            if not isinstance(resource, dict) or str(resource.get("action", "")).strip() not in ARGO_FULL_OBJECT_ACTIONS:
                continue
            manifest = resource.get("manifest")
            if isinstance(manifest, str) and may_hold_job(manifest):
                found.append(Holder(base + (i, "resource", "manifest"), kind, True))
    elif kind == "ConfigMap" and options.katib and isinstance(data.get("data"), dict):
        for key, value in data["data"].items():
            if isinstance(value, str) and may_hold_job(value) and _job_kind_of(value):
                found.append(Holder(("data", key), kind, False))
    return found


def job_in_text(text: str) -> dict | None:
    """The one object of a YAML text, Argo placeholders as written (None: not one YAML object)."""
    inner, back = _with_stand_ins(str(text))
    objects = [o for o in yaml_objects(inner) if o is not None]
    if len(objects) != 1 or not isinstance(objects[0], dict):
        return None
    return PlaceholderRestorer({spelling: "${" + token + "}" for token, spelling in back.items()})(objects[0])


def _job_kind_of(text: str) -> str | None:
    """The Kubeflow job kind of a YAML text (None: not YAML, or not one job)."""
    objects = [o for o in yaml_objects(_with_stand_ins(str(text))[0]) if o is not None]
    return kubeflow_job_kind(objects[0]) if len(objects) == 1 else None


# ---- Argo placeholders -----------------------------------------------------------------------------

def _with_stand_ins(text: str) -> tuple[str, dict[str, str]]:
    """The text with every `{{...}}` replaced by an envsubst placeholder `${KF2JOBSET_ARGO_n}` (so the
    envsubst rules decide where it may sit), and token -> original spelling."""
    table: dict[str, str] = {}
    back: dict[str, str] = {}

    def swap(m):
        spelling = m.group(0)
        if spelling not in table:
            n = len(table) + 1
            while _TOKEN.format(n) in text:
                n += 1000
            table[spelling] = _TOKEN.format(n)
            back[_TOKEN.format(n)] = spelling
        return "${" + table[spelling] + "}"

    return (ARGO_PLACEHOLDER_RE.sub(swap, text) if "{{" in text else text), back


def _put_back(text: str, back: dict[str, str]) -> str:
    for token, spelling in sorted(back.items(), key=lambda kv: -len(kv[0])):
        text = text.replace("${" + token + "}", spelling).replace("$" + token, spelling).replace(token, spelling)
    return text


def _argo_problem(p: Problem, back: dict[str, str]) -> Problem:
    """An envsubst problem about a stand-in: said of the Argo placeholder, with Argo's way forward."""
    message = _put_back(p.message, back)
    hint = _put_back(p.hint, back) if p.hint else p.hint
    if p.rule == ENVSUBST and any(t in p.message for t in back):
        message = message.replace("envsubst placeholder", "Argo placeholder")
        hint = ("write the value into the manifest (kf2jobset derives what the pods get, e.g. WORLD_SIZE, from it), "
                "convert, and keep the Argo parameter where only a carried string uses it")
    return Problem(message, p.location, p.rule, hint)


def _argo_notes(notes: list, back: dict[str, str]) -> list:
    """Notes of a conversion with stand-ins: placeholders put back; TPL001 (substitute with envsubst when
    applying) only for real envsubst variables, since Argo fills its own when the step runs."""
    out = []
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
                action=re.sub(r" ?\$\{KF2JOBSET_ARGO_\d+\}", "", note.action or "").replace("' ", "'", 1)
                if note.action else note.action)
        message = _put_back(note.message, back)
        if any(spelling in message for spelling in back.values()):
            message = message.replace("envsubst placeholder", "Argo placeholder")
        out.append(dataclasses.replace(note, message=message,
                                       action=_put_back(note.action, back) if note.action else note.action))
    return out


# ---- the conversion of one document ------------------------------------------------------------------

def convert_document_text(doc, path: str, options, convert_text: Callable, templates: Callable[[], tuple]):
    """DocumentResult for a document holding job text (or an Experiment reading a ConfigMap template),
    None when it holds none. `convert_text(text, path, options)` converts the inner text like a file;
    `templates()` gives the run's Katib trial templates (trial_templates)."""
    data = doc.data
    if data.get("kind") == "Experiment":
        return _experiment(data, options, templates)
    found = holders(data, options)
    if not found:
        return None

    try:
        root = yamledit.compose(doc.text)
    except Exception:  # parsed already: libyaml should agree; if not, leave it to the usual path
        return None
    result = DocumentResult()
    edits: list = []
    for holder in found:
        node, key = _node_at(root, holder.path)
        if node is None or type(node).__name__ != "ScalarNode":
            continue
        _convert_one(doc, path, options, convert_text, holder, node, key, root, result, edits)
    handled = {h.path for h in found}  # converted, or an error names it
    result.unconverted = [e for e in embedded_jobs(data) if e.path not in handled]
    if result.errors or not result.conversions:
        result.conversions = [] if result.errors else result.conversions
        return result if (result.errors or result.unconverted) else None
    result.new_text = yamledit.apply_edits(doc.text, edits)
    return result


def _convert_one(doc, path, options, convert_text, holder: Holder, node, key, root, result, edits) -> None:
    value = node.value
    inner, back = _with_stand_ins(value) if holder.argo else (value, {})
    where = _Where(doc, node, key)
    if not target_of(options).embeddable:
        # Argo: a TrainJob's outcome is only in its conditions list, which Argo's label-selector conditions
        # cannot query (and a generated runtime cannot join the step); Katib ConfigMaps: not written yet
        result.errors.append(UnsupportedError(where.problem(_trainjob_problem(holder), holder.path, back)))
        return
    inner_result = convert_text(inner, path, options)
    if inner_result.errors:
        for err in inner_result.errors:
            result.errors.append(type(err)([where.problem(p, holder.path, back) for p in err.problems]))
        return
    convs = inner_result.conversions
    if not convs or inner_result.new_text is None:
        return
    companions = [c for conv in convs for c in conv.companions]
    if companions or len(convs) > 1 or sum(len(r.outputs or []) for r in inner_result.results if r.changed) > 1:
        result.errors.append(UnsupportedError(where.problem(_companion_problem(holder, companions), holder.path, back)))
        return
    conv = convs[0]
    if back:
        conv.notes[:] = _argo_notes(conv.notes, back)
        PlaceholderRestorer({spelling: "${" + token + "}" for token, spelling in back.items()})(
            (conv.job, conv.plan, conv.notes, conv.jobset, conv.companions))
    if holder.owner == "ConfigMap":
        conv.notes.append(katib_note(None))
    new_text = _put_back(inner_result.new_text, back)
    edits.append(_scalar_edit(doc.text, node, key, _quote_placeholder_scalars(new_text) if back else new_text))
    if holder.argo and _job_kind_of(value):  # (a Katib Experiment created by the step keeps its conditions)
        resource, _ = _node_at(root, holder.path[:-1])
        conditions = {}
        for field_name in ("successCondition", "failureCondition"):
            cond = yamledit.get(resource, field_name)
            if yamledit.scalar(cond) is not None:
                conditions[field_name] = cond
        rewritten = {f: translate_condition(f, c.value) for f, c in conditions.items()}
        conv.notes += condition_notes({f: (conditions[f].value, new) for f, new in rewritten.items()}, holder.path[:-1])
        edits += [_condition_edit(conditions[f], new) for f, new in rewritten.items() if new is not None]
    result.conversions.append(conv)
    result.embedded_paths.append(holder.path)


def _companion_problem(holder: Holder, companions: list) -> Problem:
    kinds = ", ".join(dict.fromkeys(c.get("kind", "?") for c in companions)) or "several objects"
    if holder.owner == "ConfigMap":
        what = "a Katib trial template holds one object"
        forward = "use --mpi-hostfile generated / --scheduler kueue, or keep the trial template inline (trialSpec)"
    else:
        what = "an Argo resource step creates one object (kubectl's -o json of several is a List the executor cannot wait on)"
        forward = "use --mpi-hostfile generated / --scheduler kueue so the JobSet needs none"
    return Problem(f"{what}, but this conversion also needs {kinds}", Location(), RULE, forward)


def _trainjob_problem(holder: Holder) -> Problem:
    if holder.owner == "ConfigMap":
        return Problem("--target trainjob: Katib trial templates held in ConfigMaps are converted to JobSets only (so far)",
                       Location(), "katib-configmap-trainjob",
                       "convert them with --target jobset, or move the template inline (trialTemplate.trialSpec), "
                       "where --target trainjob writes TrainJob trials")
    return Problem("--target trainjob: an Argo resource step waits on conditions Argo reads as label-selector "
                   "requirements, and a TrainJob says how it ended only in its conditions list, which they cannot "
                   "query (its generated TrainingRuntime could not join the step either)", Location(), RULE,
                   "convert the step with --target jobset (status.terminalState is a field)")


def _node_at(root, path: tuple):
    """(node, key node) at `path` in a PyYAML node tree; (None, None) when absent."""
    node, key = root, None
    for part in path:
        kind = type(node).__name__
        if kind == "MappingNode":
            pair = next(((k, v) for k, v in node.value if getattr(k, "value", None) == part), None)
            if pair is None:
                return None, None
            key, node = pair
        elif kind == "SequenceNode" and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return None, None
    return node, key


class _Where:
    """Maps a position in the scalar's text to the outer file."""

    def __init__(self, doc, node, key):
        self.doc, self.node = doc, node
        self.block = node.style in ("|", ">")
        text = doc.text
        start = node.start_mark.index
        self.body_line = text.count("\n", 0, start) + 1  # 0-based line (in doc.text) of the first body line
        body = text[text.find("\n", start) + 1:node.end_mark.index] if self.block else ""
        first = next((ln for ln in body.splitlines() if ln.strip()), "")
        self.indent = len(first) - len(first.lstrip(" "))

    def problem(self, p: Problem, prefix: tuple, back: dict) -> Problem:
        loc = p.location
        if self.block and loc.line is not None:
            line = self.doc.start_line + self.body_line + loc.line
            col = self.indent + (loc.column or 1)
        else:
            line = self.doc.start_line + self.node.start_mark.line + 1
            col = self.node.start_mark.column + 1
        p = _argo_problem(p, back) if back else p
        return Problem(p.message, Location(loc.file, self.doc.index, line, col, tuple(prefix) + tuple(loc.path)),
                       p.rule, p.hint)


# ---- writing the scalar back -------------------------------------------------------------------------

def _scalar_edit(text: str, node, key, content: str):
    """The scalar's new text in its own style: literal stays literal (its chomping and any comment on
    the header line kept), folded becomes literal, quoted and plain become double-quoted."""
    newline = "\r\n" if "\r\n" in text else "\n"
    if node.style not in ("|", ">"):  # quoted or plain: double-quoted (escapes keep every character)
        return Edit(node.start_mark.index, node.end_mark.index, _double_quoted(text, node, content, newline))
    start = node.start_mark.index
    header_end = text.find("\n", start)
    header_end = len(text) if header_end < 0 else header_end
    header = text[start:header_end].rstrip("\r")
    m = re.match(r"[|>]([-+0-9]*)(.*)$", header)
    indicators, rest = (m.group(1), m.group(2)) if m else ("", "")
    chomp = "".join(c for c in indicators if c in "+-")
    digits = "".join(c for c in indicators if c.isdigit())
    body_start = header_end + 1
    lines = text[body_start:node.end_mark.index].splitlines(keepends=True)
    while lines and not lines[-1].strip():
        lines.pop()
    if digits and key is not None:
        indent = " " * (key.start_mark.column + int(digits))
    else:
        first = next((ln for ln in lines if ln.strip()), "")
        indent = first[:len(first) - len(first.lstrip(" "))] or " " * (node.start_mark.column + 2)
    body = "".join((indent + ln if ln.strip() else "") + newline for ln in content.rstrip("\r\n").split("\n"))
    body = body.replace("\r" + newline, newline)
    return Edit(start, body_start + len("".join(lines)), "|" + chomp + rest + newline + body)


def _double_quoted(text: str, node, content: str, newline: str) -> str:
    """JSON's escapes are YAML's: one line, or, when the scalar spanned lines, one line per line of the
    content, each ending in an escaped line break (`\\` at the end joins without a space; a leading space
    of the next line is escaped so it is kept)."""
    quoted = json.dumps(content, ensure_ascii=False)
    if node.start_mark.line == node.end_mark.line or "\\n" not in quoted:
        return quoted
    second = text[text.find("\n", node.start_mark.index) + 1:node.end_mark.index]
    indent = second[:len(second) - len(second.lstrip(" "))] or " " * (node.start_mark.column + 2)
    parts = [json.dumps(part, ensure_ascii=False)[1:-1] for part in content.split("\n")]
    lines = []
    for i, part in enumerate(parts):
        piece = part + ("\\n" if i < len(parts) - 1 else "")
        if i == 0:
            lines.append('"' + piece)
        elif piece:
            lines.append(indent + ("\\" if piece[:1] in (" ", "\t") else "") + piece)
    return ("\\" + newline).join(lines) + '"'


def _condition_edit(node, value: str):
    if not node.style and _plain_ok(value):  # libyaml says '' for plain, PyYAML None
        return Edit(node.start_mark.index, node.end_mark.index, value)
    return Edit(node.start_mark.index, node.end_mark.index, quote(value, node.style or "'"))


def _plain_ok(value: str) -> bool:
    import yaml

    if ": " in value or " #" in value or value[:1] in "!&*{}[]|>'\"%@`#,?-:":
        return False
    try:
        return yaml.safe_load("k: " + value) == {"k": value}
    except yaml.YAMLError:
        return False


# ---- Argo success/failure conditions -----------------------------------------------------------------

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


def _quote_placeholder_scalars(text: str) -> str:
    """A plain scalar starting with `{{` is a flow mapping to YAML before Argo fills it in: written quoted,
    which means the same text once filled (only strings carry placeholders), except a replicatedJob's
    `replicas:` (a replica-count placeholder carried whole: kf2jobset/envsubst.py)."""
    return _PLAIN_PLACEHOLDER.sub(_quote_plain_placeholders_line, text)


# ---- Katib: templates in ConfigMaps, and the Experiments that read them ------------------------------

@dataclass(frozen=True)
class TrialTemplate:
    """A v1 job in a ConfigMap value, as an Experiment's trialTemplate.configMap names it."""

    namespace: str | None
    name: str
    key: str
    rjob_names: tuple  # ((replica type, replicatedJob name), ...) of its conversion
    master_role: tuple  # the mapping's master_role entries


def trial_templates(datas, options) -> tuple:
    """Every ConfigMap value (of the given parsed documents) holding a v1 job that converts."""
    found = []
    for data in datas:
        if not isinstance(data, dict) or data.get("kind") != "ConfigMap" or not isinstance(data.get("data"), dict):
            continue
        meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        for key, value in data["data"].items():
            if not isinstance(value, str) or "kubeflow.org" not in value:
                continue
            objects = yaml_objects(str(value))
            if len(objects) == 1 and _converted_shape(objects[0]) is not None:  # converted by an earlier run
                names, master_role = _converted_shape(objects[0])
                found.append(TrialTemplate(meta.get("namespace"), str(meta.get("name")), str(key), names, master_role))
                continue
            if len(objects) != 1 or not is_job(objects[0]):
                continue
            try:
                conv = convert_job(objects[0], options)
            except (Kf2JobSetError, RecursionError):
                continue
            found.append(TrialTemplate(meta.get("namespace"), str(meta.get("name")), str(key),
                                       tuple(conv.plan.rjob_names.items()), tuple(conv.job.mapping.master_role)))
    return tuple(found)


def _converted_shape(obj) -> tuple | None:
    """(rjob_names, master_role) of a JobSet kf2jobset wrote (its source annotation names the v1 kind), so that
    an Experiment converted in a later run than its template still gets Katib's fields."""
    if not isinstance(obj, dict) or obj.get("kind") != "JobSet":
        return None
    source = ((obj.get("metadata") or {}).get("annotations") or {}).get(SOURCE_ANNOTATION)
    m = re.fullmatch(r"(\S+)/(\w+)(?: .*)?", str(source or ""))
    mapping = convertible_mapping(m.group(1), m.group(2)) if m else None
    rjobs = [rj.get("name") for rj in (obj.get("spec") or {}).get("replicatedJobs") or [] if isinstance(rj, dict)]
    if mapping is None:
        return None
    names = tuple((rule.type, name) for rule in mapping.replica_types for name in rjobs if name == rule.type.lower())
    return (names, tuple(mapping.master_role)) if names else None


def trial_templates_in_texts(texts, options) -> tuple:
    """trial_templates over whole files (libyaml; files that do not load are skipped: they fail later)."""
    import yaml

    datas = []
    for text in texts:
        try:
            datas += list(yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
        except Exception:  # reported when the file itself is converted
            continue
    return trial_templates(datas, options)


def _experiment(data: dict, options, templates: Callable[[], tuple]):
    """An Experiment whose trialTemplate.configMap names a converted template: Katib's fields updated."""
    if (data.get("apiVersion"), data.get("kind")) != KATIB_EXPERIMENT:
        return None
    spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
    template = spec.get("trialTemplate") if isinstance(spec.get("trialTemplate"), dict) else None
    ref = template.get("configMap") if template else None
    if not isinstance(ref, dict) or template.get("trialSpec") is not None:
        return None
    name, path = ref.get("configMapName"), ref.get("templatePath")
    namespace = ref.get("configMapNamespace") or (data.get("metadata") or {}).get("namespace")
    matches = {(t.rjob_names, t.master_role) for t in templates()
               if t.name == name and t.key == path and (not namespace or not t.namespace or t.namespace == namespace)}
    if not matches:
        return None
    if len(matches) > 1:
        return DocumentResult(errors=[InvalidJobError(Problem(
            f"trialTemplate.configMap names {name}/{path}, and this run holds differently shaped templates under that "
            "name: kf2jobset cannot tell which one Katib reads", Location(path=("spec", "trialTemplate", "configMap")),
            rule="katib-configmap", hint="set configMapNamespace, or convert the Experiment with its own ConfigMap"))])
    names, master_role = next(iter(matches))
    out = copy_tree(data)
    katib_trial_fields(out["spec"]["trialTemplate"], dict(names), master_role)
    if out == data:
        return None
    return DocumentResult(outputs=[out])
