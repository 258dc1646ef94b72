"""A `{{ }}` template file outside Helm charts (kf2jobset/sources/brace_templates.py) converted like any file: its text
with stand-ins goes through pipeline.convert_text (the caller passes it, as for jobs_in_strings), and then
everything the result holds is said of the template again: the new text, the documents, the conversions'
notes and objects, the problems. A document holding a construct that decides its text is refused when it
holds a job, and left as it is otherwise (not a job: it passes through untouched)."""
from __future__ import annotations

from typing import Callable

from . import brace_templates as tpl
from .envsubst import PlaceholderRestorer
from ..errors import InvalidJobError
from ..text.classify import has_job_evidence


def convert_template_file(text: str, path: str, options, engine: str, convert_text: Callable):
    swapped = tpl.swap(text)
    result = convert_text(swapped.text, path, options)
    restorer = PlaceholderRestorer({spelling: "${" + token + "}" for token, spelling in swapped.back.items()})
    located = iter(result.errors)  # one per parse error or document error, in document order
    errors = []
    for doc, res in zip(result.documents, result.results, strict=False):
        own = [next(located, None) for _ in range(1 if doc.error is not None else len(res.errors))]
        last = doc.start_line + doc.text.count("\n") + 1
        inside = [c for c in swapped.constructs if doc.start_line < c.line <= last]
        doc.text = _as_written(doc.text, swapped)
        if doc.data is not None:
            restorer(doc.data)
        if inside:
            if res.conversions or res.errors or has_job_evidence(doc.text, options.katib):
                err = InvalidJobError(tpl.construct_problem(inside, engine, path, doc.index))
                res.conversions, res.errors, res.outputs = [], [err], None
                doc.error = None
                errors.append(err)
            else:  # not a job: untouched (what it renders to is no concern of the conversion)
                res.errors, doc.error = [], None
            continue
        if doc.error is not None:
            doc.error = _said_of_template(doc.error, swapped, engine)
        res.errors[:] = [_said_of_template(e, swapped, engine) for e in res.errors]
        errors += [_said_of_template(e, swapped, engine) for e in own if e is not None]
        for conv in res.conversions:
            held = tpl.held_placeholders("\n".join(str(o) for o in conv.objects), swapped)
            conv.notes[:] = tpl.notes(conv.notes, swapped, engine, held)
            restorer((conv.job, conv.plan, conv.jobset, conv.companions, conv.output))
    result.text, result.engine = text, engine
    result.errors = errors
    if errors:
        result.new_text = None
    elif result.new_text is not None:
        result.new_text = tpl.restore_text(result.new_text, swapped)
    return result


def _as_written(text: str, swapped) -> str:
    from .argo_steps import put_back

    for stand_in, original in swapped.lines.items():
        text = text.replace(stand_in, original)
    return put_back(text, swapped.back)


def _said_of_template(err, swapped, engine: str):
    return type(err)([tpl.problem(p, swapped, engine) for p in err.problems])
