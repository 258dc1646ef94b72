"""Container images that cannot be an image reference (JS064).

The API server takes any non-blank image string; the kubelet parses it as a reference
(`[domain[:port]/]path-component[/path-component...][:tag][@digest]`, the grammar of the
distribution/reference package, restated here) and a pod whose image does not parse never starts:
InvalidImageName. So such a job ran under v1 with pods that never started, and the JobSet, which
carries the image as written, does the same. Not a refusal; a printed warning, naming a placeholder
(`<ACCOUNT>.dkr.ecr...`) when the image holds one.
"""
from __future__ import annotations

import re

from .. import claims as claim
from ..claims import pod_path
from ..model import TrainingJob
from ..notes import Note

_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|-+)"
_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_PART = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"(?:{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*|\[[a-fA-F0-9:]+\])(?::[0-9]+)?"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
REFERENCE = re.compile(rf"^(?:{_DOMAIN}/)?{_COMPONENT}(?:/{_COMPONENT})*(?::{_TAG})?(?:@{_DIGEST})?$")
_ANGLE = re.compile(r"<[A-Za-z_][A-Za-z0-9_.-]*>")
MAX_NAME = 255  # the name part (before tag and digest)


def is_reference(image: str) -> bool:
    name = re.split(r"@", image, maxsplit=1)[0]
    name = name.rsplit(":", 1)[0] if ":" in name.rsplit("/", 1)[-1] else name
    return bool(REFERENCE.match(image)) and len(name) <= MAX_NAME


def carried_template(image: str) -> bool:
    """Text another tool fills in (envsubst, Argo/Helm, Katib): not judged here."""
    return any(m in image for m in ("${", "{{", "$("))


def default_pull_policy(image: str) -> str | None:
    """The imagePullPolicy the API server gives a container that sets none (SetDefaults_Container): Always
    when the tag is `latest`, or when there is neither tag nor digest; else IfNotPresent. None for an image
    another tool fills in."""
    if carried_template(image):
        return None
    name, _, digest = image.partition("@")
    last = name.rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else ""
    return "Always" if tag == "latest" or not (tag or digest) else "IfNotPresent"


def why_not(image: str) -> str:
    if image != image.strip() or any(c.isspace() for c in image):
        return "it holds white space"
    if "//" in image or image.startswith("/") or image.endswith("/"):
        return "a path component is empty"
    if _ANGLE.search(image) or re.search(r"[^A-Za-z0-9._:/@\-\[\]]", image):
        return "it holds characters an image name cannot"
    name = image.split("@", 1)[0]
    first, _, rest = name.partition("/")
    repo = rest if rest and ("." in first or ":" in first or first == "localhost") else name
    if any(c.isupper() for c in repo.rsplit(":", 1)[0]):
        return "the repository name has upper-case letters"
    return "it is not [registry/]name[:tag][@digest]"


def image_notes(job: TrainingJob) -> list[Note]:
    notes = []
    for spec in job.replicas.values():
        pod = spec.template.get("spec") or {}
        for field in ("initContainers", "containers"):
            for i, c in enumerate(pod.get(field) or []):
                image = c.get("image") if isinstance(c, dict) else None
                if not isinstance(image, str) or not image.strip() or carried_template(image) or is_reference(image):
                    continue
                where = f"{job.mapping.replica_specs_field}.{spec.source_key}.template.spec.{field}[{i}].image"
                slots = list(dict.fromkeys(_ANGLE.findall(image)))
                said = (f"; {', '.join(repr(s) for s in slots)} looks like a placeholder: this file looks like a template "
                        "for a program, which fills it in before applying it" if slots else "")
                notes.append(Note(
                    "JS064", "unchanged",
                    f"image {image!r} of container {c.get('name')!r} ({spec.type}) is not a valid image reference "
                    f"({why_not(image)}): the kubelet cannot pull it (InvalidImageName), so these pods never started "
                    f"under v1 and do not in the JobSet either, which carries it as written{said}",
                    source_path=where, replica_type=spec.type, warn=True,
                    action="write the image as [registry/]name[:tag][@digest]" + (
                        ", or convert the file the program writes" if slots else ""),
                    claims=(claim.equals(pod_path(spec.rjob_name) + f".spec.{field}[{i}].image", image),)))
    return notes
