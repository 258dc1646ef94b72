"""Every rule kf2jobset can refuse a v1 job with has a refusing fixture, or a reason here why none can exist.

The inventory is read from the code (not typed by hand): every `Problem(...)`, `_problem(...)` and
`problem_at(...)` in the modules a v1 job passes through, with the rule id it is built with, and every
`raise InvalidJobError/UnsupportedError/RejectedJobSetError(...)` there. A refusal without a literal
rule id fails this test, so a new rule cannot slip in untested. The fixtures are every
`fixtures/*/*/expected-error.txt` (tests/test_golden.py keeps them true); tests/e2e/test_refusals.py
sends each of them through the real v1 world and holds kf2jobset's wording ("inherited", the exit
code) to what that world did.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from .conftest import FIXTURES

PACKAGE = Path(__file__).resolve().parent.parent / "kf2jobset"
# The modules between a v1 document and a JobSet: parse -> plan -> emit -> validate, the object and
# pod rules, the framework profiles and the document dispatcher.
MODULES = ("core/parse.py", "text/k8syaml.py", "k8s/objectrules.py", "k8s/podrules.py", "k8s/validate.py", "core/convert.py",
           "core/document_routing.py", "sources/katib_trials.py", "core/emit.py",
           "schedulers/*.py", "core/plan.py", "upgrade/*.py", "sources/envsubst.py", "sources/brace_templates.py", "frameworks/*.py")
BUILDERS = ("Problem", "_problem", "problem_at", "require_name")
# builders called as methods (self.require_name: a scheduler refusing a job with no name), rule= by keyword
METHOD_BUILDERS = ("require_name",)
REFUSALS = ("InvalidJobError", "UnsupportedError", "RejectedJobSetError")

_SCHEMA_FIRST = ("the schema check runs first and refuses a {what} [schema] (fixtures/errors/wrong-type, "
                 "duplicate-user-env show that class); these pod rules run only on well-typed documents")
_KF2JOBSET_WRITES = ("kf2jobset writes this JobSet field itself, from values other rules already hold valid; "
                     "tests/test_properties.py converts generated jobs of every kind and asserts check_jobset finds nothing")

# rule id -> why no v1 job can reach it (checked: every key is in the inventory and has no fixture)
NO_FIXTURE: dict[str, str] = {
    "gang-min-resources": "the schema check refuses a resource amount that is not a quantity before a gang sums "
                          "the pods' resources; the sum refuses only an amount it cannot read",
    "completion-mode": "kf2jobset writes every child Job's completionMode (Indexed) itself",
    "indexed-limit": "kf2jobset writes completions = parallelism = 1 on every child Job",
    "coordinator": "kf2jobset never writes spec.coordinator",
    "image": "a container without an image is refused at parse first ([containers], fixtures/errors/no-image "
             "style cases in tests/test_golden.py)",
    "rjob-name": "replicatedJob names are the lower-cased replica types; a type the child Job name or label "
                 "cannot carry is refused at parse as inherited first (replica-type-name), and one that can "
                 "converts (a leading digit, e.g. 2ndEval: accepted by the real JobSet admission, "
                 "tools/validator_vs_apiserver.py)",
    "labels": _SCHEMA_FIRST.format(what="labels field that is not a map"),
    "annotations": _SCHEMA_FIRST.format(what="annotations field that is not a map"),
    "annotation-value": _SCHEMA_FIRST.format(what="non-string annotation value"),
    "metadata": _SCHEMA_FIRST.format(what="metadata that is not a map"),
    "container": _SCHEMA_FIRST.format(what="container that is not a map"),
    "yaml": "the YAML reader refuses a complex (sequence or mapping) key before conversion, as invalid YAML "
            "(fixtures/errors/complex-key); this rule guards documents handed to convert_document in memory",
    "nesting": "only a document nested deeper than Python's recursion limit reaches it; the reader refuses "
               "more than 100 levels first (yamlio.MAX_DEPTH, tests/test_fuzz.py)",
    "profile": "a mapping names a framework profile that is missing or incomplete: a bug in kf2jobset's own "
               "data, never a property of a job (tests/test_toy_kind.py)",
    "not-a-job": "convert_document hands convert_job only documents is_job() accepts",
    "katib-companions": "a Katib Experiment, not a v1 job: the v1 world has no Katib; "
                        "tests/test_golden.py's katib cases and tests/test_repo.py cover Experiments",
    "configmap-name": "the only companion ConfigMap is <job>-mpi-hostfile, from a job name the v1 rules "
                      "already hold to 63 characters",
    "configmap-key": "the companion ConfigMap's keys are kf2jobset's own (hostfile, discover_hosts.sh)",
    "configmap-data": "the companion ConfigMap's values are strings kf2jobset writes",
    "configmap-size": "a hostfile over 1 MiB needs thousands of MPI workers (parse caps a job at 10,000 pods); "
                      "a fixture would have the e2e create thousands of pods",
    "jobset-version": "kf2jobset writes only what the target --jobset-version has (plan.py: startupPolicy "
                      "instead of dependsOn before v0.8); " + _KF2JOBSET_WRITES,
    "managed-by": "runPolicy.managedBy values the v1 webhook allows are valid JobSet managedBy values; others "
                  "are converted as the releases that ran them did, with JS080 naming them",
    "unique-rjob": "replicatedJob names are the replica types lower-cased, and parse refuses keys that "
                   "differ only in case [replica-type]",
    "group-name": _KF2JOBSET_WRITES,
    "pod-count": "parse caps a job at 10,000 pods [replicas], far below 2^31",
    "job-name-length": "kf2jobset writes Indexed Jobs with completions, whose pod names (pod-name-length, "
                       "fixtures/errors/name-too-long) are always the tighter limit",
    "depends-on-first": _KF2JOBSET_WRITES,
    "depends-on-order": _KF2JOBSET_WRITES,
    "startup-vs-depends-on": _KF2JOBSET_WRITES,
    "success-target": _KF2JOBSET_WRITES,
    "failure-rule-name": _KF2JOBSET_WRITES,
    "failure-target": _KF2JOBSET_WRITES,
    "failure-reason": _KF2JOBSET_WRITES,
    "feature-gate": _KF2JOBSET_WRITES,
    "job-restart-policy": "a v1 restartPolicy Always becomes OnFailure (JS020), ExitCode becomes Never plus a "
                          "podFailurePolicy; " + _KF2JOBSET_WRITES,
    "pod-failure-policy": _KF2JOBSET_WRITES,
    "indexed-completions": _KF2JOBSET_WRITES,
}

_RULE_MARK = re.compile(r" \[([A-Za-z][\w-]*)\](?= \(hint: |$)", re.M)


def _rule_param(tree: ast.Module, folder: Path = PACKAGE) -> dict[str, int | None]:
    """Position of the `rule` parameter of each builder defined in a module (Problem: 2), or imported
    into it from a sibling module (podrules.py builds with objectrules.py's `problem_at`)."""
    out: dict[str, int | None] = {"Problem": 2, **dict.fromkeys(METHOD_BUILDERS)}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in BUILDERS:
            names = [a.arg for a in node.args.args]
            out[node.name] = names.index("rule") if "rule" in names else None
        elif isinstance(node, ast.ImportFrom) and node.level == 1 and node.module \
                and any(a.name in BUILDERS and a.name != "Problem" for a in node.names):
            source = _rule_param(ast.parse((folder / f"{node.module.replace('.', '/')}.py").read_text()), folder)
            out.update({a.name: source[a.name] for a in node.names if a.name in source and a.name != "Problem"})
    return out


def _rules_in(path: Path) -> tuple[dict[str, list[str]], list[str]]:
    """{rule id: [where]} and the refusals built without a literal rule id."""
    tree = ast.parse(path.read_text())
    positions = _rule_param(tree, path.parent)
    found: dict[str, list[str]] = {}
    unnamed: list[str] = []
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node

    def enclosing(node, kind):
        while id(node) in parents:
            node = parents[id(node)]
            if isinstance(node, kind):
                yield node

    where = lambda node: f"{path.relative_to(PACKAGE.parent)}:{node.lineno}"  # noqa: E731
    # module-level string constants (RULE = "envsubst") count as literals
    constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)
                 and isinstance(n.value.value, str) for t in n.targets if isinstance(t, ast.Name)}
    for node in ast.walk(tree):
        name = _called(node)
        if name is None:
            continue
        if name in REFUSALS and node.args and isinstance(node.args[0], (ast.Constant, ast.JoinedStr)):
            unnamed.append(f"{where(node)}: {name} with a bare message")
            continue
        if name not in BUILDERS or name not in positions:
            continue
        arg = next((k.value for k in node.keywords if k.arg == "rule"), None)
        pos = positions[name]
        if arg is None and pos is not None and len(node.args) > pos:
            arg = node.args[pos]
        ids, problem = _rule_ids(arg, node, name, constants, enclosing)
        if problem is not None:
            unnamed.append(f"{where(node)}: {problem}")
        for rule in ids:
            found.setdefault(rule, []).append(where(node))
    return found, unnamed


def _called(node) -> str | None:
    """The name a call calls (a refusal, a builder or a builder method), None for any other node."""
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Attribute) and node.func.attr in METHOD_BUILDERS:
        return node.func.attr
    if isinstance(node.func, ast.Name):
        return node.func.id
    return None


def _rule_ids(arg, node, name: str, constants: dict, enclosing) -> tuple[list, str | None]:
    """The rule ids a builder call's `rule` argument names, or why this test cannot read them."""
    if arg is None or (isinstance(arg, ast.Constant) and arg.value is None):
        return [], f"{name}(...) without a rule id"
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return [arg.value], None
    if isinstance(arg, ast.Attribute) and arg.attr == "rule":
        return [], None  # an existing problem re-located or re-worded: its rule id was counted where it was made
    if isinstance(arg, ast.Name) and arg.id in constants:
        return [constants[arg.id]], None
    if isinstance(arg, ast.Name):
        loop = next((f for f in enclosing(node, ast.For) if isinstance(f.target, ast.Name) and f.target.id == arg.id), None)
        func = next(enclosing(node, ast.FunctionDef), None)
        if loop is not None and isinstance(loop.iter, ast.Tuple) and all(isinstance(e, ast.Constant) for e in loop.iter.elts):
            return [e.value for e in loop.iter.elts], None
        if func is not None and func.name in BUILDERS and arg.id in [a.arg for a in func.args.args]:
            return [], None  # the builder passing its own parameter on
        return [], f"rule id {arg.id!r} is not a literal this test can read"
    return [], f"rule id {ast.unparse(arg)!r} is not a literal this test can read"


def refusing_rules() -> tuple[dict[str, list[str]], list[str]]:
    rules: dict[str, list[str]] = {}
    unnamed: list[str] = []
    for pattern in MODULES:
        for path in sorted(PACKAGE.glob(pattern)):
            found, bad = _rules_in(path)
            for rule, places in found.items():
                rules.setdefault(rule, []).extend(places)
            unnamed += bad
    return rules, unnamed


def fixture_rules() -> dict[str, list[str]]:
    """rule id -> the refusing fixtures whose expected error names it."""
    out: dict[str, list[str]] = {}
    for err in sorted(FIXTURES.glob("*/*/expected-error.txt")):
        for rule in _RULE_MARK.findall(err.read_text()):
            out.setdefault(rule, []).append(f"{err.parent.parent.name}/{err.parent.name}")
    return out


def test_every_refusal_has_a_rule_id():
    _, unnamed = refusing_rules()
    assert not unnamed, "refusals without a rule id (give each a rule= so it can be inventoried):\n" + "\n".join(unnamed)


def test_the_inventory_is_read_from_the_code():
    rules, _ = refusing_rules()
    # rules of each stage, so a scan that silently finds nothing fails
    for rule in ("schema", "replica-type", "containers", "volume-name", "env-name", "pod-name-length", "mpi-exec-to-ssh"):
        assert rule in rules, f"{rule} not found by the scan of {', '.join(MODULES)}"


def test_every_refusing_rule_has_a_fixture_or_a_reason():
    rules, _ = refusing_rules()
    fixtures = fixture_rules()
    missing = sorted(r for r in rules if r not in fixtures and r not in NO_FIXTURE)
    assert not missing, ("refusing rules with no fixture under fixtures/errors/ (add one: input.yaml, then "
                         "KF2JOBSET_UPDATE_GOLDEN=1 pytest tests/test_golden.py) and no reason in NO_FIXTURE:\n"
                         + "\n".join(f"  {r}: {', '.join(rules[r])}" for r in missing))
    stale = sorted(r for r in NO_FIXTURE if r not in rules)
    assert not stale, f"NO_FIXTURE names rules the code no longer has: {stale}"
    covered = sorted(r for r in NO_FIXTURE if r in fixtures)
    assert not covered, f"NO_FIXTURE says these cannot be reached, but fixtures reach them: {[(r, fixtures[r]) for r in covered]}"
    # the targets' own refusals (a TrainJob's: tests/test_target_trainjob.py) may be named by fixtures too
    targets = {r for path in sorted(PACKAGE.glob("targets/*.py")) for r in _rules_in(path)[0]}
    unknown = sorted(r for r in fixtures if r not in rules and r not in targets)
    assert not unknown, f"fixtures name rule ids the code does not have: {[(r, fixtures[r]) for r in unknown]}"
