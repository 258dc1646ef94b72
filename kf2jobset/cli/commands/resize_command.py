"""`kf2jobset resize`: read the files, resize the converted JobSets named, print the result or write it in place
(atomically, every file or none), messages on stderr; the work is kf2jobset/resize (text in, text out)."""
from __future__ import annotations

import os
import sys

import click

from ...errors import Kf2JobSetError, UsageError
from ...text.filenames import is_manifest_name
from ...repo.walk import walk
from ...repo.fsio import AtomicBatch, read_source
from .exits import fail, fail_all


def parse_replicas(values) -> tuple:
    """`TYPE=N` pairs: N a whole number."""
    out = []
    for value in values:
        rtype, sep, count = str(value).partition("=")
        if not sep or not rtype.strip() or not count.strip().isdigit():
            raise UsageError(f"--replicas {value!r}: expected TYPE=N, e.g. Worker=5 (a replica type or a replicatedJob name)")
        out.append((rtype.strip(), int(count)))
    return tuple(out)


def run_resize(paths, replicas, num_nodes, elastic_max, names, in_place: bool) -> None:
    from ...resize import ResizeRequest

    try:
        request = ResizeRequest(parse_replicas(replicas), num_nodes, elastic_max)
        found = _checked_walk(request, paths, names, in_place)
    except Kf2JobSetError as err:
        fail(err)
    outputs, errors, done = _resized_files(found, names, request)
    if not errors and not done:
        errors.append(UsageError("no converted JobSet to resize" + (f" named {', '.join(names)}" if names else "")
                                 + f" in {', '.join(paths)} (kf2jobset resizes what `kf2jobset convert` wrote)"))
    if errors:
        fail_all(errors)  # nothing written
    if in_place:
        _write_in_place(outputs)
    else:
        sys.stdout.write("".join(_joined(text) for _, _, text, resized in outputs if resized))
    for path, r in done:
        moved = ", ".join(f"{t} {r.was[t]} -> {r.now[t]}" for t in r.now if r.now[t] != r.was.get(t)) or "sizes unchanged"
        click.echo(f"kf2jobset: {path}: {r.label}: {moved}; {len(r.edits)} value{'s' if len(r.edits) != 1 else ''} "
                   f"rewritten{' in place' if in_place else ''}", err=True)


def _checked_walk(request, paths, names, in_place: bool):
    """The files named, once the request and the paths make sense together (a UsageError otherwise)."""
    if request.num_nodes is not None:  # declared so the refusal names the way that works today
        raise UsageError("--num-nodes: a TrainJob is not resized yet; convert the v1 job again with its new size "
                         "(kf2jobset convert --target trainjob), or resize the JobSet target's output")
    if not request.replicas and request.elastic_max is None:
        raise UsageError("nothing to resize: pass --replicas TYPE=N")
    if in_place and "-" in paths:
        raise UsageError("--in-place writes files: it cannot go with - (stdin)")
    found = walk(paths)
    if found.missing:
        raise UsageError(f"no such file or directory: {', '.join(found.missing)}")
    if any(f.base is not None for f in found.files) and not names:
        raise UsageError("a directory is resized by name: pass --name NAME (the JobSet's metadata.name)")
    return found


def _resized_files(found, names, request) -> tuple:
    """Every file resized in memory: (path, source, text, resized) per file read, the errors, and
    (path, resize) per JobSet resized. In a directory only manifests kf2jobset wrote are read."""
    from ...resize.splice import resize_text

    outputs, errors, done = [], [], []
    for f in found.files:
        if f.base is not None and not is_manifest_name(os.path.basename(f.path)):
            continue
        try:
            source = read_source(f.path)
            if f.base is not None and "kf2jobset.dev/source" not in source.text:
                continue
            text, resized = resize_text(source.text, f.path if f.path != "-" else "<stdin>", tuple(names), request)
        except Kf2JobSetError as err:
            errors.append(err)
            continue
        outputs.append((f.path, source, text, resized))
        done += [(f.path, r) for r in resized]
    return outputs, errors, done


def _write_in_place(outputs) -> None:
    """The files whose text changed, written atomically: every file or none."""
    batch = AtomicBatch()
    for path, source, text, resized in outputs:
        if resized and text != source.text:
            batch.add(path, source.encode(text))
    failures = batch.commit()
    if failures:
        fail_all([Kf2JobSetError(f"{path}: cannot write: {err.strerror}") for path, err in failures])


def _joined(text: str) -> str:
    """One file's text as part of a stream of several: it ends with a line break."""
    return text if text.endswith("\n") else text + "\n"
