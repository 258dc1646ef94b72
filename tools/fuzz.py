"""Long fuzz run for local use: seeded mutations of fixtures/ and the upstream corpus
(tests/upstream.py) through the real CLI, with the oracles of tests/fuzzing.py (no traceback, no hang
> 10 s, no invalid JobSet with exit 0, no Kubeflow job silently left, no stdout on failure).

    python tools/fuzz.py --count 100000 --seed 1 [--no-crd] [--out fuzz-failures/]

Prints progress every 1,000 inputs and a summary; failing inputs are written to --out.
Exit 1 if any oracle failed."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tests.fuzzing import fuzz  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-crd", action="store_true", help="skip the real JobSet CRD schema oracle (faster)")
    ap.add_argument("--no-corpus", action="store_true", help="mutate fixtures/ only")
    ap.add_argument("--out", default="fuzz-failures", help="directory for failing inputs")
    args = ap.parse_args()
    seen: set = set()

    def progress(n, failures, seconds):
        for f in failures:
            if f[0] in seen:
                continue
            seen.add(f[0])
            n_, desc, name, opts, check, text, outcome = f
            os.makedirs(args.out, exist_ok=True)
            base = os.path.join(args.out, f"{n_:07d}-{name}")
            with open(base, "w", encoding="utf-8") as fh:
                fh.write(text)
            with open(base + ".json", "w") as fh:
                json.dump({"case": n_, "mutation": desc, "opts": opts, "check_mode": check, "exit": outcome.code,
                           "seconds": round(outcome.seconds, 2), "violations": outcome.violations}, fh, indent=1)
            print(f"FAIL #{n_} {desc} {opts} check={check}: {outcome.violations[0][:300]}", flush=True)
        if n % 1000 == 0:
            print(f"{n} inputs, {len(failures)} failing, {seconds:.0f} s", flush=True)

    start = time.monotonic()
    n, failures, seconds = fuzz(args.count, args.seed, include_corpus=not args.no_corpus,
                                use_crd=not args.no_crd, progress=progress)
    print(f"done: {n} inputs in {seconds:.0f} s ({n / max(seconds, 1e-9):.1f}/s), {len(failures)} failing "
          f"(wall {time.monotonic() - start:.0f} s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
