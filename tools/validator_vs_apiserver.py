#!/usr/bin/env python3
"""Hold kf2jobset's JobSet validator to the real API server: same verdict on every JobSet, both ways.

kf2jobset refuses to write a JobSet that `kf2jobset.k8s.validate.check_jobset` rejects, and claims that
whatever it accepts the API accepts. This script generates JobSets, asks both, and counts where
they disagree:

* **Generated**: JobSets converted (parse -> emit, before kf2jobset's own check) from v1 jobs drawn
  from the hypothesis strategies (tests/strategies.py), from the fixtures under every option set
  the fuzzer uses, and from the fuzzer's mutated inputs (tests/fuzzing.py) that still parse; then
  mutations of those (MUTATIONS below: fractional and malformed quantities, int-or-string ports,
  wrong types, bad and long names, duplicate list-map keys, bad dependsOn / successPolicy /
  failurePolicy / coordinator, labels, unknown fields, integer ranges, ...).
* **kf2jobset's verdict**: `check_jobset(jobset)` (schemas/ + the webhook rules + podrules) is empty.
* **The server's verdict** (the "jobset-admission" stack of tests/e2e/stack.py: etcd +
  kube-apiserver v1.36.3, the JobSet v0.12.0 CRD with its CEL rules, and the JobSet controller's
  mutating and validating webhooks): a dry-run create (`dryRun=All`, `fieldValidation=Strict`) of
  the JobSet is admitted, **and** so is a dry-run create of each child Job the controller would
  make from what the server stored (built as v0.12.0's constructJob does: name
  `<jobset>-<rjob>-<index>`, the rjob template's labels and annotations plus the controller's,
  pod subdomain, suspend). That second half holds the batch/v1 Job and pod-template rules
  (podrules.py): the JobSet API admits a JobSet whose child Jobs the Job API then refuses, and
  kf2jobset counts that as rejected too.

Not held here: what only happens to pods (the Job controller's pod names and hostnames, which the
JobSet webhook's name-length rules stand for; the JobSet pod webhooks) and UPDATE rules.

Usage (the Go-built binaries from tools/install-ground-truth.sh):

    python tools/validator_vs_apiserver.py --count 10000 --seed 1 [--workers 8] [--out DIR]

Prints the figures (cases, agreements, each disagreement with both verdicts) and exits 1 when
there is any disagreement. tests/live/test_validator_vs_apiserver.py runs a small seeded slice.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import copy
import hashlib
import http.client
import json
import random
import ssl
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tools.jobset_mutations import MUTATIONS  # noqa: E402 (the repo root is on sys.path now)

NAMESPACE = "vvs"
GROUP_PATH = "/apis/jobset.x-k8s.io/v1alpha2/namespaces/{ns}/jobsets"
JOB_PATH = "/apis/batch/v1/namespaces/{ns}/jobs"
QUERY = "?dryRun=All&fieldValidation=Strict"


# ---------------------------------------------------------------------------------------------
# base JobSets: conversions of generated v1 jobs


def _convert(doc, opts: dict) -> dict | None:
    """The JobSet kf2jobset emits for `doc` (before its own validation), or None."""
    from kf2jobset.core.emit import emit
    from kf2jobset.errors import Kf2JobSetError
    from kf2jobset.mappings import mapping_for
    from kf2jobset.options import ConvertOptions, parse_version
    from kf2jobset.core.parse import parse_job

    if not isinstance(doc, dict):
        return None
    mapping = mapping_for(doc.get("apiVersion"), doc.get("kind"))
    if mapping is None:
        return None
    try:
        opts = {k: v for k, v in opts.items() if k != "katib"}
        if "jobset_version" in opts:
            opts["jobset_version"] = parse_version(opts["jobset_version"])
        options = ConvertOptions(**opts)
        return emit(parse_job(copy.deepcopy(doc), mapping), options).jobset
    except (Kf2JobSetError, RecursionError):
        return None


def hypothesis_jobs(n: int, seed: int) -> list[dict]:
    """`n` v1 jobs drawn from tests/strategies.py (seeded)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    from tests.strategies import ANY_JOB

    out: list[dict] = []

    @hseed(seed)
    @settings(max_examples=n, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(ANY_JOB)
    def collect(job):
        out.append(copy.deepcopy(job))

    collect()
    return out


def fixture_jobs() -> list[dict]:
    import yaml

    out = []
    for path in sorted((REPO / "fixtures").glob("*/*/input.yaml")):
        try:
            docs = list(yaml.safe_load_all(path.read_text()))
        except yaml.YAMLError:
            continue
        out += [d for d in docs if isinstance(d, dict)]
    return out


def fuzzed_jobs(n: int, seed: int) -> list[tuple[dict, dict]]:
    """(v1 job, options) from `n` of the fuzzer's mutated inputs that still load."""
    import yaml

    from tests.fuzzing import Mutator, seed_files

    mutator = Mutator(seed, seed_files(include_corpus=False))
    out = []
    for _ in range(n):
        text, _name, opts, _desc = mutator.case()
        if len(text) > 200_000 or text.count("*") > 20:
            continue  # alias bombs and megabyte documents: the reader refuses them before any JobSet
        try:
            docs = list(yaml.safe_load_all(text))
        except Exception:  # noqa: BLE001 - most mutations break the YAML
            continue
        out += [(d, opts) for d in docs if isinstance(d, dict)]
    return out


def base_jobsets(seed: int, hypothesis_n: int, fuzz_n: int) -> list[tuple[str, dict]]:
    from tests.fuzzing import OPTION_CHOICES

    rng = random.Random(seed)
    out: list[tuple[str, dict]] = []
    for job in hypothesis_jobs(hypothesis_n, seed):
        js = _convert(job, {})
        if js is not None:
            out.append(("hypothesis", js))
    for job in fixture_jobs():
        for opts in (OPTION_CHOICES[0], rng.choice(OPTION_CHOICES)):
            js = _convert(job, opts)
            if js is not None:
                out.append(("fixture", js))
    for job, opts in fuzzed_jobs(fuzz_n, seed):
        js = _convert(job, opts)
        if js is not None:
            out.append(("fuzz", js))
    for _, js in out:
        meta = js.setdefault("metadata", {})
        meta.pop("namespace", None)
        if not meta.get("name") and not meta.get("generateName"):
            meta["name"] = "trial-" + "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(8))
    return out


# ---------------------------------------------------------------------------------------------
# mutations


@dataclass
class Case:
    id: int
    source: str
    mutations: list[str]
    jobset: dict
    ours: list[str] = field(default_factory=list)  # rules and messages; [] = accepted
    server: str | None = None  # None = accepted, else the server's message
    server_stage: str = ""


def generate(count: int, seed: int, *, hypothesis_n: int | None = None, fuzz_n: int | None = None) -> list[Case]:
    """`count` distinct JobSets: a quarter unmutated conversions where there are enough, the rest mutations."""
    rng = random.Random(seed)
    bases = base_jobsets(seed, hypothesis_n or max(50, count // 8), fuzz_n if fuzz_n is not None else max(50, count // 10))
    if not bases:
        raise RuntimeError("no base JobSets were generated")
    seen: set[str] = set()
    cases: list[Case] = []

    def add(source, mutations, js) -> None:
        key = hashlib.sha1(json.dumps(js, sort_keys=True, default=str).encode()).hexdigest()
        if key not in seen:
            seen.add(key)
            cases.append(Case(len(cases), source, mutations, js))

    for source, js in bases[: count // 4]:
        add(source, [], js)
    attempts = 0
    while len(cases) < count and attempts < count * 20:
        attempts += 1
        source, base = rng.choice(bases)
        js = copy.deepcopy(base)
        done = []
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
            op = rng.choice(MUTATIONS)
            try:
                done.append(op.__name__[3:] + ": " + op(js, rng))
            except (LookupError, TypeError, AttributeError, ValueError):
                continue  # the mutation does not apply to this JobSet
        if done:
            add(source, done, js)
    return cases


# ---------------------------------------------------------------------------------------------
# verdicts


def our_verdict(js: dict) -> list[str]:
    from kf2jobset.k8s.validate import check_jobset

    return [f"{p.rule}: {p}" for p in check_jobset(js)]


class Server:
    """Raw HTTPS to the API server (a keep-alive connection per thread), admin client certificate."""

    def __init__(self, host: str, port: int, ca: Path, crt: Path, key: Path) -> None:
        self.host, self.port = host, port
        self.ctx = ssl.create_default_context(cafile=str(ca))
        self.ctx.load_cert_chain(str(crt), str(key))
        self.local = threading.local()

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        data = None if body is None else json.dumps(body, allow_nan=True).encode()
        for attempt in range(5):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=60)
            try:
                conn.request(method, path, body=data, headers={"Content-Type": "application/json", "Accept": "application/json"})
                resp = conn.getresponse()
                raw = resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                time.sleep(0.2 * (attempt + 1))
                continue
            try:
                payload = json.loads(raw)
            except ValueError:
                payload = {"message": raw[:2000].decode(errors="replace")}
            if resp.status in (429, 500, 503, 504) and _transient(payload):
                time.sleep(0.2 * (attempt + 1))
                continue
            return resp.status, payload
        raise RuntimeError(f"{method} {path}: no answer after retries")

    def ensure_namespace(self, name: str) -> None:
        status, payload = self.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        if status not in (201, 409):
            raise RuntimeError(f"namespace {name}: HTTP {status} {payload}")


def _transient(payload: dict) -> bool:
    text = json.dumps(payload)
    return any(s in text for s in ("context deadline exceeded", "connection refused", "Too many requests",
                                   "failed calling webhook", "timeout"))


def server_verdict(server: Server, js: dict, ns: str = NAMESPACE) -> tuple[str | None, str]:
    """(None, "") when the JobSet and each child Job it would make are admitted, else (message, stage)."""
    body = copy.deepcopy(js)
    body["metadata"] = dict(body.get("metadata") or {}) if isinstance(body.get("metadata"), dict) else body.get("metadata")
    if isinstance(body["metadata"], dict):
        body["metadata"].pop("namespace", None)
    status, stored = server.request("POST", GROUP_PATH.format(ns=ns) + QUERY, body)
    if status >= 300:
        return stored.get("message") or json.dumps(stored)[:2000], "jobset"
    for job in child_jobs(stored):
        status, payload = server.request("POST", JOB_PATH.format(ns=ns) + QUERY, job)
        if status >= 300:
            return payload.get("message") or json.dumps(payload)[:2000], "child-job " + job["metadata"]["name"]
    return None, ""


def child_jobs(js: dict) -> list[dict]:
    """The first and the last Job of each replicatedJob (the longest name; the smallest and largest
    index labels), as JobSet v0.12.0's constructJob builds them from the stored (defaulted) JobSet;
    every Job of an rjob shares its template."""
    rjobs = js["spec"]["replicatedJobs"]
    restarts = str(((js.get("status") or {}).get("restarts")) or 0)
    total = sum(r.get("replicas", 1) for r in rjobs)
    out = []
    for pos, rj in enumerate(rjobs):
        replicas = rj.get("replicas", 1)
        for index in sorted({0, replicas - 1}) if replicas >= 1 else ():
            out.append(_child_job(js, rj, pos, index, restarts, total))
    return out


def _child_job(js: dict, rj: dict, pos: int, index: int, restarts: str, total: int) -> dict:
    meta, spec = js["metadata"], js["spec"]
    name, ns, uid = meta["name"], meta.get("namespace", NAMESPACE), meta.get("uid", "")
    rjobs = spec["replicatedJobs"]
    network = spec.get("network") or {}
    replicas = rj.get("replicas", 1)
    job_name = f"{name}-{rj['name']}-{index}"
    group = rj.get("groupName", "default")
    earlier = sum(r.get("replicas", 1) for r in rjobs[:pos])
    in_group = [r for r in rjobs if r.get("groupName", "default") == group]
    group_earlier = sum(r.get("replicas", 1) for r in in_group[: next(k for k, r in enumerate(in_group) if r is rj)])
    keys = {
        "jobset.sigs.k8s.io/jobset-name": name,
        "jobset.sigs.k8s.io/jobset-uid": uid,
        "jobset.sigs.k8s.io/replicatedjob-name": rj["name"],
        "jobset.sigs.k8s.io/restart-attempt": restarts,
        "jobset.sigs.k8s.io/replicatedjob-replicas": str(replicas),
        "jobset.sigs.k8s.io/global-replicas": str(total),
        "jobset.sigs.k8s.io/job-index": str(index),
        "jobset.sigs.k8s.io/job-key": hashlib.sha1(f"{ns}/{job_name}".encode()).hexdigest(),
        "jobset.sigs.k8s.io/job-global-index": str(earlier + index),
        "jobset.sigs.k8s.io/group-name": group,
        "jobset.sigs.k8s.io/group-replicas": str(sum(r.get("replicas", 1) for r in in_group)),
        "jobset.sigs.k8s.io/job-group-index": str(group_earlier + index),
    }
    if spec.get("coordinator"):
        c = spec["coordinator"]
        crj = c["replicatedJob"]
        keys["jobset.sigs.k8s.io/coordinator"] = (f"{name}-{crj}-{c.get('jobIndex', 0)}-{c.get('podIndex', 0)}."
                                                  f"{network.get('subdomain') or name}")
    template = copy.deepcopy(rj["template"])
    tmeta = template.get("metadata") or {}
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": job_name, "labels": {**(tmeta.get("labels") or {}), **keys},
                        "annotations": {**(tmeta.get("annotations") or {}), **keys}},
           "spec": template["spec"]}
    pod = job["spec"].setdefault("template", {})
    pmeta = pod.setdefault("metadata", {})
    pmeta["labels"] = {**(pmeta.get("labels") or {}), **keys}
    pmeta["annotations"] = {**(pmeta.get("annotations") or {}), **keys}
    if network.get("enableDNSHostnames"):
        pod.setdefault("spec", {})["subdomain"] = network.get("subdomain") or name
    job["spec"]["suspend"] = bool(spec.get("suspend"))
    return job


# ---------------------------------------------------------------------------------------------
# running


def start_admission_stack(workdir: Path):
    from tests.e2e.stack import start_stack

    return start_stack(workdir, flavour="jobset-admission")


def server_for(stack) -> Server:
    from urllib.parse import urlparse

    api = stack.apiserver
    u = urlparse(api.server)
    return Server(u.hostname, u.port, api._certs.ca_crt, api.workdir / "admin.crt", api.workdir / "admin.key")


def run(cases: list[Case], server: Server, workers: int = 8, progress=None) -> None:
    server.ensure_namespace(NAMESPACE)
    for case in cases:  # ours first, in this process (the validator is pure and not thread-bound)
        case.ours = our_verdict(case.jobset)

    def ask(case: Case) -> Case:
        case.server, case.server_stage = server_verdict(server, case.jobset)
        return case

    done = 0
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for _ in pool.map(ask, cases):
            done += 1
            if progress and done % 500 == 0:
                progress(done)


def disagreements(cases: list[Case]) -> list[Case]:
    return [c for c in cases if bool(c.ours) != (c.server is not None)]


def summary(cases: list[Case]) -> dict:
    both_accept = sum(1 for c in cases if not c.ours and c.server is None)
    both_reject = sum(1 for c in cases if c.ours and c.server is not None)
    only_server_rejects = sum(1 for c in cases if not c.ours and c.server is not None)
    only_we_reject = sum(1 for c in cases if c.ours and c.server is None)
    child = sum(1 for c in cases if c.server_stage.startswith("child-job"))
    return {"cases": len(cases), "both_accept": both_accept, "both_reject": both_reject,
            "server_rejects_we_accept": only_server_rejects, "we_reject_server_accepts": only_we_reject,
            "rejected_at_child_job": child,
            "sources": {s: sum(1 for c in cases if c.source == s) for s in sorted({c.source for c in cases})},
            "unmutated": sum(1 for c in cases if not c.mutations)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--out", type=Path, help="write summary.json and disagreements.jsonl here")
    args = ap.parse_args(argv)

    t0 = time.monotonic()
    cases = generate(args.count, args.seed)
    t_gen = time.monotonic() - t0
    print(f"generated {len(cases)} JobSets in {t_gen:.1f} s", flush=True)
    workdir = Path(tempfile.mkdtemp(prefix="kf2jobset-vvs-"))
    stack = start_admission_stack(workdir)
    try:
        print(f"admission stack up in {stack.startup_seconds:.1f} s", flush=True)
        t1 = time.monotonic()
        run(cases, server_for(stack), args.workers, progress=lambda n: print(f"  {n} / {len(cases)}", flush=True))
        t_run = time.monotonic() - t1
    finally:
        stack.stop()
    result = summary(cases)
    result.update(seed=args.seed, generate_seconds=round(t_gen, 1), run_seconds=round(t_run, 1))
    bad = disagreements(cases)
    print(json.dumps(result, indent=1))
    for c in bad[:50]:
        print(f"\n#{c.id} {c.source} {c.mutations}\n  ours:   {c.ours[:3] or 'accept'}\n  server: "
              f"{(c.server or 'accept')[:600]} [{c.server_stage}]")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "summary.json").write_text(json.dumps(result, indent=1))
        with open(args.out / "disagreements.jsonl", "w") as fh:
            for c in bad:
                fh.write(json.dumps({"id": c.id, "source": c.source, "mutations": c.mutations, "ours": c.ours,
                                     "server": c.server, "stage": c.server_stage, "jobset": c.jobset}, default=str) + "\n")
    print(f"\n{len(bad)} disagreement(s) in {len(cases)} JobSets")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
