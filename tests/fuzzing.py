"""Fuzzing support shared by tests/test_fuzz.py and tools/fuzz.py: a seeded mutator over the
fixtures (and the upstream corpus of tests/upstream.py when its modules are there) and the oracles every
input must pass (no traceback, no hang, no invalid JobSet, no job skipped in silence).

Oracles, for one input and one set of options, run through the real CLI (click, in process):
- `traceback`: anything but a typed kf2jobset error escapes (exit 70, or an exception);
- `hang`: the run takes longer than the time limit (10 s);
- `invalid-jobset`: exit 0 and a JobSet (or companion ConfigMap) written that our validator or
  the real JobSet CRD schema rejects;
- `skipped-job`: exit 0 and a Kubeflow job document (a job kind in a kubeflow.org group, any
  version) left in the output, or not counted by `--check`;
- `stdout-on-failure` / `stdout-not-yaml`: output on stdout with a non-zero exit, or stdout that
  does not load as YAML.
"""
from __future__ import annotations

import json
import os
import random
import re
import signal
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
# the outside fuzz run's reproducers mutated from our fixtures (tests/fuzz-findings/README.md); a directory
# of more of that run's reproducers (e.g. those mutated from upstream files) may be added with
# KF2JOBSET_FUZZ_FINDINGS
FINDINGS = [Path(__file__).resolve().parent / "fuzz-findings",
            *([Path(os.environ["KF2JOBSET_FUZZ_FINDINGS"])] if os.environ.get("KF2JOBSET_FUZZ_FINDINGS") else [])]
TIME_LIMIT = 10.0

# The oracle names the kinds itself (not from kf2jobset.mappings): a kind missing from the mappings would
# otherwise pass through without the oracle noticing. MXJob: training-operator up to v1.8.1.
JOB_KINDS = ("TFJob", "PyTorchJob", "MPIJob", "XGBoostJob", "PaddleJob", "JAXJob", "MXJob")


class Timeout(BaseException):
    """Not an Exception: the code under test must not be able to swallow it."""


@contextmanager
def time_limit(seconds: float):
    def handler(signum, frame):
        raise Timeout()

    # A hang is `seconds` of this process's own CPU (ITIMER_PROF), so that a loaded machine (other
    # test suites on 2 cores) does not turn a slow input into a "hang"; a wall-clock backstop at six
    # times that still catches a process that blocks without computing.
    old_alarm = signal.signal(signal.SIGALRM, handler)
    old_prof = signal.signal(signal.SIGPROF, handler)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, seconds * 6)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGALRM, old_alarm)
        signal.signal(signal.SIGPROF, old_prof)


def is_kubeflow_job(obj) -> bool:
    """A job kind in a kubeflow.org group, whatever the version and stray spaces."""
    if not isinstance(obj, dict):
        return False
    kind, api = obj.get("kind"), obj.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api, str) or kind.strip() not in JOB_KINDS:
        return False
    group = api.strip().split("/", 1)[0].strip()
    return group.startswith("kubeflow.org") or group.endswith(".kubeflow.org")


def options_to_args(opts: dict) -> list[str]:
    args = []
    for key, value in sorted(opts.items()):
        flag = "--" + key.replace("_", "-")
        if value is True:
            args.append(flag)
        elif value in (False, None):
            continue
        else:
            args += [flag, str(value)]
    return args


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float
    violations: list[str] = field(default_factory=list)


_CRD = None


def crd_validator():
    global _CRD
    if _CRD is None:
        from jsonschema import Draft7Validator
        from ruamel.yaml import YAML

        from tests.conftest import strict_structural

        from tests import upstream

        crd = YAML(typ="safe").load(upstream.jobset_crd().read_text())
        _CRD = Draft7Validator(strict_structural(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]))
    return _CRD


# keys whose placeholder a check fills with a number: replica counts and the fixtures' resource quantities
_COUNTED = r"replicas|cpu|memory|nvidia\.com/gpu|rdma/\w+"


def _load_output(text: str):
    import yaml

    class Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # unknown local tags pass through documents we do not touch
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: loader.construct_scalar(node)
                                 if isinstance(node, yaml.ScalarNode) else None)
    # global tags Kubernetes' reader (yaml.v2) keeps as plain values: `!!python/name:x value` is "value"
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: loader.construct_scalar(node)
                                 if isinstance(node, yaml.ScalarNode) else None)
    # yaml.v2 reads ints with Go's strconv.ParseInt(s, 0, 64): `0o17` is 15 there, a string to PyYAML
    import re

    Loader.add_implicit_resolver("tag:yaml.org,2002:int", re.compile(r"^[-+]?0o[0-7_]+$"), list("-+0"))
    Loader.add_constructor("tag:yaml.org,2002:int", lambda loader, node: int(loader.construct_scalar(node).replace("_", ""), 0)
                           if re.fullmatch(r"[-+]?0o[0-7_]+", loader.construct_scalar(node))
                           else yaml.constructor.SafeConstructor.construct_yaml_int(loader, node))
    return [d for d in yaml.load_all(text, Loader=Loader) if d is not None]


def _run_cli(args: list[str], time_limit_s: float):
    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    runner = CliRunner()
    start = time.monotonic()
    try:
        with time_limit(time_limit_s):
            result = runner.invoke(main, args, catch_exceptions=True)
    except Timeout:
        return None, time.monotonic() - start
    return result, time.monotonic() - start


def run_case(text: str, filename: str, opts: dict, *, check_mode: bool = False,
             time_limit_s: float = TIME_LIMIT, use_crd: bool = True) -> Outcome:
    """Convert `text` (saved as `filename`) with the CLI and apply every oracle."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, os.path.basename(filename))
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        args = ["convert", path] + options_to_args(opts) + (["--check", "--jobs", "1"] if check_mode else [])
        result, seconds = _run_cli(args, time_limit_s)
    if result is None:
        return Outcome(-1, "", "", seconds, [f"hang: more than {time_limit_s:.0f} s of CPU (or {6 * time_limit_s:.0f} s wall)"])
    out = Outcome(result.exit_code, result.stdout, result.stderr, seconds)
    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        import traceback

        tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-3:])
        out.violations.append(f"traceback: {type(exc).__name__}: {exc!s:.200} {tb}")
        return out
    if result.exit_code == 70 or "Traceback" in result.stderr or "RecursionError" in result.stderr \
            or "maximum recursion" in result.stderr:
        out.violations.append(f"traceback: exit {result.exit_code}: {result.stderr[-300:]}")
    if check_mode:
        _check_mode_oracle(text, out)
        return out
    if result.exit_code != 0:
        if result.stdout:
            out.violations.append(f"stdout-on-failure: exit {result.exit_code} with {len(result.stdout)} bytes on stdout")
        return out
    stdout = result.stdout
    if "TPL001" in result.stderr:
        # The output is an envsubst template, and kf2jobset said so: check it as it will be applied.
        import re

        from .templates import fill

        # a replica count or a quantity carried as a placeholder is filled with a count, the rest with a word
        counts = {m.group(1): "3" for m in re.finditer(
            "(?:" + _COUNTED + r"""): ["']?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?["']?\s""", stdout)}
        stdout = fill(stdout, counts, default="a")
    if "{{" in stdout and "{{" in text:
        # a Go text/template or Jinja file (kf2jobset/sources/brace_templates.py) stays one: check it as it renders, a
        # replica count with a count and the rest with a word (what the file's program would fill in unknown)
        import re

        counted = "((?:" + _COUNTED + r"): )\"?\{\{[^}\n]*\}\}\"?"  # counts and quantities
        stdout = re.sub(r"\{\{[^}\n]*\}\}", "a", re.sub(counted, r"\g<1>3", stdout))
    try:
        docs = _load_output(stdout)
    except Exception as exc:  # noqa: BLE001 - any loader error means not YAML
        out.violations.append(f"stdout-not-yaml: {type(exc).__name__}: {str(exc)[:200]}")
        return out
    for doc in docs:
        _check_output_doc(doc, opts, out, use_crd)
    return out


def _input_jobs(text: str) -> int | None:
    """How many Kubeflow job documents the input holds, read leniently (None: unreadable)."""
    import yaml

    try:
        docs = list(yaml.load_all(text, Loader=yaml.CSafeLoader))
    except Exception:  # noqa: BLE001
        return None
    return sum(1 for d in docs if is_kubeflow_job(d))


def _check_mode_oracle(text: str, out: Outcome) -> None:
    if out.code == 0 and (_input_jobs(text) or 0) > 0:
        out.violations.append("skipped-job: --check exited 0 on a file holding a Kubeflow job")


def _check_output_doc(doc, opts: dict, out: Outcome, use_crd: bool) -> None:
    if not isinstance(doc, dict):
        return
    if is_kubeflow_job(doc):
        out.violations.append(f"skipped-job: {doc.get('apiVersion')!r}/{doc.get('kind')!r} left in the output")
        return
    kind = doc.get("kind")
    if kind == "List" and isinstance(doc.get("items"), list):
        for item in doc["items"]:
            _check_output_doc(item, opts, out, use_crd)
        return
    if kind == "Experiment" and opts.get("katib") and str(doc.get("apiVersion", "")).strip().startswith("kubeflow.org"):
        trial = ((doc.get("spec") or {}).get("trialTemplate") or {}) if isinstance(doc.get("spec"), dict) else {}
        trial = trial.get("trialSpec") if isinstance(trial, dict) else None
        if is_kubeflow_job(trial):
            out.violations.append("skipped-job: Katib trialSpec left as a Kubeflow job")
        elif isinstance(trial, dict) and trial.get("kind") == "JobSet" and "kf2jobset.dev/source" in str(trial.get("metadata")):
            trial = json.loads(json.dumps(trial, default=str))
            trial.setdefault("metadata", {}).setdefault("name", "trial-name")
            _check_jobset(trial, opts, out, use_crd)
        return
    annotations = ((doc.get("metadata") or {}).get("annotations") or {}) if isinstance(doc.get("metadata"), dict) else {}
    labels = ((doc.get("metadata") or {}).get("labels") or {}) if isinstance(doc.get("metadata"), dict) else {}
    if kind == "JobSet" and isinstance(annotations, dict) and "kf2jobset.dev/source" in annotations:
        _check_jobset(doc, opts, out, use_crd)
    elif kind == "ConfigMap" and isinstance(labels, dict) and labels.get("app.kubernetes.io/managed-by") == "kf2jobset":
        from kf2jobset.k8s.podrules import check_configmap

        for p in check_configmap(doc):
            out.violations.append(f"invalid-jobset: companion ConfigMap: {p}")


def _check_jobset(doc: dict, opts: dict, out: Outcome, use_crd: bool) -> None:
    from kf2jobset.options import parse_version
    from kf2jobset.k8s.validate import check_jobset

    plain = json.loads(json.dumps(doc, default=str))
    meta = plain.setdefault("metadata", {}) if isinstance(plain.get("metadata"), dict) or "metadata" not in plain else {}
    if not meta.get("name") and not meta.get("generateName"):
        meta["name"] = "t" * 20  # a template (no name): kf2jobset checks it with a 20-character stand-in
    version = parse_version(opts["jobset_version"]) if opts.get("jobset_version") else (0, 12)
    for p in check_jobset(plain, version=version):
        out.violations.append(f"invalid-jobset: ours: {p}")
    if use_crd:
        # the API server drops null values of non-nullable fields before validating a custom resource
        for err in crd_validator().iter_errors(_drop_nulls(plain)):
            where = ".".join(str(x) for x in err.absolute_path)
            out.violations.append(f"invalid-jobset: CRD: {where}: {err.message[:200]}")
            break


def _drop_nulls(node):
    if isinstance(node, dict):
        return {k: _drop_nulls(v) for k, v in node.items() if v is not None}
    if isinstance(node, list):
        return [_drop_nulls(v) for v in node]
    return node


# ---------------------------------------------------------------------------------------------
# The mutator: seeded, over the fixtures (and the corpus), textual, YAML-level, structural and
# semantic mutations.

def seed_files(include_corpus: bool = True) -> list[Path]:
    seeds = sorted(FIXTURES.glob("*/*/input.yaml"))
    if include_corpus:
        from tests import upstream

        seeds += [f.path for f in upstream.corpus()]
    return seeds


OPTION_CHOICES = [
    {}, {"katib": True}, {"accept_mpi_ssh": True, "katib": True}, {"scheduler": "kueue"},
    {"scheduler": "volcano"}, {"keep_kubeflow_labels": True}, {"mpi_hostfile": "generated", "accept_mpi_ssh": True},
    {"mpi_hostfile": "configmap"}, {"jobset_version": "v0.7"}, {"jobset_version": "v0.8"},
    {"cluster_domain": "cluster.local"}, {"subdomain": "rn"}, {"name": "renamed"}, {"ssh_secret": "keys"},
]

_WEIRD_SCALARS = [
    "-1", "0", "2147483648", "9223372036854775808", "1e400", "-0.5", "''", '""', "null", "~", "true", "yes",
    "on", "010", "0x1F", ".inf", ".nan", "'Bad_Name'", "UPPER", "a b", "'x' ", "[]", "{}", "[1, 2]",
    "{a: 1}", "!!binary aGVsbG8=", "2001-12-14t21:59:43.10-05:00", "'" + "a" * 300 + "'", "1.5Gi", "-2Gi",
    "100m", "1k", "1.5.5", "'$(VAR)'", "'../x'", "/", "'a:b'", "'-a'", "'a_b'", "'a/b/c'", "0o17",
]
_KEYS = ["replicas", "name", "image", "containers", "env", "ports", "volumes", "volumeMounts", "labels",
         "annotations", "namespace", "restartPolicy", "backoffLimit", "activeDeadlineSeconds", "containerPort",
         "mountPath", "value", "valueFrom", "resources", "limits", "requests", "memory", "cpu", "generateName",
         "apiVersion", "kind", "spec", "template", "metadata", "runPolicy", "ttlSecondsAfterFinished",
         "slotsPerWorker", "elasticPolicy", "minReplicas", "maxReplicas", "trialTemplate", "trialSpec",
         "primaryPodLabels", "hostname", "subdomain", "schedulingPolicy", "minAvailable", "queue", "command", "args"]


class Mutator:
    def __init__(self, seed: int, seeds: list[Path]):
        self.rng = random.Random(seed)
        self.seeds = [(p, p.read_text(encoding="utf-8", errors="replace")) for p in seeds]

    def case(self) -> tuple[str, str, dict, str]:
        """(text, filename, options, description)"""
        rng = self.rng
        path, text = rng.choice(self.seeds)
        ops = []
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
            op = rng.choice(self.OPS)
            try:
                text = op(self, text)
            except Exception:  # noqa: BLE001 - a mutation that does not apply to this text
                continue
            ops.append(op.__name__.lstrip("_"))
        opts = dict(rng.choice(OPTION_CHOICES))
        if rng.random() < 0.1:
            opts.update(rng.choice(OPTION_CHOICES))
        name = "input.json" if path.suffix == ".json" and rng.random() < 0.8 else "input.yaml"
        return text, name, opts, f"{path.name}:{'+'.join(ops)}"

    # --- textual
    def _delete_line(self, text):
        lines = text.splitlines(keepends=True)
        del lines[self.rng.randrange(len(lines))]
        return "".join(lines)

    def _dup_line(self, text):
        lines = text.splitlines(keepends=True)
        i = self.rng.randrange(len(lines))
        lines.insert(i, lines[i])
        return "".join(lines)

    def _insert_byte(self, text):
        i = self.rng.randrange(len(text) + 1)
        return text[:i] + self.rng.choice(":-{}[]&*!|>'\"#%@`,?\t\n \x00\ufeff\u2028é") + text[i:]

    def _flip_char(self, text):
        i = self.rng.randrange(len(text))
        return text[:i] + chr(self.rng.randrange(32, 127)) + text[i + 1:]

    def _truncate(self, text):
        return text[: self.rng.randrange(len(text))]

    def _indent(self, text):
        lines = text.splitlines(keepends=True)
        i = self.rng.randrange(len(lines))
        lines[i] = (" " * self.rng.choice((1, 2, 4)) + lines[i]) if self.rng.random() < 0.5 else lines[i].lstrip(" ")
        return "".join(lines)

    # --- scalar values and keys
    def _scalar(self, text):
        matches = list(re.finditer(r"(?m)^(\s*(?:- )?[\w./\"-]+:)[ \t]+(\S[^\n#]*)$", text))
        m = self.rng.choice(matches)
        return text[: m.start(2)] + self.rng.choice(_WEIRD_SCALARS) + text[m.end(2):]

    def _key_scalar(self, text):
        """A weird value for a field that matters."""
        key = self.rng.choice(_KEYS)
        matches = list(re.finditer(rf"(?m)^(\s*(?:- )?\"?{key}\"?:)[ \t]+(\S[^\n#]*)$", text))
        m = self.rng.choice(matches)
        return text[: m.start(2)] + self.rng.choice(_WEIRD_SCALARS) + text[m.end(2):]

    def _replicas(self, text):
        m = self.rng.choice(list(re.finditer(r"(?m)^(\s*replicas:)[ \t]+(\S+)", text)))
        value = self.rng.choice(["1000000", "4000000000", "100001", "99999", "5000", "-3", "0", "1e9"])
        return text[: m.start(2)] + value + text[m.end(2):]

    def _rename_key(self, text):
        matches = list(re.finditer(r"(?m)^(\s*(?:- )?)([\w.-]+):", text))
        m = self.rng.choice(matches)
        new = self.rng.choice(_KEYS + ["? [a, b]", "1", "true", "null", "'a b'", "x" * 70, m.group(2)])
        return text[: m.start(2)] + new + text[m.end(2):]

    def _retype(self, text):
        """A block mapping/sequence value replaced by a scalar, or a scalar by a block."""
        matches = list(re.finditer(r"(?m)^(\s*(?:- )?[\w.\"/-]+:)[ \t]*$", text))
        m = self.rng.choice(matches)
        return text[: m.end(1)] + " " + self.rng.choice(_WEIRD_SCALARS) + "\n" + _drop_block(text, m)

    def _listwrap(self, text):
        matches = list(re.finditer(r"(?m)^(\s*)([\w.\"/-]+):[ \t]+(\S[^\n#]*)$", text))
        m = self.rng.choice(matches)
        return text[: m.start(3)] + "[" + m.group(3) + "]" + text[m.end(3):]

    def _nest(self, text):
        depth = self.rng.choice((50, 200, 1000, 5000, 20000))
        matches = list(re.finditer(r"(?m)^(\s*(?:- )?[\w.\"/-]+:)[ \t]+(\S[^\n#]*)$", text))
        m = self.rng.choice(matches)
        value = "[" * depth + "1" + "]" * depth if self.rng.random() < 0.5 else "{a: " * depth + "1" + "}" * depth
        return text[: m.start(2)] + value + text[m.end(2):]

    # --- YAML features
    def _tag(self, text):
        matches = list(re.finditer(r"(?m)^(\s*(?:- )?[\w.\"/-]+:)[ \t]+(\S[^\n#]*)$", text))
        m = self.rng.choice(matches)
        tag = self.rng.choice(["!!str", "!!int", "!!bool", "!!float", "!!null", "!!binary", "!!timestamp", "!!set",
                               "!!omap", "!!python/name:os.system", "!custom", "!!map", "!!seq"])
        return text[: m.start(2)] + tag + " " + m.group(2) + text[m.end(2):]

    def _anchor_alias(self, text):
        matches = list(re.finditer(r"(?m)^(\s*(?:- )?[\w.\"/-]+:)[ \t]+(\S[^\n#]*)$", text))
        a, b = self.rng.choice(matches), self.rng.choice(matches)
        if a.start() > b.start():
            a, b = b, a
        if a.start() == b.start():
            return text
        return (text[: a.start(2)] + "&anc " + a.group(2) + text[a.end(2): b.start(2)] + "*anc" + text[b.end(2):])

    def _merge(self, text):
        matches = list(re.finditer(r"(?m)^(\s*)(template|spec|metadata|resources|securityContext):[ \t]*$", text))
        m = self.rng.choice(matches)
        ind = m.group(1) + "  "
        extra = self.rng.choice(["{x: 1}", "{replicas: 3}", "{containers: []}", "{memory: 1Gi}", "{template: {}}"])
        return text[: m.end()] + f"\n{ind}<<: {extra}" + text[m.end():]

    def _bomb(self, text):
        levels = self.rng.choice((3, 5, 6, 8, 9))
        width = self.rng.choice((5, 9, 10))
        lines = ["a0: &a0 [lol]"]
        for i in range(1, levels + 1):
            lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
        bomb = "\n".join("    " + line for line in lines)
        return re.sub(r"(?m)^metadata:[ \t]*$", "metadata:\n  annotations:\n    bomb:\n" + bomb.replace("    ", "      "),
                      text, count=1) if self.rng.random() < 0.5 else "\n".join(lines) + "\n---\n" + text

    def _recursive(self, text):
        return re.sub(r"(?m)^metadata:[ \t]*$", "metadata: &m\n  self: *m", text, count=1)

    def _complex_key(self, text):
        matches = list(re.finditer(r"(?m)^(\s*)([\w.-]+):", text))
        m = self.rng.choice(matches)
        return text[: m.start(2)] + self.rng.choice(["? [a, b]\n" + m.group(1) + "", "[x]", "{k: v}"]) + text[m.end(2):]

    def _api_version(self, text):
        new = self.rng.choice(["kubeflow.org/v1beta1", "kubeflow.org/v1alpha1", "kubeflow.org/v2beta1", "'kubeflow.org/v1 '",
                               "' kubeflow.org/v1'", "kubeflow.org/v3", "kubeflow.org", "Kubeflow.org/v1", "kubeflow.org/v1#x",
                               "!!str kubeflow.org/v1", "jobset.x-k8s.io/v1alpha2"])
        return re.sub(r"(?m)^(\s*apiVersion:)[ \t]+kubeflow\.org/\S+", lambda m: m.group(1) + " " + new, text, count=1)

    def _kind_style(self, text):
        m = self.rng.choice(list(re.finditer(r"(?m)^(\s*)kind:[ \t]+(\w+)", text)))
        styles = [f"kind:\n{m.group(1)}  {m.group(2)}", f"kind: !!str {m.group(2)}", f"kind: '{m.group(2)} '",
                  f"kind: &k {m.group(2)}", f'"kind": "{m.group(2)}"', f"kind: >-\n{m.group(1)}  {m.group(2)}"]
        return text[: m.start() + len(m.group(1))] + self.rng.choice(styles) + text[m.end():]

    def _flow_doc(self, text):
        import yaml

        if "&" in text:  # json.dumps would expand an alias bomb into megabytes of plain text
            raise ValueError("anchors")
        docs = list(yaml.safe_load_all(text))
        return "\n".join("--- " + json.dumps(d) for d in docs if d is not None) + "\n"

    # --- semantic
    def _pod_field(self, text):
        m = self.rng.choice(list(re.finditer(r"(?m)^(\s*)- name: (\S+)\n\1  image:", text)))
        ind = m.group(1) + "  "
        extra = self.rng.choice([
            f"env:\n{ind}- name: A\n{ind}  value: x\n{ind}  valueFrom: {{fieldRef: {{fieldPath: metadata.name}}}}",
            f"env:\n{ind}- name: 'bad name'\n{ind}  value: x",
            f"env:\n{ind}- name: A\n{ind}  valueFrom: {{}}",
            f"ports:\n{ind}- name: Bad_Port\n{ind}  containerPort: 80",
            f"ports:\n{ind}- containerPort: 70000",
            f"ports:\n{ind}- name: {'p' * 16}\n{ind}  containerPort: 80",
            f"volumeMounts:\n{ind}- name: nope\n{ind}  mountPath: /x",
            f"volumeMounts:\n{ind}- name: nope\n{ind}  mountPath: ''",
            f"resources:\n{ind}  limits:\n{ind}    memory: 1.5.5",
            f"resources:\n{ind}  limits:\n{ind}    cpu: -1",
            f"resources:\n{ind}  limits:\n{ind}    nvidia.com/gpu: 1.5",
            f"resources:\n{ind}  requests:\n{ind}    cpu: '2'\n{ind}  limits:\n{ind}    cpu: '1'",
            f"resources:\n{ind}  limits:\n{ind}    bad_name: 1",
            "imagePullPolicy: Sometimes",
            "terminationMessagePolicy: Bad",
        ])
        return text[: m.end() - len("image:")] + extra + "\n" + ind + "image:" + text[m.end():]

    def _meta_field(self, text):
        m = re.search(r"(?m)^metadata:[ \t]*$", text)
        if not m:
            return text
        extra = self.rng.choice([
            "  labels:\n    'bad key!': x", "  labels:\n    a: 'bad value!'", "  labels:\n    a: " + "v" * 64,
            "  namespace: Bad_NS", "  namespace: " + "n" * 64, "  annotations:\n    big: '" + "x" * 262200 + "'",
            "  annotations:\n    'x/y/z': a", "  generateName: Bad_", "  generateName: " + "g" * 70,
            "  labels:\n    " + "k" * 64 + ": v", "  labels:\n    " + "d" * 254 + "/k: v",
        ])
        return text[: m.end()] + "\n" + extra + text[m.end():]

    def _run_policy(self, text):
        m = re.search(r"(?m)^spec:[ \t]*$", text)
        if not m:
            return text
        field_ = self.rng.choice(["backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"])
        value = self.rng.choice(["-1", "0", "2147483648", "9223372036854775808", "5"])
        return text[: m.end()] + f"\n  runPolicy:\n    {field_}: {value}" + text[m.end():]

    def _pod_template_field(self, text):
        m = self.rng.choice(list(re.finditer(r"(?m)^(\s*)containers:[ \t]*$", text)))
        ind = m.group(1)
        extra = self.rng.choice([
            "hostname: Bad_Host", "subdomain: Bad_Sub", f"volumes:\n{ind}- name: Bad_Vol\n{ind}  emptyDir: {{}}",
            f"volumes:\n{ind}- name: v\n{ind}  emptyDir: {{}}\n{ind}  configMap: {{name: c}}",
            "activeDeadlineSeconds: -1", "terminationGracePeriodSeconds: -5", "priority: 5",
            "restartPolicy: Always", "dnsPolicy: Weird", "serviceAccountName: Bad_SA",
            f"nodeSelector:\n{ind}  'bad key!': x",
        ])
        return text[: m.start()] + ind + extra + "\n" + text[m.start():]

    OPS = [_delete_line, _dup_line, _insert_byte, _flip_char, _truncate, _indent, _scalar, _key_scalar, _key_scalar,
           _replicas, _rename_key, _retype, _listwrap, _nest, _tag, _anchor_alias, _merge, _bomb, _recursive,
           _complex_key, _api_version, _api_version, _kind_style, _flow_doc, _pod_field, _pod_field, _meta_field,
           _meta_field, _run_policy, _pod_template_field, _pod_template_field]


def _drop_block(text: str, m) -> str:
    """The text after the line of `m`, without the more-indented block below it."""
    indent = len(m.group(1)) - len(m.group(1).lstrip())
    rest = text[m.end():].split("\n")[1:]
    i = 0
    while i < len(rest) and (not rest[i].strip() or len(rest[i]) - len(rest[i].lstrip()) > indent
                             or (rest[i].lstrip().startswith("- ") and len(rest[i]) - len(rest[i].lstrip()) == indent)):
        i += 1
    return "\n".join(rest[i:])


def finding_cases() -> list[tuple[str, dict, Path]]:
    """Every reproducer in the FINDINGS directories: (input path, its options, its JSON)."""
    out = []
    for folder in FINDINGS:
        for meta_path in sorted(folder.glob("*.json.json")) + sorted(folder.glob("*.yaml.json")):
            meta = json.loads(meta_path.read_text())
            out.append((folder / meta["input"], meta.get("opts") or {}, meta_path))
    return sorted(out)


def fuzz(count: int, seed: int, *, include_corpus: bool = True, budget_s: float | None = None,
         use_crd: bool = True, check_every: int = 7, progress=None):
    """Run `count` mutated inputs (or until `budget_s`); returns (runs, failures, seconds)."""
    mutator = Mutator(seed, seed_files(include_corpus))
    failures = []
    start = time.monotonic()
    n = 0
    while n < count and (budget_s is None or time.monotonic() - start < budget_s):
        text, name, opts, desc = mutator.case()
        check = n % check_every == check_every - 1
        if check:
            opts = {k: v for k, v in opts.items() if k != "name"}
        outcome = run_case(text, name, opts, check_mode=check, use_crd=use_crd)
        n += 1
        if outcome.violations:
            failures.append((n, desc, name, opts, check, text, outcome))
        if progress:
            progress(n, failures, time.monotonic() - start)
    return n, failures, time.monotonic() - start
