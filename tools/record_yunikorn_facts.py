"""Record what YuniKorn's k8shim parses from a pod (tests/yunikorn_facts.py) from its Go source at a tag, into
tests/facts/yunikorn-k8shim.json, which tests/test_yunikorn_k8shim.py holds kf2jobset's YuniKorn fields against.

    python tools/record_yunikorn_facts.py K8SHIM_GIT_DIR[@TAG] SCHEDULER_INTERFACE_GIT_DIR[@TAG] [--check]

No k8shim release comes from the Go module proxy (tools/README-ground-truth.md), so the source is a clone;
scheduler-interface's tag is the one k8shim's go.mod requires (its constants give DomainYuniKorn)."""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests import yunikorn_facts  # noqa: E402

SI_CONSTANTS = "lib/go/common/constants.go"


def record(k8shim: str, interface: str) -> dict:
    provenance, texts = yunikorn_facts.source_from_clone(k8shim)
    git_dir, _, tag = interface.partition("@")
    si_text = yunikorn_facts.git_show(git_dir, tag or "HEAD", SI_CONSTANTS)
    si = dict(re.findall(r'^\s*(\w+)\s*=\s*"([^"]*)"', si_text, re.M))
    used = {k: si[k] for k in sorted(si) if f"siCommon.{k}" in texts["constants"]}
    data = {"source": {"module": "github.com/apache/yunikorn-k8shim", **provenance, "files": yunikorn_facts.SOURCES,
                       "scheduler_interface": {"module": "github.com/apache/yunikorn-scheduler-interface",
                                               "rev": tag or "HEAD", "file": SI_CONSTANTS}},
            "scheduler_interface_constants": used}
    data.update(yunikorn_facts.extract(texts, used))
    return data


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("k8shim")
    ap.add_argument("scheduler_interface")
    ap.add_argument("--check", action="store_true", help="compare with the recorded file instead of writing it")
    args = ap.parse_args(argv)
    data = record(args.k8shim, args.scheduler_interface)
    text = json.dumps(data, indent=1) + "\n"
    if args.check:
        same = yunikorn_facts.RECORDED.read_text() == text
        print("recorded facts are k8shim's" if same else "recorded facts differ: re-record")
        return 0 if same else 1
    yunikorn_facts.RECORDED.write_text(text)
    print(f"wrote {yunikorn_facts.RECORDED.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
