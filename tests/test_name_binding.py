"""`renamed`: a converted JobSet whose name or namespace was edited away from those its name-bound literals were
written for (kf2jobset/checks/name_binding.py) fails `convert --check`, names each value and says what to do; `report`
and `convert` warn of it in the same words. A JobSet whose values all follow the name (a PyTorchJob's) passes
renamed and moved, and so does the same JobSet unrenamed. `convert --check -` checks a rendered stream: a
kustomize overlay's namePrefix/nameSuffix renames kf2jobset's companions but not the JobSet's reference to them.
"""
from __future__ import annotations

import json
import re
import subprocess

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.checks.name_binding import NAME_LITERALS_ANNOTATION, NAMED_FOR_ANNOTATION, renamed_jobsets

from .conftest import FIXTURES
from .jobset_edits import convert_cli, converted_in_place

GOLDENS = sorted(FIXTURES.rglob("expected.yaml"))


def _rename(text: str, old: str, new: str) -> str:
    """The JobSet's metadata.name edited by hand (its first `  name: old` line)."""
    assert f"\n  name: {old}\n" in text
    return text.replace(f"\n  name: {old}\n", f"\n  name: {new}\n", 1)


def _move(text: str, old: str | None, new: str) -> str:
    """Every object of the file moved to namespace `new` by hand (a namespace line added where there was none)."""
    if old is None:
        return re.sub(r"(?m)^metadata:\n", f"metadata:\n  namespace: {new}\n", text)
    assert f"\n  namespace: {old}\n" in text
    return text.replace(f"\n  namespace: {old}\n", f"\n  namespace: {new}\n")


# (fixture, flags, name, namespace in the manifest, the edit, what the line must say, the values it must name)
BROKEN = [
    ("mpijob-v2beta1/openmpi", [], "pi", None, lambda t: _rename(t, "pi", "pi-v2"),
     "name changed since conversion (pi -> pi-v2)", ["ConfigMap pi-mpi-hostfile (hostfile, discover_hosts.sh)"]),
    ("mpijob-v2beta1/mpich-namespace-domain", ["--cluster-domain=cluster.local"], "halo-mpich", "hpc",
     lambda t: _rename(t, "halo-mpich", "halo"), "name changed since conversion (halo-mpich -> halo)",
     ["ConfigMap halo-mpich-mpi-hostfile", "dnsConfig.searches of worker, launcher"]),
    ("mpijob-v2beta1/mpich-namespace-domain", ["--cluster-domain=cluster.local"], "halo-mpich", "hpc",
     lambda t: _move(t, "hpc", "hpc2"), "namespace changed since conversion (hpc -> hpc2)",
     ["ConfigMap halo-mpich-mpi-hostfile", "dnsConfig.searches of worker, launcher"]),
    ("mpijob-v2beta1/intel", [], "pi-intel", None, lambda t: _move(t, None, "hpc"),
     "namespace changed since conversion (default -> hpc)", ["dnsConfig.searches of worker, launcher"]),
    ("tfjob/ps-hosts-args", [], "wide-deep", "ads", lambda t: _rename(t, "wide-deep", "wide-deep-2"),
     "name changed since conversion (wide-deep -> wide-deep-2)", ["Services wide-deep-ps-0, wide-deep-ps-1"]),
    ("targets/trainjob/mpi-bundle", ["--target", "trainjob"], "hvd-bert", "nlp", lambda t: _move(t, "nlp", "nlp2"),
     "namespace changed since conversion (nlp -> nlp2)", ["ConfigMap hvd-bert-mpi-hostfile"]),
]
IDS = ["openmpi-renamed", "mpich-renamed", "mpich-moved", "intel-moved", "js066-renamed", "trainjob-moved"]


@pytest.mark.parametrize("golden", GOLDENS, ids=lambda p: str(p.parent.relative_to(FIXTURES)))
def test_no_false_alarm_and_a_record_only_where_something_is_name_bound(golden):
    text = golden.read_text()
    assert renamed_jobsets(text) == []
    try:
        objects = [o for o in yaml.safe_load_all(text) if isinstance(o, dict)]
    except yaml.YAMLError:
        # a template golden (placeholders PyYAML does not load): the false-alarm check above read it, which is
        # what holds for it; the record census below needs plain YAML
        return
    for jobset in (o for o in objects if o.get("kind") == "JobSet"):
        name = jobset["metadata"].get("name")
        ann = jobset["metadata"].get("annotations") or {}
        bound = []
        for c in objects:
            labels = (c.get("metadata") or {}).get("labels") or {}
            selector = (c.get("spec") or {}).get("selector") or {}
            if name and c.get("kind") == "ConfigMap" and labels.get("app.kubernetes.io/managed-by") == "kf2jobset" \
                    and labels.get("jobset.sigs.k8s.io/jobset-name") == name:
                bound.append(f"ConfigMap {c['metadata']['name']}")
            if name and c.get("kind") == "Service" and selector.get("jobset.sigs.k8s.io/jobset-name") == name:
                bound.append(f"{c['metadata']['name']}")
        for rj in jobset["spec"]["replicatedJobs"]:
            searches = (rj["template"]["spec"]["template"]["spec"].get("dnsConfig") or {}).get("searches") or []
            if name and any(s.startswith(f"{name}.") for s in searches):
                bound.append("dnsConfig.searches")
        bound += _gang_names(jobset["spec"]["replicatedJobs"], objects, name)
        assert bool(bound) == (NAMED_FOR_ANNOTATION in ann), (name, bound, ann)
        for value in bound:
            assert value in ann[NAME_LITERALS_ANNOTATION], (value, ann)
    for trainjob in (o for o in objects if o.get("kind") == "TrainJob"):  # Trainer names its JobSet after it
        name = trainjob["metadata"].get("name")
        hostfile = [c for c in objects if c.get("kind") == "ConfigMap" and name and
                    ((c.get("metadata") or {}).get("labels") or {}).get("jobset.sigs.k8s.io/jobset-name") == name]
        runtime = [o for o in objects if o.get("kind") == "TrainingRuntime"
                   and o["metadata"]["name"] == trainjob["spec"]["runtimeRef"]["name"]]
        rjobs = [rj for r in runtime for rj in r["spec"]["template"]["spec"]["replicatedJobs"]] + \
            [rj for p in trainjob["spec"].get("runtimePatches") or []
             for rj in p.get("trainingRuntimeSpec", {}).get("template", {}).get("spec", {}).get("replicatedJobs") or []]
        gang = _gang_names(rjobs, objects, name)
        ann = trainjob["metadata"].get("annotations") or {}
        assert bool(hostfile or gang) == (NAMED_FOR_ANNOTATION in ann), name
        for value in gang:
            assert value in ann[NAME_LITERALS_ANNOTATION], (value, ann)


def _gang_names(rjobs: list, objects: list, name: str | None) -> list[str]:
    """The gang's names that are the job's: a PodGroup beside it named after it that its pods name, the YuniKorn
    application id written as its name."""
    pods = [(rj.get("template") or {}).get("spec", {}).get("template", {}).get("metadata") or {} for rj in rjobs]
    group = [c for c in objects if c.get("kind") == "PodGroup" and name and c["metadata"]["name"] == name]
    out = [f"PodGroup {name} ({key}" for key, where in (("scheduling.k8s.io/group-name", "annotations"),
                                                       ("scheduling.x-k8s.io/pod-group", "labels"))
           if group and any((p.get(where) or {}).get(key) == name for p in pods)]
    return out + [f"yunikorn.apache.org/app-id {name} of" for _ in [0]
                  if name and any((p.get("labels") or {}).get("yunikorn.apache.org/app-id") == name for p in pods)]


@pytest.fixture(params=BROKEN, ids=IDS)
def broken(request, tmp_path):
    """(repo, file, flags, the --check line, values): a job converted in place, then renamed or moved by hand."""
    case, flags, name, namespace, edit, said, values = request.param
    work, text = converted_in_place(tmp_path, (FIXTURES / case / "input.yaml").read_text(), *flags)
    assert f"{NAMED_FOR_ANNOTATION}: name={name}" in text
    unedited = convert_cli("--check", *flags, work)  # the same JobSet unrenamed passes
    assert unedited.exit_code == exitcodes.OK and "renamed" not in unedited.stdout, unedited.stdout + unedited.stderr
    path = work / "job.yaml"
    path.write_text(edit(text))
    check = convert_cli("--check", *flags, path)
    assert check.exit_code == exitcodes.FINDINGS, check.stdout + check.stderr
    (line,) = check.stdout.splitlines()
    assert line.startswith(f"{path}:") and ": renamed: " in line and said in line, line
    for value in values:
        assert value in line, (value, line)
    assert "convert the v1 job" in line and "again" in line, line
    assert "1 left: 1 renamed" in check.stderr, check.stderr
    return work, path, flags, line


def test_check_of_the_tree_lists_it_too(broken):
    work, path, flags, line = broken
    res = convert_cli("--check", *flags, work)
    assert res.exit_code == exitcodes.FINDINGS and line.split(": ", 1)[1] in res.stdout, res.stdout + res.stderr


def test_report_and_convert_warn_in_the_same_words(broken):
    work, path, flags, line = broken
    res = CliRunner().invoke(main, ["report", *flags, str(path)])
    assert res.exit_code == exitcodes.OK, res.stdout + res.stderr
    assert f"warning: {line}" in res.stdout.splitlines(), res.stdout
    assert "1 renamed (warning)" in res.stdout, res.stdout
    data = json.loads(CliRunner().invoke(main, ["report", *flags, "--format", "json", str(path)]).stdout)
    (w,) = data["files"][0]["warnings"]
    assert w["category"] == "renamed" and line == f"{path}:{w['line']}: {w['object']}: renamed: {w['message']}"
    before = path.read_text()
    for mode in ([], ["--in-place"]):
        res = convert_cli(*mode, *flags, path)
        assert res.exit_code == exitcodes.OK and path.read_text() == before, res.stderr
        assert f"kf2jobset: warning: {line}" in res.stderr.splitlines(), res.stderr


def test_the_advice_holds_converting_again_under_the_new_name_passes(tmp_path):
    src = (FIXTURES / "mpijob-v2beta1/openmpi/input.yaml").read_text()
    again = CliRunner().invoke(main, ["convert", "--name", "pi-v2", "-"], input=src)
    assert again.exit_code == exitcodes.OK, again.stderr
    assert "pi-v2-worker-0-0.pi-v2" in again.stdout and f"{NAMED_FOR_ANNOTATION}: name=pi-v2" in again.stdout
    generated = CliRunner().invoke(main, ["convert", "--mpi-hostfile", "generated", "-"], input=src)
    assert generated.exit_code == exitcodes.OK and NAMED_FOR_ANNOTATION not in generated.stdout, generated.stderr
    for text in (again.stdout, _rename(generated.stdout, "pi", "pi-v2")):
        res = CliRunner().invoke(main, ["convert", "--check", "-"], input=text)
        assert res.exit_code == exitcodes.OK and "renamed" not in res.stdout, res.stdout + res.stderr


@pytest.mark.parametrize("edit", [lambda t: _rename(t, "resnet-ddp", "resnet-ddp-2"), lambda t: _move(t, "research", "x")],
                         ids=["renamed", "moved"])
def test_a_jobset_whose_values_all_follow_its_name_passes(tmp_path, edit):
    work, text = converted_in_place(tmp_path, (FIXTURES / "pytorchjob/master-workers/input.yaml").read_text())
    assert NAMED_FOR_ANNOTATION not in text and "$(KF2JOBSET_JOBSET_NAME)" in text
    (work / "job.yaml").write_text(edit(text))
    res = convert_cli("--check", work)
    assert res.exit_code == exitcodes.OK and res.stdout == "", res.stdout + res.stderr


def test_short_hostnames_follow_a_move(tmp_path):
    """openmpi's manifest has no namespace: its hostfile names short hosts, which resolve in any namespace."""
    work, text = converted_in_place(tmp_path, (FIXTURES / "mpijob-v2beta1/openmpi/input.yaml").read_text())
    assert f"{NAMED_FOR_ANNOTATION}: name=pi\n" in text
    (work / "job.yaml").write_text(_move(text, None, "elsewhere"))
    res = convert_cli("--check", work)
    assert res.exit_code == exitcodes.OK, res.stdout + res.stderr


def test_check_reads_stdin(tmp_path):
    v1 = (FIXTURES / "pytorchjob/master-workers/input.yaml").read_text()
    res = CliRunner().invoke(main, ["convert", "--check", "-"], input=v1)
    assert res.exit_code == exitcodes.FINDINGS, res.stdout + res.stderr
    assert res.stdout.startswith("-:") and ": to convert: " in res.stdout, res.stdout
    converted = CliRunner().invoke(main, ["convert", "-"], input=v1).stdout
    res = CliRunner().invoke(main, ["convert", "--check", "-"], input=converted)
    assert res.exit_code == exitcodes.OK and res.stdout == "", res.stdout + res.stderr
    mpi = CliRunner().invoke(main, ["convert", "-"], input=(FIXTURES / "mpijob-v2beta1/openmpi/input.yaml").read_text())
    res = CliRunner().invoke(main, ["convert", "--check", "-"], input=_rename(mpi.stdout, "pi", "pi-v2"))
    assert res.exit_code == exitcodes.FINDINGS and ": renamed: " in res.stdout, res.stdout + res.stderr
    for writes in (["--in-place"], ["--out-dir", str(tmp_path / "out")]):
        res = CliRunner().invoke(main, ["convert", *writes, "-"], input=v1)
        assert res.exit_code == exitcodes.USAGE and "stdin (-) has no file to rewrite" in res.stderr, res.stderr


def test_a_kustomize_overlay_renaming_the_companions_is_caught_in_its_build(kustomize, tmp_path):
    base, overlay = tmp_path / "base", tmp_path / "stg"
    base.mkdir(), overlay.mkdir()
    for case, flags, name in [("mpijob-v2beta1/mpich-namespace-domain", ["--cluster-domain=cluster.local"], "mpich"),
                              ("tfjob/ps-hosts-args", [], "tf")]:
        res = CliRunner().invoke(main, ["convert", *flags, "-"], input=(FIXTURES / case / "input.yaml").read_text())
        assert res.exit_code == exitcodes.OK, res.stderr
        (base / f"{name}.yaml").write_text(res.stdout)
    (base / "kustomization.yaml").write_text("resources: [mpich.yaml, tf.yaml]\n")
    (overlay / "kustomization.yaml").write_text("resources: [../base]\nnamespace: staging\nnameSuffix: -stg\n")
    built = subprocess.run([kustomize, "build", str(overlay)], capture_output=True, text=True, check=True).stdout
    res = CliRunner().invoke(main, ["convert", "--check", "-"], input=built)
    assert res.exit_code == exitcodes.FINDINGS, res.stdout + res.stderr
    mpich, tf = res.stdout.splitlines()
    assert "JobSet halo-mpich-stg" in mpich and "name halo-mpich -> halo-mpich-stg, namespace hpc -> staging" in mpich
    assert "renamed ConfigMap halo-mpich-mpi-hostfile to halo-mpich-mpi-hostfile-stg, but not the JobSet's volume" in mpich
    assert "dnsConfig.searches" in mpich and "patch the listed values in the overlay" in mpich, mpich
    assert "JobSet wide-deep-stg" in tf and "renamed Service wide-deep-ps-0 to wide-deep-ps-0-stg" in tf, tf
    # the base itself, unrenamed, passes
    res = subprocess.run([kustomize, "build", str(base)], capture_output=True, text=True, check=True)
    assert CliRunner().invoke(main, ["convert", "--check", "-"], input=res.stdout).exit_code == exitcodes.OK


def test_the_record_edited_alone_does_not_pass(tmp_path):
    """Renaming the JobSet and its record together, but not the values: the values still name the old JobSet."""
    work, text = converted_in_place(tmp_path, (FIXTURES / "mpijob-v2beta1/mpich-namespace-domain/input.yaml").read_text(),
                                    "--cluster-domain=cluster.local")
    edited = _rename(text, "halo-mpich", "halo").replace(f"{NAMED_FOR_ANNOTATION}: name=halo-mpich,",
                                                         f"{NAMED_FOR_ANNOTATION}: name=halo,")
    (work / "job.yaml").write_text(edited)
    res = convert_cli("--check", work)
    assert res.exit_code == exitcodes.FINDINGS, res.stdout + res.stderr
    (line,) = res.stdout.splitlines()
    assert f"renamed: {NAMED_FOR_ANNOTATION} records name=halo,namespace=hpc, but " in line, line
    assert "ConfigMap halo-mpich-mpi-hostfile" in line and "dnsConfig.searches of worker (halo-mpich.hpc.svc" in line, line


def test_a_jobset_converted_before_records_is_read_from_its_hostfile_configmap(tmp_path):
    """No record (converted by an older kf2jobset): the hostfile ConfigMap beside the JobSet, which the JobSet
    mounts, says the name (its jobset-name label) and the namespace (its hostnames) it was written for."""
    src = (FIXTURES / "mpijob-v2beta1/mpich-namespace-domain/input.yaml").read_text()
    out = CliRunner().invoke(main, ["convert", "--cluster-domain=cluster.local", "-"], input=src).stdout
    legacy = re.sub(r"\n    kf2jobset\.dev/name(d-for|-literals): [^\n]*", "", out)
    assert NAMED_FOR_ANNOTATION not in legacy and "kf2jobset.dev/source" in legacy
    assert CliRunner().invoke(main, ["convert", "--check", "-"], input=legacy).exit_code == exitcodes.OK
    for edited, said in [(_rename(legacy, "halo-mpich", "halo"), "name changed since conversion (halo-mpich -> halo)"),
                         (_move(legacy, "hpc", "hpc2"), "namespace changed since conversion (hpc -> hpc2)")]:
        res = CliRunner().invoke(main, ["convert", "--check", "-"], input=edited)
        assert res.exit_code == exitcodes.FINDINGS and said in res.stdout, res.stdout + res.stderr
        assert "ConfigMap halo-mpich-mpi-hostfile (" in res.stdout, res.stdout
