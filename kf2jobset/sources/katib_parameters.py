"""Katib's trial parameters (`${trialParameters.<name>}`) in a trial template, as Katib fills them in.

A template held as text (a ConfigMap value): Katib's trial controller replaces each parameter by its value as
text and only then decodes the YAML (generator.go: applyParameters, then ConvertStringToUnstructured; Katib
v0.19), so `replicas: ${trialParameters.numWorkers}` is a number when the trial is created. The parameters are
swapped for envsubst stand-ins, so that kf2jobset/sources/envsubst.py's rules decide where they may sit (a carried
string; a whole replica count that every size-derived value reads from the JobSet's labels), and put back in
the text, the problems and the notes.

An Experiment's inline `trialSpec` is not text: Katib writes the object out as JSON before it substitutes, so a
parameter there stays a string (`"replicas": "4"`), and a field the API server types as a number rejects the
trial (`inline_problems`).

Pure: text, problems and notes in and out.
"""
from __future__ import annotations

import re

from .argo_steps import argo_notes, argo_problem
from ..errors import InvalidJobError, Kf2JobSetError, Problem

# Katib's own pattern (consts.TrialTemplateParamReplaceFormatRegex)
KATIB_PARAMETER_RE = re.compile(r"\$\{trialParameters\..+?\}")
_TOKEN = "KF2JOBSET_KATIB_{}"
SAID = "Katib trial parameter"
FORWARD = ("Katib fills it in per trial: write a fixed value in its place (Katib then tunes the other parameters) and "
           "convert; kf2jobset keeps a trial parameter where the JobSet copies the value as written, and a whole replica "
           "count when every value derived from the size reads the JobSet's labels")
INLINE = ("Katib writes an inline trialSpec out as JSON before it fills in the trial parameters, so this one stays a "
          "string (e.g. \"4\") and the API server rejects every trial (inherited: the v1 API server rejected these "
          "trials too)")
INLINE_FORWARD = ("move the trial template into a ConfigMap (trialTemplate.configMap), where Katib fills in the "
                  "text before reading it, and convert it with --katib")


def with_stand_ins(text: str) -> tuple[str, dict[str, str]]:
    """The text with each trial parameter replaced by an envsubst placeholder `${KF2JOBSET_KATIB_n}`, and
    token -> the parameter as written."""
    if "${trialParameters." not in text:
        return text, {}
    back: dict[str, str] = {}
    table: dict[str, str] = {}
    for spelling in dict.fromkeys(KATIB_PARAMETER_RE.findall(text)):
        n = len(back) + 1
        while _TOKEN.format(n) in text:
            n += 1000
        back[_TOKEN.format(n)] = spelling
        table[spelling] = "${" + _TOKEN.format(n) + "}"
    return KATIB_PARAMETER_RE.sub(lambda m: table[m.group(0)], text), back


_SIZE_RE = re.compile(r"^[ \t]*replicas:[ \t]*(\$\{trialParameters\..+?\})", re.M)


def sizes_the_job(text: str) -> str | None:
    """The trial parameter written as a replica count in a template's text, if one is."""
    m = _SIZE_RE.search(text)
    return m.group(1) if m else None


def parameter_problem(p: Problem, back: dict[str, str]) -> Problem:
    return argo_problem(p, back, SAID, FORWARD)


def parameter_notes(notes: list, back: dict[str, str]) -> list:
    return argo_notes(notes, back, SAID)


_TYPED = re.compile(r"expected (integer|number|boolean)\b")
_ARTICLE = {"integer": "an integer", "number": "a number", "boolean": "a boolean"}


def inline_problems(err: Kf2JobSetError, trial: dict) -> Kf2JobSetError:
    """A schema error on a field of an inline trialSpec that holds a trial parameter: said as what Katib did."""
    problems, hit = [], False
    for p in err.problems:
        value = _at(trial, p.location.path)
        typed = _TYPED.match(p.message)  # a number or a boolean: the JSON string Katib leaves is not one
        if typed and p.rule == "schema" and isinstance(value, str) and KATIB_PARAMETER_RE.search(value):
            hit = True
            p = Problem(f"{SAID} {value} where the API server needs {_ARTICLE[typed.group(1)]}: {INLINE}; {p.message}",
                        p.location, p.rule, INLINE_FORWARD)
        problems.append(p)
    return InvalidJobError(problems) if hit else err


def _at(doc, path: tuple):
    node = doc
    for key in path:
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            node = node[key]
        else:
            return None
    return node
