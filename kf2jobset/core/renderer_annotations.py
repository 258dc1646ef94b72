"""Annotations a renderer puts on every object of a stream to track it, not the user's: kyaml's function
runtime (kustomize, kpt: `config.kubernetes.io/*`, `internal.config.kubernetes.io/*`, ids) and Helm 4's
post-render (`postrenderer.helm.sh/postrender-filename`, the template file an object goes back to).

A job is converted without them (its JobSet is what `convert` writes for the job as the user wrote it:
nothing nested inherits them), and every object made from the job gets them back, so the renderer puts
its outputs where the job was. Ids are not given back: they name the input object (kyaml copies that
input's comments and field order onto whatever carries its id; kustomize matches resources by it), and
a JobSet is not its PyTorchJob.
"""
from __future__ import annotations

_PREFIXES = ("config.kubernetes.io/", "internal.config.kubernetes.io/", "postrenderer.helm.sh/")
IDS = frozenset({"internal.config.kubernetes.io/id", "config.k8s.io/id", "kustomize.config.k8s.io/id",
                 "internal.config.kubernetes.io/annotations-migration-resource-id"})


def is_renderer_annotation(key) -> bool:
    return isinstance(key, str) and (key in IDS or key.startswith(_PREFIXES))


def split(doc: dict) -> tuple[dict, dict]:
    """(the renderer's annotations to give back to the outputs, the document without any of them)."""
    meta = doc.get("metadata")
    ann = meta.get("annotations") if isinstance(meta, dict) else None
    if not isinstance(ann, dict) or not any(is_renderer_annotation(k) for k in ann):
        return {}, doc
    carried = {k: v for k, v in ann.items() if is_renderer_annotation(k) and k not in IDS}
    user = {k: v for k, v in ann.items() if not is_renderer_annotation(k)}
    clean_meta = {k: v for k, v in meta.items() if k != "annotations"}
    if user:
        clean_meta["annotations"] = user
    return carried, {**doc, "metadata": clean_meta}


def give_back(obj: dict, carried: dict) -> dict:
    """`obj` with the renderer's annotations (kyaml sorts by path, then index, stably: a JobSet and its
    companions, which all get the job's path and index, stay together in the job's place)."""
    if not carried:
        return obj
    meta = dict(obj.get("metadata") or {})
    meta["annotations"] = {**(meta.get("annotations") or {}), **carried}
    return {**obj, "metadata": meta}
