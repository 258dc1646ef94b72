"""Count what `--target trainjob` (defaults) writes over every fixture and the upstream corpus:
namespaced TrainingRuntimes, ClusterTrainingRuntimes referenced, the share of TrainJobs whose
`spec.trainer` holds the image and numNodes, and the jobs the default refuses because no shared runtime
takes them (`--why`: each with its reason; `--per-job` counts `--trainer-runtime per-job` instead;
`--shapes`: the job shapes no runtime holds, by how many refused jobs one more runtime of that shape would
take — what raising the bound of 12 ClusterTrainingRuntimes (docs/trainjob.md) would buy).

    PYTHONPATH=$PWD python tools/trainjob_census.py [--corpus DIR] [--why] [--json]

The corpus is the upstream example jobs of tests/upstream.py (Go modules pinned in
tools/upstream-modules.txt, fetched by `bash tools/install-ground-truth.sh upstream`), or the files of DIR.

Each fixture runs with its own `args` (the CLI's option parser reads them) plus `--target trainjob`;
corpus files with --accept-mpi-ssh --ssh-secret mpi-ssh (as the tests convert them). A runtime written
twice in one file counts once (the output carries it once). Fixtures whose args pick the JobSet target
or another runtime mode are counted with the defaults all the same: the figure is about the defaults.
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kf2jobset.cli.shared_options import options_from_args  # noqa: E402
from kf2jobset.options import ConvertOptions  # noqa: E402
from kf2jobset.files.pipeline import convert_text  # noqa: E402
from kf2jobset.targets import bundle_target  # noqa: E402

NO_SHARED_RUNTIME = "trainjob-no-shared-runtime"
MODE = ConvertOptions.trainer_runtime  # the runtime mode counted (main sets it)


def _options(case: Path) -> ConvertOptions:
    lines = (case / "args").read_text().splitlines() if (case / "args").exists() else []
    options = options_from_args([a for a in lines if a.strip() and not a.startswith("#")])
    return dataclasses.replace(options, target="trainjob", trainer_runtime=MODE)


def corpus_files(directory: Path | None = None) -> list[tuple[str, Path]]:
    """(label, path) of the YAML and JSON files of `directory`, else of the upstream corpus (tests/upstream.py)."""
    if directory is not None:
        found = sorted(directory.rglob("*.yaml")) + sorted(directory.rglob("*.json"))
        return [(str(p.relative_to(directory.parent)), p) for p in found]
    from tests import upstream

    return [(f"corpus/{f.name}", f.path) for f in upstream.corpus()]


def sources(corpus: list[tuple[str, Path]] | None):
    """(label, text, options) of every fixture job and every corpus file."""
    for inp in sorted((REPO / "fixtures").glob("*/*/input.yaml")):
        if (inp.parent / "expected-error.txt").exists():
            continue
        yield str(inp.parent.relative_to(REPO)), inp.read_text(), _options(inp.parent)
    options = ConvertOptions(accept_mpi_ssh=True, ssh_secret="mpi-ssh", target="trainjob", trainer_runtime=MODE)
    for label, path in corpus or ():
        yield label, path.read_text(), options


def census(corpus: list[tuple[str, Path]] | None) -> dict:
    counts = collections.Counter()
    cluster_runtimes = collections.Counter()
    why = collections.Counter()
    per_job, refused = [], []
    for label, text, options in sources(corpus):
        result = convert_text(text, label, options)
        refusals = [p for e in result.errors for p in e.problems if p.rule == NO_SHARED_RUNTIME]
        counts["failed files"] += len(refusals) < len(result.errors)
        for problem in refusals:
            counts["refused"] += 1
            name = re.match(r"\w+ ('[^']*' )?", problem.message)
            refused.append(f"{label}: {name.group(1) or '(trial) ' if name else ''}".rstrip())
            why[f"{problem.message.split()[0]}: {_first_reason(problem.message)}"] += 1
        written = [o for r in result.results if r.outputs for o in r.outputs]
        counts["namespaced runtimes"] += sum(1 for o in written if o.get("kind") == "TrainingRuntime")
        for o in written:
            if o.get("kind") != "TrainJob":
                continue
            spec = o.get("spec") or {}
            trainer = spec.get("trainer") or {}
            ref = spec.get("runtimeRef") or {}
            counts["trainjobs"] += 1
            counts["trainer image+numNodes"] += bool(trainer.get("image") and trainer.get("numNodes"))
            if ref.get("kind") == "ClusterTrainingRuntime":
                cluster_runtimes[ref.get("name")] += 1
            else:
                per_job.append(f"{label}: {(o.get('metadata') or {}).get('name') or '(trial)'}")
        for conv in result.conversions:
            if any(o.get("kind") == "TrainingRuntime" for o in conv.output or ()):
                # why no shared runtime takes it: the bundle's first reason (Trainer's built-ins say theirs in TJ004)
                reasons = bundle_target.misfits(conv, options)[2] or ["(none: --trainer-runtime per-job)"]
                why[f"{conv.job.kind}: {re.sub(r' [(].*|, the bundle.*', '', reasons[0])}"] += 1
    share = counts["trainer image+numNodes"] / counts["trainjobs"] if counts["trainjobs"] else 0.0
    return {"trainjobs": counts["trainjobs"], "namespaced runtimes": counts["namespaced runtimes"],
            "cluster runtimes referenced": dict(sorted(cluster_runtimes.items())),
            "trainer image+numNodes": counts["trainer image+numNodes"], "share": round(100 * share, 1),
            "files that failed": counts["failed files"], "per-job runtime jobs": per_job,
            "refused (no shared runtime)": counts["refused"], "refused jobs": refused,
            "why per-job or refused": dict(why.most_common())}


NO_SHAPE = "no runtime of kf2jobset's bundle has this shape"


def shapes(corpus: list[tuple[str, Path]] | None) -> list[tuple[str, list[str]]]:
    """(shape, the jobs refused only for it), most jobs first: the jobs whose one reason to stay off the bundle
    is that no runtime of its has their shape, grouped by the runtime they would need (its spec as derived)."""
    global MODE
    mode, MODE = MODE, "per-job"  # the per-job path keeps the conversion the bundle was asked about
    try:
        groups: dict[str, tuple[str, list[str]]] = {}
        for label, text, options in sources(corpus):
            default = dataclasses.replace(options, trainer_runtime=mode)
            if not any(p.rule == NO_SHARED_RUNTIME for e in convert_text(text, label, default).errors for p in e.problems):
                continue  # on a shared runtime already
            for conv in convert_text(text, label, options).conversions:
                derived, runtime, reasons = bundle_target.misfits(conv, default)
                if runtime is not None or len(reasons) != 1 or not reasons[0].startswith(NO_SHAPE):
                    continue
                key = json.dumps(derived.runtime_spec, sort_keys=True)
                shape = reasons[0][len(NO_SHAPE):].split("; the bundle's", 1)[0].strip(" ()")
                groups.setdefault(key, (f"{conv.job.kind}: {shape}", []))[1].append(f"{label}: {conv.job.name!r}")
    finally:
        MODE = mode
    return sorted(groups.values(), key=lambda g: (-len(g[1]), g[0]))


def _first_reason(message: str) -> str:
    """The bundle's first reason in a refusal (the built-in's are in the message too): the class it falls in."""
    bundle = message.split("not kf2jobset's bundle (", 1)[-1]
    return re.sub(r" [(].*|, the bundle.*|[)]$", "", bundle)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, help="a directory of job files (default: the upstream corpus)")
    ap.add_argument("--why", action="store_true", help="list the jobs on a namespaced runtime and why")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--per-job", action="store_true", help="count --trainer-runtime per-job, not the default")
    ap.add_argument("--shapes", action="store_true", help="the shapes no runtime holds and the jobs each would take")
    args = ap.parse_args(argv)
    if args.shapes:
        total = 0
        for i, (shape, jobs) in enumerate(shapes(corpus_files(args.corpus)), 1):
            total += len(jobs)
            print(f"runtime +{i}: {len(jobs)} jobs (cumulative {total}): {shape}")
            for job in jobs:
                print(f"    {job}")
        return 0
    global MODE
    MODE = "per-job" if args.per_job else ConvertOptions.trainer_runtime
    data = census(corpus_files(args.corpus))
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"TrainJobs: {data['trainjobs']}")
    print(f"namespaced TrainingRuntimes written: {data['namespaced runtimes']}")
    refs = data["cluster runtimes referenced"]
    print(f"ClusterTrainingRuntimes referenced: {len(refs)} " + ", ".join(f"{k} ({v})" for k, v in refs.items()))
    print(f"TrainJobs with spec.trainer image and numNodes: {data['trainer image+numNodes']} ({data['share']} %)")
    jobs = data["trainjobs"] + data["refused (no shared runtime)"]
    print(f"jobs refused (no shared runtime takes them): {data['refused (no shared runtime)']}; jobs on a shared "
          f"runtime with spec.trainer image and numNodes: {data['trainer image+numNodes']} of {jobs} "
          f"({round(100 * data['trainer image+numNodes'] / jobs, 1) if jobs else 0.0} %)")
    if args.why:
        for line in data["per-job runtime jobs"]:
            print("  per-job:", line)
        for line in data["refused jobs"]:
            print("  refused:", line)
        for reason, n in data["why per-job or refused"].items():
            print(f"  {n:4d}  {reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
