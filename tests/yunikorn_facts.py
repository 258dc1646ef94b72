"""What YuniKorn's k8shim parses from a pod, as facts: its constants, the TaskGroup struct, the checks of
GetTaskGroupsFromAnnotation, the order of GetApplicationIDFromPod, how GetSchedulingPolicyParam splits its
annotation and what GetPlaceholderResourceRequests skips.

No k8shim release can be had from the Go module proxy (tools/README-ground-truth.md, "YuniKorn"), so the facts
were read from k8shim's Go source at a tag (github.com/apache/yunikorn-k8shim, the files in SOURCES) and recorded
in tests/facts/yunikorn-k8shim.json by `python tools/record_yunikorn_facts.py GIT_DIR[@TAG]`. `extract` is the
reading; `recorded` the file the tests use; `facts()` also re-reads the source and compares when one is at hand
(a k8shim module in the Go module cache, or a clone named by KF2JOBSET_YUNIKORN_K8SHIM=GIT_DIR[@TAG])."""
from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from . import upstream

RECORDED = Path(__file__).resolve().parent / "facts" / "yunikorn-k8shim.json"
SOURCES = {"constants": "pkg/common/constants/constants.go", "amprotocol": "pkg/cache/amprotocol.go",
           "parser": "pkg/cache/utils.go", "utils": "pkg/common/utils/utils.go", "gang": "pkg/cache/gang_utils.go"}
DEFAULT_TAG = "v1.9.0"


def _newest(paths: list[Path]) -> Path | None:
    def key(p: Path):
        return tuple(int(x) for x in re.findall(r"\d+", p.name.split("@v", 1)[1])[:3])
    return max(paths, key=key, default=None)


def git_show(git_dir: str, rev: str, path: str) -> str:
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{rev}:{path}"], capture_output=True, text=True,
                          check=True, timeout=60).stdout


def source_from_clone(spec: str) -> tuple[dict, dict[str, str]]:
    """(provenance, file texts) of a k8shim clone `GIT_DIR[@TAG]`."""
    git_dir, _, tag = spec.partition("@")
    tag = tag or DEFAULT_TAG
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", f"{tag}^{{commit}}"], capture_output=True,
                            text=True, check=True, timeout=60).stdout.strip()
    return {"tag": tag, "commit": commit}, {k: git_show(git_dir, commit, v) for k, v in SOURCES.items()}


def source_at_hand() -> tuple[dict, dict[str, str]] | None:
    """k8shim's source from the Go module cache, else from KF2JOBSET_YUNIKORN_K8SHIM; None when neither."""
    for root in (upstream.module_cache(),):
        module = _newest([p for p in (root / "github.com" / "apache").glob("yunikorn-k8shim@v*")
                          if (p / SOURCES["parser"]).is_file()])
        if module:
            return {"tag": module.name.split("@", 1)[1]}, {k: (module / v).read_text() for k, v in SOURCES.items()}
    clone = os.environ.get("KF2JOBSET_YUNIKORN_K8SHIM")
    return source_from_clone(clone) if clone else None


def _resolve_constants(text: str, si: dict[str, str]) -> dict[str, str]:
    """k8shim's string constants, with `A + "b"` and siCommon.X (yunikorn-scheduler-interface) resolved."""
    raw = dict(re.findall(r'^\s*(?:const\s+)?(\w+)\s*=\s*([^\n]+)$', text, re.M))

    def value(expr: str, seen: frozenset) -> str | None:
        out = ""
        for p in (p.strip() for p in expr.split("//")[0].split("+")):
            if re.fullmatch(r'"[^"]*"', p):
                out += p[1:-1]
            elif p.startswith("siCommon.") and p[9:] in si:
                out += si[p[9:]]
            elif p in raw and p not in seen:
                v = value(raw[p], seen | {p})
                if v is None:
                    return None
                out += v
            else:
                return None
        return out

    return {k: v for k, v in ((k, value(e, frozenset({k}))) for k, e in raw.items()) if v is not None}


def extract(texts: dict[str, str], si: dict[str, str]) -> dict:
    """The facts the tests use, read from k8shim's files (SOURCES) and scheduler-interface's string constants."""
    constants = _resolve_constants(texts["constants"], si)
    body = texts["utils"].split("func GetApplicationIDFromPod", 1)[1].split("\nfunc ", 1)[0]
    order = [[m[0], constants[m[1]]] for m in re.findall(r"GetPod(Label|Annotation)Value\(pod, constants\.(\w+)\)", body)]
    order += [["Label", constants[k]] for k in re.findall(r"^\s*constants\.(\w+),$", body, re.M)]
    struct = re.search(r"type TaskGroup struct \{(.*?)\n\}", texts["amprotocol"], re.S).group(1)
    parser = texts["parser"].split("func GetTaskGroupsFromAnnotation", 1)[1].split("\nfunc ", 1)[0]
    policy = texts["gang"].split("func GetSchedulingPolicyParam", 1)[1].split("\nfunc ", 1)[0]
    placeholder = texts["gang"].split("func GetPlaceholderResourceRequests", 1)[1].split("\nfunc ", 1)[0]
    return {
        "constants": dict(sorted(constants.items())),
        "application_id_order": order,
        "task_group_fields": dict(re.findall(r"^\s*(\w+)\s+(\S+)", struct, re.M)),
        "task_group_checks": sorted([list(c) for c in set(re.findall(r"if taskGroup\.(\w+) (==|<|>|<=|>=|!=) ([^{]+?) \{", parser))]),
        # each parameter is KEY=VALUE, parameters split by the delimiter constant
        "policy_parameters_split": ("constants.SchedulingPolicyParamDelimiter" in policy and 'strings.Split(p, "=")' in policy),
        # a placeholder asks for every resource of minResource but one with an empty name
        "placeholder_skips_empty_resource_name": 'if k == "" {' in placeholder,
    }


def recorded() -> dict:
    return json.loads(RECORDED.read_text())


def facts() -> dict:
    """The recorded facts; when k8shim's source is at hand, re-read from it and required to be the same."""
    data = recorded()
    at_hand = source_at_hand()
    if at_hand is not None:
        provenance, texts = at_hand
        if provenance.get("tag") == data["source"]["tag"]:
            fresh = extract(texts, data["scheduler_interface_constants"])
            mine = {k: data[k] for k in fresh}
            assert fresh == mine, f"k8shim {provenance} is not what {RECORDED.name} recorded: re-record it"
    return data
