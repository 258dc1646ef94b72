"""Repo-mode benchmark: generates a synthetic manifest repo and measures, side by side in one run,

1. conversion throughput: kf2jobset converting the files that hold v1 jobs in process, one worker
   (read, parse, convert, validate, dump, splice, comments), as jobs/s, and as a ratio to
   a) a bare ruamel round-trip (load + dump, same settings) of the v1 source documents,
   b) ruamel loading the sources plus dumping the emitted JobSets (the two ruamel steps a
      ruamel-based converter cannot avoid), and
   c) a ruamel round-trip of the converted documents;
2. scan: kf2jobset's pass over files without v1 jobs (read + pre-filter) vs loading the same files
   with PyYAML's C loader (yaml.load_all with CSafeLoader);
3. hook latency: the pre-commit hook command (`kf2jobset convert --check FILES`, a fresh process)
   on 1,000 files without v1 jobs, and the fixer hook;
4. start-up: `kf2jobset --version`;
5. parallel scaling: `convert DIR --out-dir` over 2,000 job files with --jobs 2 vs --jobs 1;
6. live scan: the kubectl plugin's `scan -A` code path over 1,000 live job objects (a stand-in
   cluster serves them from memory, as the API's JSON; the real server: benchmarks/test_live_scan.py);
7. docs: `convert DIR --check` over the manifests plus 1,000 Markdown pages (one in ten mentions a
   job kind in prose, none holds a job), without --docs (pages not walked) and with --docs (read,
   pre-filtered, the mentioning ones split into blocks), in process.

Usage: python benchmarks/bench.py [--job-files 100] [--other-files 1000] [--parallel-files 2000]
                                  [--live-jobs 1000] [--md-files 1000] [--repeat 5] [--profile]
Prints a Markdown table (medians) for docs/benchmarks.md. Not a test: timings depend on the machine.
Run it from the repository root (or with PYTHONPATH pointing at the tree to measure).
"""
from __future__ import annotations

import argparse
import io
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LICENCE = "# Copyright 2025 Example Corp.\n# SPDX-License-Identifier: Apache-2.0\n"

PYTORCH = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: train-{i}   # nightly training
  namespace: ml-{ns}
  labels:
    team: "vision"
    cost-center: '{i}'
spec:
  runPolicy:
    cleanPodPolicy: None
    ttlSecondsAfterFinished: 3600
  pytorchReplicaSpecs:
    # rank 0
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        metadata:
          annotations:
            sidecar.istio.io/inject: "false"
        spec:
          containers:
            - name: pytorch
              image: registry.example.com/vision/train:{i}.0   # pinned
              imagePullPolicy: IfNotPresent
              command: ["torchrun"]
              args:
                - --epochs=10
                - --batch-size=64
                - --data=/data/imagenet
              env:
                - name: NCCL_DEBUG
                  value: INFO
              resources:
                limits:
                  nvidia.com/gpu: 1
                  memory: 32Gi
              volumeMounts:
                - name: data
                  mountPath: /data
          volumes:
            - name: data
              persistentVolumeClaim:
                claimName: imagenet
    Worker:
      replicas: {workers}   # scale here
      restartPolicy: OnFailure
      template:
        spec:
          containers:
            - name: pytorch
              image: registry.example.com/vision/train:{i}.0
              command: ["torchrun"]
              args: ["--epochs=10", "--batch-size=64", "--data=/data/imagenet"]
              resources:
                limits:
                  nvidia.com/gpu: 1
                  memory: 32Gi
              volumeMounts:
                - name: data
                  mountPath: /data
          volumes:
            - name: data
              persistentVolumeClaim:
                claimName: imagenet
"""

TFJOB = """\
apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: mnist-{i}
spec:
  tfReplicaSpecs:
    PS:
      replicas: 1
      template:
        spec:
          containers:
          - name: tensorflow
            image: "tensorflow/tensorflow:2.15.0"
            command: ["python", "/opt/model.py"]
    Worker:
      replicas: {workers}
      template:
        spec:
          containers:
          - name: tensorflow
            image: "tensorflow/tensorflow:2.15.0"
            command: ["python", "/opt/model.py", "--steps=1000"]
            resources:
              limits: {{cpu: "4", memory: 8Gi}}
"""

SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: tensorboard-{i}
  labels: {{app: tensorboard}}
spec:
  selector:
    app: tensorboard
  ports:
    - name: http
      port: 80
      targetPort: 6006
"""

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web-{i}
  namespace: apps
  labels:
    app: web-{i}
    tier: frontend   # public
spec:
  replicas: 3
  selector:
    matchLabels:
      app: web-{i}
  template:
    metadata:
      labels:
        app: web-{i}
    spec:
      containers:
        - name: web
          image: "nginx:1.25.{i}"
          ports:
            - containerPort: 80
          env:
            - name: MODE
              value: production
            - name: WORKERS
              value: "4"
          resources:
            requests: {{cpu: 100m, memory: 128Mi}}
            limits: {{cpu: 500m, memory: 256Mi}}
          readinessProbe:
            httpGet: {{path: /healthz, port: 80}}
            periodSeconds: 10
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-{i}-config
data:
  nginx.conf: |
    server {{
      listen 80;
      location / {{ root /usr/share/nginx/html; }}
    }}
  flags: "a,b,c"
"""


def generate(root: Path, job_files: int, other_files: int) -> tuple[list[Path], list[Path]]:
    jobs, others = [], []
    for i in range(job_files):
        d = root / "training" / f"team{i % 10}"
        d.mkdir(parents=True, exist_ok=True)
        body = (PYTORCH if i % 2 == 0 else TFJOB).format(i=i, ns=i % 5, workers=2 + i % 4)
        if i % 3 == 0:
            body = body + "---\n" + SERVICE.format(i=i)
        f = d / f"job-{i}.yaml"
        f.write_text(LICENCE + "---\n" + body)
        jobs.append(f)
    for i in range(other_files):
        d = root / "apps" / f"svc{i % 25}"
        d.mkdir(parents=True, exist_ok=True)
        f = d / f"app-{i}.yaml"
        f.write_text(LICENCE + DEPLOYMENT.format(i=i))
        others.append(f)
    return jobs, others


PAGE = """\
# Service {i}

How to deploy service {i}{mention}:

```yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-{i}
spec:
  replicas: 2
```

```bash
kubectl apply -f deploy.yaml
kubectl rollout status deployment/svc-{i}
```
"""


def generate_pages(root: Path, pages: int) -> None:
    for i in range(pages):
        d = root / "docs" / f"area{i % 20}"
        d.mkdir(parents=True, exist_ok=True)
        mention = " (it replaced the PyTorchJob of kubeflow.org)" if i % 10 == 0 else ""
        (d / f"page-{i}.md").write_text(PAGE.format(i=i, mention=mention))


def timed(fn, repeat: int) -> float:
    return paired([fn], repeat)[0]


def paired(fns, repeat: int) -> list[float]:
    """Median time of each function, run in alternation so that load from other processes hits
    all of them alike."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def paired_after(fns, repeat: int, before) -> list[float]:
    """Like paired(), with `before()` run untimed ahead of every timed call."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            before()
            t0 = time.perf_counter()
            fn()
            times[i].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def live_scan(n: int, repeat: int) -> tuple[float, float, int]:
    """Median wall time of the plugin's `scan -A` over `n` job objects served by a stand-in cluster
    (decoded from JSON on every list, as the API client does), with the default workers and with
    --jobs 1, and the number of rows printed (the two must print the same)."""
    import copy
    import json

    from click.testing import CliRunner

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import live_scan as seeds
    from kf2jobset.live import plugin

    templates = seeds.templates()
    plurals = list(templates)
    objects = []
    for i in range(n):
        obj = copy.deepcopy(templates[plurals[i % len(plurals)]])
        obj["apiVersion"] = "kubeflow.org/v1"
        obj["metadata"] = {"name": f"job-{i:05d}", "namespace": f"bench-{i % 10}", "uid": f"u-{i}", "resourceVersion": "1",
                           "creationTimestamp": "2025-01-01T00:00:00Z", "labels": {"team": f"t{i % 7}"}}
        obj["status"] = {"conditions": [{"type": "Created", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}]}
        objects.append(obj)
    payload = json.dumps(objects)

    class StandInCluster:
        namespace = "default"

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def served_version(self, kind):
            return kind.versions[-1] if "v1" not in kind.versions else "v1"

        def list_pages(self, kind, version, namespace, selector, chunk_size):
            page = [obj for obj in json.loads(payload) if obj["kind"] == kind.kind]
            for start in range(0, len(page), chunk_size or len(page) or 1):
                yield page[start:start + (chunk_size or len(page))]

    real_connect = plugin._connect
    plugin._connect = lambda kw: StandInCluster()
    try:
        outputs = {}

        def scanner(jobs: str):
            def scan():
                result = CliRunner().invoke(plugin.plugin, ["scan", "-A", "--jobs", jobs])
                assert result.exit_code == 0, result.output
                outputs[jobs] = result.stdout
            return scan

        workers, in_process = scanner("0"), scanner("1")
        workers(), in_process()
        assert outputs["0"] == outputs["1"], "scan rows differ between --jobs 0 and --jobs 1"
        t_workers, t_in_process = paired([workers, in_process], repeat)
        return t_workers, t_in_process, len(outputs["0"].splitlines()) - 1
    finally:
        plugin._connect = real_connect


def kf2jobset_exe() -> list[str]:
    """The console script next to this interpreter (not a pyenv shim), else `python -m kf2jobset`."""
    exe = Path(sys.executable).with_name("kf2jobset")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "kf2jobset"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--job-files", type=int, default=100)
    ap.add_argument("--other-files", type=int, default=1000)
    ap.add_argument("--parallel-files", type=int, default=2000, help="job files for the --jobs 2 vs --jobs 1 run (0: skip)")
    ap.add_argument("--live-jobs", type=int, default=1000, help="live job objects for the scan code path (0: skip)")
    ap.add_argument("--md-files", type=int, default=1000, help="Markdown pages for the --docs walk (0: skip)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--profile", action="store_true", help="cProfile the conversion and print the top entries")
    args = ap.parse_args(argv)

    import yaml
    from ruamel.yaml import YAML

    from kf2jobset.options import ConvertOptions
    from kf2jobset.files.pipeline import convert_text
    from kf2jobset.repo.run import CHECK, Settings, run
    from kf2jobset.text.yamlio import detect_style, split_documents

    if not getattr(yaml, "__with_libyaml__", False):
        print("warning: PyYAML is built without libyaml; the C-loader baseline is not available", file=sys.stderr)
    tmp = Path(tempfile.mkdtemp(prefix="kf2jobset-bench-"))
    try:
        jobs, others = generate(tmp, args.job_files, args.other_files)
        options = ConvertOptions()
        texts = [(str(p), p.read_text()) for p in jobs]

        # 1. conversion vs a bare ruamel round-trip of the converted documents
        def convert_all():
            out = []
            for path, text in texts:
                r = convert_text(Path(path).read_text(), path, options)
                assert r.new_text and not r.errors
                out.append(r.new_text)
            return out

        converted = convert_all()  # warm-up: schemas and validators are built once per process
        converted_docs = []
        for text in converted:
            for doc in split_documents(text):
                if "kind: JobSet" in doc.text or "kind: ConfigMap" in doc.text or "kind: PodGroup" in doc.text:
                    converted_docs.append((doc.text, detect_style(text)))

        def roundtrip(docs):
            y = YAML(typ="rt")
            y.preserve_quotes = True
            y.width = 4096
            for text, style in docs:
                y.indent(mapping=style.mapping, sequence=style.sequence, offset=style.offset)
                data = y.load(text)
                buf = io.StringIO()
                y.dump(data, buf)

        source_docs = []
        for _path, text in texts:
            for doc in split_documents(text):
                if "kubeflow.org" in doc.text:
                    source_docs.append((doc.text, detect_style(text)))
        # what a ruamel-based converter cannot avoid: load the v1 sources, dump the JobSets
        dump_y = YAML(typ="rt")
        dump_y.width = 4096
        emitted = []
        for text, style in converted_docs:
            emitted.append((dump_y.load(text), style))

        def ruamel_io():
            y = YAML(typ="rt")
            y.preserve_quotes = True
            y.width = 4096
            for text, _style in source_docs:
                y.load(text)
            for data, style in emitted:
                y.indent(mapping=style.mapping, sequence=style.sequence, offset=style.offset)
                y.dump(data, io.StringIO())

        t_convert, t_rt_out, t_rt_in, t_io = paired(
            [convert_all, lambda: roundtrip(converted_docs), lambda: roundtrip(source_docs), ruamel_io], args.repeat)

        if args.profile:
            import cProfile
            import pstats

            prof = cProfile.Profile()
            prof.runcall(convert_all)
            pstats.Stats(prof).sort_stats("cumulative").print_stats(30)

        # 2. scan of files without v1 jobs vs PyYAML's C loader
        other_paths = [str(p) for p in others]
        quiet = io.StringIO()
        settings = Settings(mode=CHECK, options=options, jobs=1)

        def scan():
            code = run(other_paths, settings, quiet, quiet)
            assert code == 0

        def c_load():
            for p in other_paths:
                with open(p, encoding="utf-8") as fh:
                    list(yaml.load_all(fh.read(), Loader=yaml.CSafeLoader))

        t_scan, t_cload = paired([scan, c_load], args.repeat)

        # 3. hook latency (fresh process, as pre-commit runs it) and 4. start-up
        exe = kf2jobset_exe()
        rel = [os.path.relpath(p, tmp) for p in other_paths]

        def hook():
            r = subprocess.run(exe + ["convert", "--check", *rel], cwd=tmp, capture_output=True)
            assert r.returncode == 0, r.stderr

        def fixer():
            r = subprocess.run(exe + ["convert", "--in-place", "--fail-on-change", *rel], cwd=tmp, capture_output=True)
            assert r.returncode == 0, r.stderr

        def version():
            subprocess.run(exe + ["--version"], capture_output=True, check=True)

        version()
        t_hook = timed(hook, args.repeat)
        t_fixer = timed(fixer, args.repeat)
        t_version = timed(version, max(args.repeat, 10))

        # 7. docs: the same tree walked without and with --docs (Markdown pages next to the manifests)
        t_docs = None
        if args.md_files and "docs" in Settings.__dataclass_fields__:
            generate_pages(tmp, args.md_files)
            manifests = [str(tmp / "apps"), str(tmp / "docs")]

            def walk(docs):
                def go():
                    code = run(manifests, Settings(mode=CHECK, options=options, jobs=1, docs=docs), quiet, quiet)
                    assert code == 0
                return go

            t_docs = paired([walk(False), walk(True)], args.repeat)
        elif args.md_files:
            print("note: this tree has no --docs: the Markdown measurement is skipped", file=sys.stderr)

        # 5. parallel scaling: --out-dir over many job files, 2 workers vs 1 process
        t_par = None
        if args.parallel_files:
            from kf2jobset.repo.run import OUT_DIR

            par_root = tmp / "parallel"
            generate(par_root, args.parallel_files, 0)
            out_root = tmp / "parallel-out"

            def out_dir_run(jobs):
                def go():
                    code = run([str(par_root)], Settings(mode=OUT_DIR, options=options, out_dir=str(out_root), jobs=jobs),
                               quiet, quiet)
                    assert code == 0
                return go

            t_par = paired_after([out_dir_run(1), out_dir_run(2)], max(2, args.repeat // 2),
                                 before=lambda: shutil.rmtree(out_root, ignore_errors=True))

        # 6. live scan code path over many job objects
        t_live = t_live_1 = live_rows = None
        if args.live_jobs:
            t_live, t_live_1, live_rows = live_scan(args.live_jobs, args.repeat)

        n_docs = len(converted_docs)
        n_jobs = len(source_docs)
        print(f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
              f"ruamel.yaml {__import__('ruamel.yaml').yaml.__version__}, PyYAML {yaml.__version__} "
              f"(libyaml: {bool(getattr(yaml, '__with_libyaml__', False))}); load average at the end: "
              f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}")
        print(f"Repo: {len(jobs)} files with v1 jobs ({n_jobs} jobs -> {n_docs} output documents), "
              f"{len(others)} files without; median of {args.repeat}\n")
        print("| measurement | kf2jobset | baseline | ratio | target |")
        print("|---|---|---|---|---|")
        print(f"| convert {len(jobs)} files, one process: jobs/s | {n_jobs / t_convert:.0f} jobs/s ({t_convert * 1000:.0f} ms) | | | >= 150 jobs/s |")
        print(f"| the same vs a ruamel round-trip (load + dump) of the {n_jobs} v1 source documents | "
              f"{t_convert * 1000:.0f} ms | {t_rt_in * 1000:.0f} ms | {t_convert / t_rt_in:.2f}x | |")
        print(f"| the same vs ruamel loading the sources + dumping the {n_docs} emitted documents | "
              f"{t_convert * 1000:.0f} ms | {t_io * 1000:.0f} ms | {t_convert / t_io:.2f}x | |")
        print(f"| the same vs a ruamel round-trip of the {n_docs} converted documents | "
              f"{t_convert * 1000:.0f} ms | {t_rt_out * 1000:.0f} ms | {t_convert / t_rt_out:.2f}x | <= 1.5x |")
        print(f"| scan {len(others)} files without v1 jobs vs PyYAML CSafeLoader load | {t_scan * 1000:.0f} ms | "
              f"{t_cload * 1000:.0f} ms | {t_scan / t_cload:.2f}x | <= 1.2x |")
        print(f"| hook `convert --check` on {len(others)} files without v1 jobs (new process) | {t_hook * 1000:.0f} ms | | | <= 500 ms |")
        print(f"| hook `convert --in-place --fail-on-change` on the same files | {t_fixer * 1000:.0f} ms | | | |")
        print(f"| `kf2jobset --version` start-up | {t_version * 1000:.0f} ms | | | <= 150 ms |")
        if t_par:
            t1, t2 = t_par
            print(f"| `convert DIR --out-dir` over {args.parallel_files} job files, --jobs 2 vs --jobs 1 | {t2 * 1000:.0f} ms | "
                  f"{t1 * 1000:.0f} ms | {t1 / t2:.2f}x faster | >= 1.7x |")
        if t_docs is not None:
            print(f"| `convert DIR --check` over {len(others)} manifests + {args.md_files} Markdown pages, --docs vs without "
                  f"(pages not walked) | {t_docs[1] * 1000:.0f} ms | {t_docs[0] * 1000:.0f} ms | {t_docs[1] / t_docs[0]:.2f}x | |")
        if t_live is not None:
            print(f"| live `scan -A` code path over {args.live_jobs} job objects ({live_rows} rows; no process start-up, "
                  f"no HTTP), default workers vs --jobs 1 | {t_live * 1000:.0f} ms | {t_live_1 * 1000:.0f} ms | "
                  f"{t_live_1 / t_live:.2f}x faster | |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
