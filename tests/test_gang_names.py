"""`renamed` for the gang's names (kf2jobset/checks/name_binding.py): the PodGroup `--scheduler volcano` /
`scheduler-plugins` names after the job, which the pods name (Volcano's scheduling.k8s.io/group-name annotation,
scheduler-plugins' scheduling.x-k8s.io/pod-group label), and the YuniKorn application id `--scheduler yunikorn`
writes as the job's name. A PodGroup renamed without the pods' reference (a kustomize namePrefix, a hand edit
of both documents) or left in another namespace than the JobSet's is listed; so is a JobSet renamed under its
gang's names (a copy beside the converted one shares its PodGroup), and a YuniKorn JobSet renamed or moved
(k8shim keys applications by id alone, in every namespace). A JobSet moved with its PodGroup passes.
"""
from __future__ import annotations

import re
import subprocess

import pytest
from click.testing import CliRunner

from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.checks.name_binding import NAME_LITERALS_ANNOTATION, NAMED_FOR_ANNOTATION

from .conftest import FIXTURES
from .jobset_edits import convert_cli, converted_in_place

VOLCANO = ("scheduling/volcano", ["--scheduler=volcano"], "queued", "scheduling.k8s.io/group-name")
COSCHEDULING = ("scheduling/scheduler-plugins", ["--scheduler=scheduler-plugins"], "llm-finetune",
                "scheduling.x-k8s.io/pod-group")
YUNIKORN = ("scheduling/yunikorn-pytorchjob", ["--scheduler=yunikorn"], "bert-pretrain", "yunikorn.apache.org/app-id")


def _convert(case: str, flags: list[str]) -> str:
    res = CliRunner().invoke(main, ["convert", *flags, "-"], input=(FIXTURES / case / "input.yaml").read_text())
    assert res.exit_code == exitcodes.OK, res.stderr
    return res.stdout


def _check(text: str):
    return CliRunner().invoke(main, ["convert", "--check", "-"], input=text)


def _rename_all(text: str, old: str, new: str) -> str:
    """Every document's metadata.name `old` (the JobSet's and its PodGroup's) edited by hand."""
    assert text.count(f"\n  name: {old}\n") == 2, text
    return text.replace(f"\n  name: {old}\n", f"\n  name: {new}\n")


def _documents(text: str) -> list[str]:
    return re.split(r"(?m)^---\n", text)


def _set_namespace(doc: str, namespace: str) -> str:
    """One document moved to `namespace` (its namespace line replaced, or added)."""
    if re.search(r"(?m)^  namespace: ", doc):
        return re.sub(r"(?m)^  namespace: .*$", f"  namespace: {namespace}", doc, count=1)
    return re.sub(r"(?m)^metadata:\n", f"metadata:\n  namespace: {namespace}\n", doc, count=1)


@pytest.mark.parametrize("case, flags, name, key", [VOLCANO, COSCHEDULING], ids=["volcano", "scheduler-plugins"])
def test_the_podgroup_is_recorded_and_both_documents_renamed_by_hand_are_listed(case, flags, name, key):
    out = _convert(case, flags)
    assert f"{NAMED_FOR_ANNOTATION}: name={name}\n" in out
    assert f"{NAME_LITERALS_ANNOTATION}: PodGroup {name} ({key} of master, worker) [name]" in out
    assert _check(out).exit_code == exitcodes.OK
    res = _check(_rename_all(out, name, f"{name}-v2"))
    assert res.exit_code == exitcodes.FINDINGS, res.stdout + res.stderr
    (line,) = res.stdout.splitlines()
    assert f": renamed: name changed since conversion ({name} -> {name}-v2), but PodGroup {name} ({key}" in line, line
    assert f"the PodGroup is now {name}-v2, but the pods' {key} still names {name}" in line, line
    assert f"again with --name {name}-v2" in line and f"set the pods' {key} to {name}-v2" in line, line


@pytest.mark.parametrize("case, flags, name, key", [VOLCANO, COSCHEDULING], ids=["volcano", "scheduler-plugins"])
def test_a_jobset_moved_without_its_podgroup_is_listed_and_with_it_passes(case, flags, name, key):
    out = _convert(case, flags)
    jobset, group = _documents(out)
    res = _check(_set_namespace(jobset, "prod") + "---\n" + _set_namespace(group, "staging"))
    assert res.exit_code == exitcodes.FINDINGS, res.stdout + res.stderr
    (line,) = res.stdout.splitlines()
    assert f"renamed: PodGroup {name} is in namespace staging, the JobSet in prod (its pods' {key} names a PodGroup " \
           "of their own namespace)" in line, line
    assert f"move PodGroup {name} to namespace prod with the JobSet" in line, line
    both = _check(_set_namespace(jobset, "prod") + "---\n" + _set_namespace(group, "prod"))
    assert both.exit_code == exitcodes.OK and both.stdout == "", both.stdout
    # the PodGroup kept in another file: nothing in this stream to compare the reference with
    alone = _check(_set_namespace(jobset, "prod"))
    assert alone.exit_code == exitcodes.OK and alone.stdout == "", alone.stdout


def test_a_jobset_renamed_alone_shares_its_podgroup_and_converting_again_passes(tmp_path):
    case, flags, name, key = VOLCANO
    work, text = converted_in_place(tmp_path, (FIXTURES / case / "input.yaml").read_text(), *flags)
    path = work / "job.yaml"
    path.write_text(text.replace(f"\n  name: {name}\n", f"\n  name: {name}-v2\n", 1))
    res = convert_cli("--check", *flags, path)
    assert res.exit_code == exitcodes.FINDINGS, res.stdout + res.stderr
    (line,) = res.stdout.splitlines()
    assert f"but PodGroup {name} ({key} of master, worker) still name the old one (a copy running beside the JobSet " \
           "converted shares its PodGroup" in line and "the PodGroup is now" not in line, line
    again = CliRunner().invoke(main, ["convert", *flags, "--name", f"{name}-v2", "-"],
                               input=(FIXTURES / case / "input.yaml").read_text())
    assert f"scheduling.k8s.io/group-name: {name}-v2" in again.stdout
    assert _check(again.stdout).exit_code == exitcodes.OK


def test_the_podgroup_record_edited_with_the_name_alone_does_not_pass():
    case, flags, name, key = VOLCANO
    out = _rename_all(_convert(case, flags), name, "other").replace(f"{NAMED_FOR_ANNOTATION}: name={name}",
                                                                    f"{NAMED_FOR_ANNOTATION}: name=other")
    res = _check(out)
    assert res.exit_code == exitcodes.FINDINGS, res.stdout + res.stderr
    (line,) = res.stdout.splitlines()
    assert f"renamed: {NAMED_FOR_ANNOTATION} records name=other, but PodGroup {name} ({key}" in line, line
    assert f"the PodGroup is now other, but the pods' {key} still names {name}" in line, line


def test_a_yunikorn_application_id_renamed_or_moved_is_listed():
    case, flags, name, key = YUNIKORN
    out = _convert(case, flags)
    assert f"{NAMED_FOR_ANNOTATION}: name={name},namespace=nlp\n" in out
    assert f"{NAME_LITERALS_ANNOTATION}: {key} {name} of master, worker [name, namespace]" in out
    renamed = _check(out.replace(f"\n  name: {name}\n", "\n  name: bert-v2\n", 1))
    assert renamed.exit_code == exitcodes.FINDINGS, renamed.stdout + renamed.stderr
    assert f"name changed since conversion ({name} -> bert-v2), but {key} {name} of master, worker" in renamed.stdout
    assert "YuniKorn keys an application by its id alone, in every namespace" in renamed.stdout
    assert "again with --name bert-v2" in renamed.stdout, renamed.stdout
    moved = _check(out.replace("\n  namespace: nlp\n", "\n  namespace: nlp-b\n", 1))
    assert moved.exit_code == exitcodes.FINDINGS, moved.stdout + moved.stderr
    (line,) = moved.stdout.splitlines()
    assert f"namespace changed since conversion (nlp -> nlp-b), but {key} {name}" in line, line
    # converting again in the new namespace writes the same id: only an id of its own helps
    assert "again in namespace" not in line and f"set {key} on every pod template to an id of this JobSet's own" in line


def test_a_trainjob_on_its_own_runtime_records_the_gang_names_of_its_pods():
    """--trainer-runtime per-job: the pods are the TrainingRuntime's, which the check reads by runtimeRef."""
    out = _convert("targets/trainjob/yunikorn-gang", ["--target", "trainjob", "--scheduler", "yunikorn",
                                                      "--trainer-runtime", "per-job"])
    assert f"{NAMED_FOR_ANNOTATION}: name=llama-ft,namespace=research" in out
    res = _check(out.replace("\n  name: llama-ft\n", "\n  name: llama-v2\n", 1))
    assert res.exit_code == exitcodes.FINDINGS and "TrainJob llama-v2" in res.stdout, res.stdout + res.stderr
    assert "but yunikorn.apache.org/app-id llama-ft of master, worker still name the old one" in res.stdout
    # on kf2jobset's bundle the id rides in the TrainJob's runtimePatches
    text = "".join(line for line in (FIXTURES / "targets/trainjob/gang-yunikorn-tfjob/input.yaml").read_text()
                   .splitlines(keepends=True) if "applicationId" not in line)
    out = CliRunner().invoke(main, ["convert", "--target", "trainjob", "--scheduler", "yunikorn", "-"], input=text).stdout
    assert "kind: ClusterTrainingRuntime" in out and "yunikorn.apache.org/app-id mnist-yk of worker [name, namespace]" in out
    res = _check(out.replace("\n  name: mnist-yk\n", "\n  name: mnist-v2\n", 1))
    assert res.exit_code == exitcodes.FINDINGS and "TrainJob mnist-v2" in res.stdout, res.stdout + res.stderr
    # the companion PodGroup Trainer's coscheduling would count otherwise (TJ051) is the job's too
    text = (FIXTURES / "targets/trainjob/scheduler-plugins-gang/input.yaml").read_text()
    text = text.replace("scheduleTimeoutSeconds: 120", "scheduleTimeoutSeconds: 120\n      minAvailable: 1")
    res = CliRunner().invoke(main, ["convert", "--target", "trainjob", "--scheduler", "scheduler-plugins",
                                    "--trainer-runtime", "per-job", "-"], input=text)
    assert res.exit_code == exitcodes.OK and "kind: PodGroup" in res.stdout, res.stderr
    assert "PodGroup ddp-2node (scheduling.x-k8s.io/pod-group of master, worker) [name]" in res.stdout, res.stdout
    check = _check(_rename_all(res.stdout, "ddp-2node", "ddp-2node-b"))
    assert check.exit_code == exitcodes.FINDINGS, check.stdout + check.stderr
    assert "the PodGroup is now ddp-2node-b, but the pods' scheduling.x-k8s.io/pod-group still names ddp-2node" \
        in check.stdout, check.stdout


def test_a_kustomize_overlay_renaming_the_podgroup_is_caught_in_its_build(kustomize, tmp_path):
    base, overlay = tmp_path / "base", tmp_path / "prod"
    base.mkdir(), overlay.mkdir()
    for case, flags, name, _key in (VOLCANO, COSCHEDULING, YUNIKORN):
        (base / f"{name}.yaml").write_text(_convert(case, flags))
    (base / "kustomization.yaml").write_text("resources: [queued.yaml, llm-finetune.yaml, bert-pretrain.yaml]\n")
    (overlay / "kustomization.yaml").write_text("resources: [../base]\nnamePrefix: prod-\n")
    built = subprocess.run([kustomize, "build", str(overlay)], capture_output=True, text=True, check=True).stdout
    assert "\n  name: prod-queued\n" in built and "scheduling.k8s.io/group-name: queued\n" in built  # kustomize's doing
    res = _check(built)
    assert res.exit_code == exitcodes.FINDINGS, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 3, lines
    for _case, _flags, name, key in (VOLCANO, COSCHEDULING):
        (line,) = [x for x in lines if f"JobSet prod-{name} " in x]
        assert f"the PodGroup is now prod-{name}, but the pods' {key} still names {name}" in line, line
    (line,) = [x for x in lines if "JobSet prod-bert-pretrain " in x]
    assert "yunikorn.apache.org/app-id bert-pretrain of master, worker" in line, line
    # the base itself, unrenamed, passes
    res = subprocess.run([kustomize, "build", str(base)], capture_output=True, text=True, check=True)
    assert _check(res.stdout).exit_code == exitcodes.OK


@pytest.mark.parametrize("case, flags, name, key", [VOLCANO, COSCHEDULING], ids=["volcano", "scheduler-plugins"])
def test_a_jobset_converted_before_the_gang_was_recorded_is_read_from_its_pods(case, flags, name, key):
    """No record (an older kf2jobset): the PodGroup the pods name is compared with the PodGroups of the stream."""
    legacy = re.sub(r"\n    kf2jobset\.dev/name(d-for|-literals): [^\n]*", "", _convert(case, flags))
    assert NAMED_FOR_ANNOTATION not in legacy and "kf2jobset.dev/source" in legacy
    assert _check(legacy).exit_code == exitcodes.OK
    assert _check(legacy.replace(f"\n  name: {name}\n", f"\n  name: {name}-v2\n", 1)).exit_code == exitcodes.OK
    res = _check(_rename_all(legacy, name, f"{name}-v2"))
    assert res.exit_code == exitcodes.FINDINGS, res.stdout + res.stderr
    assert f"renamed: the PodGroup is now {name}-v2, but the pods' {key} still names {name}" in res.stdout, res.stdout
    jobset, group = _documents(legacy)
    res = _check(_set_namespace(jobset, "prod") + "---\n" + _set_namespace(group, "staging"))
    assert res.exit_code == exitcodes.FINDINGS and f"PodGroup {name} is in namespace staging" in res.stdout, res.stdout
