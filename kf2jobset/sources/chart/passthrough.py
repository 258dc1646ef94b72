"""Templates that render no job, though their text names a job kind (a Service labelled `createdBy:
"PyTorchJob"`, a ConfigMap whose annotation says what it is mounted into): left as they are, as the
post-renderer leaves the objects they render.

Pure: a template's work (chart/build.py) in, a yes or no out.
"""
from __future__ import annotations

import re

from ...text.classify import JOB_KIND_RE
from . import standins as si
from .refusal import Refusal

_KIND_FROM_ACTION = re.compile(r"(?m)^[ \t]*(?:-[ \t]+)?[\"']?(?:kind|apiVersion)[\"']?[ \t]*:[^\n]*\{\{")


def renders_no_job(work, text: str) -> bool:
    """A template that mentions a job kind only where no kind is written (a label value, a name): no `kind:` line
    names a job kind, none is written by an action, and with stand-ins for its values every document it renders
    has its own apiVersion and kind and nothing in it converts. The post-renderer passes such objects through."""
    import yaml

    uncommented = re.sub(r"(?m)^[ \t]*#.*$", "", text)
    if JOB_KIND_RE.search(uncommented) or _KIND_FROM_ACTION.search(uncommented):
        return False
    try:
        work.plan()
        docs, _ = si.locate(work.program.render({}))
    except (Refusal, yaml.YAMLError):
        return False
    if not docs or any(not isinstance(a, str) or not isinstance(k, str) or si.TOKEN_RE.search(a + k) for a, k in docs):
        return False
    v = work.convert({})
    return v.error is None and not v.conversions and not work.embedded
