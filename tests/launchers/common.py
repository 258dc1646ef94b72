"""Converting a case the way a user does (the CLI), and reading what the launchers print."""
from __future__ import annotations

import re
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main

from .. import upstream
from .conftest import REPO
from .harness import ssh_secret

FIXTURES = REPO / "fixtures"


@dataclass
class Converted:
    name: str
    source: dict
    jobset: dict
    companions: list
    stderr: str

    @property
    def pod_spec(self):
        return {rj["name"]: rj["template"]["spec"]["template"]["spec"] for rj in self.jobset["spec"]["replicatedJobs"]}

    def secrets(self, tmp: Path) -> dict:
        """Every Secret the pods mount, made here (kf2jobset never writes key material)."""
        names = {v["secret"]["secretName"] for spec in self.pod_spec.values()
                 for v in spec.get("volumes") or [] if "secret" in v}
        data = ssh_secret(tmp) if names else {}
        return {n: data for n in names}


def fixture_args(case: Path) -> list[str]:
    f = case / "args"
    if not f.exists():
        return []
    return [a for a in f.read_text().splitlines() if a.strip() and not a.startswith("#")]


def as_v1(doc: dict) -> dict:
    """A job in an older apiVersion as the v1 job kf2jobset reads it as (upgrade.py); others unchanged."""
    from kf2jobset.mappings import convertible_mapping
    from kf2jobset.upgrade import upgrade

    mapping = convertible_mapping(doc.get("apiVersion"), doc.get("kind"))
    return upgrade(doc, mapping).doc if mapping and doc.get("apiVersion") in mapping.upgrade_from else doc


def convert(path: Path, args: list[str] = ()) -> Converted:
    result = CliRunner().invoke(main, ["convert", str(path), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    jobset = next(d for d in docs if d["kind"] == "JobSet")
    source = as_v1(next(d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict) and "spec" in d))
    return Converted(str(path), source, jobset, [d for d in docs if d is not jobset], result.stderr)


def mpi_cases() -> list:
    """(id, path, args) of every MPIJob fixture that converts, and of the corpus MPIJobs."""
    import pytest

    out = []
    for case in sorted(FIXTURES.glob("mpijob-*/*/expected.yaml")):
        case = case.parent
        args = fixture_args(case)
        if "--accept-mpi-ssh" not in args and "v1" in case.parent.name:
            args.append("--accept-mpi-ssh")
        out.append(pytest.param(case / "input.yaml", args, id=f"{case.parent.name}/{case.name}"))
    for name, f in upstream.corpus():
        text = f.read_text(errors="replace")
        if not name.endswith(".yaml") or "kind: MPIJob" not in text or "kind: Experiment" in text:
            continue
        out.append(pytest.param(f, ["--accept-mpi-ssh"], id="corpus/" + name, marks=[]))
    if upstream.corpus_absent():
        out.append(pytest.param(None, [], id="corpus", marks=pytest.mark.skip(reason=upstream.corpus_absent())))
    return out


# ------------------------------------------------------------------ MPI placement

# A rank that ends within milliseconds of its launch can make Open MPI 5's prterun wait for it forever
# (PRRTE 3.0.14 handles the exit before the launch: tests/e2e/programs/mpi_rank.sh); real ranks sit in
# MPI_Init longer than this
PROBE = ["/bin/sh", "-c", 'sleep 2; echo "KF2RANK rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-$PMIX_RANK}} host=$(hostname)"']
_RANK = re.compile(r"KF2RANK rank=(\d+) host=(\S+)")


def hostfile_hosts(text: str) -> list[tuple[str, int]]:
    """(pod hostname, slots) per hostfile line, in order: `host slots=N` (Open MPI) or `host:N` (hydra)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^(\S+)\s+slots=(\d+)$", line) or re.match(r"^([^:\s]+):(\d+)$", line)
        assert m, f"hostfile line not understood: {line!r}"
        out.append((m.group(1).split(".")[0], int(m.group(2))))
    return out


def check_placement(output: str, hosts: list[tuple[str, int]]) -> None:
    """Rank r runs on the hostfile line that holds slot r (lines filled in order, `slots` each)."""
    expected = {}
    r = 0
    for host, slots in hosts:
        for _ in range(slots):
            expected[r] = host
            r += 1
    got = {int(m.group(1)): m.group(2) for m in _RANK.finditer(output)}
    assert got, f"no rank reported; launcher output:\n{output[-3000:]}"
    assert got == expected, (
        f"ranks -> hosts {dict(sorted(got.items()))} but the hostfile says {expected}\n"
        f"per host: {Counter(got.values())} vs {Counter(expected.values())}\nlauncher output:\n{output[-3000:]}")


def tmpdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="kf2js-keys-"))
