#!/usr/bin/env bash
# Install the real training frameworks that tests/e2e/test_frameworks.py runs inside the pods of a
# v1 job and of its JobSet conversion, and print where they are.
#
#   tools/install-frameworks.sh               # install what is missing (idempotent, non-interactive)
#   tools/install-frameworks.sh NAME...       # only these venvs (e.g. mxnet)
#   tools/install-frameworks.sh --print-root  # only print the cache directory used
#
# PyPI only (CPU wheels; torch from PyPI also pulls its CUDA libraries, ~4 GB, never loaded here),
# one venv per framework because their numpy/protobuf/ml_dtypes pins conflict:
#     <root>/torch       torch (gloo, torchrun, c10d rendezvous)
#     <root>/tensorflow  tensorflow-cpu (tf.distribute.Server, gRPC)
#     <root>/jax         jax[cpu] (jax + jaxlib: jax.distributed)
#     <root>/xgboost     xgboost-cpu (collective + RabitTracker)
#     <root>/mxnet       mxnet 1.9.1 (kvstore dist_sync: scheduler, servers, workers) with numpy 1.23.5:
#                        MXNet 1.9.1 uses np.bool, which newer numpy removed; the wheel is
#                        py3-none-manylinux2014_x86_64 and imports on Python 3.11
#   <root> = ${KF2JOBSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kf2jobset}/frameworks
# Paddle comes from tools/install-launchers.sh (<cache>/launchers/paddle); this script runs it when
# that venv is missing. Nothing is written into the work tree.
#
# A venv is (re)made only when its marker file is missing or names other versions, so a second run
# does no network work. Exits non-zero with a message on stderr when something cannot be installed.
set -euo pipefail

say() { printf 'install-frameworks: %s\n' "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

cache="${KF2JOBSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kf2jobset}"
root="$cache/frameworks"
all=(torch tensorflow jax xgboost mxnet paddle)
case "${1:-}" in
  --print-root) echo "$root"; exit 0 ;;
  -h|--help) sed -n '2,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  -*) die "unknown argument: $1 (try --help)" ;;
esac
only=("$@")
for n in "${only[@]}"; do
  printf '%s\n' "${all[@]}" | grep -qx -- "$n" || die "unknown venv: $n (one of: ${all[*]})"
done
[ ${#only[@]} -gt 0 ] || only=("${all[@]}")
wanted() { printf '%s\n' "${only[@]}" | grep -qx -- "$1"; }

python="${PYTHON:-python3}"
"$python" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null || die "$python is older than 3.11"
mkdir -p "$root"
venv() {  # venv NAME PACKAGE...
  local name="$1"; shift
  wanted "$name" || return 0
  local dir="$root/$name" marker="$root/$name/.installed"
  local want="$*"
  if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then
    say "$name: present ($want)"
    return 0
  fi
  say "$name: installing $want into $dir"
  rm -rf "$dir"
  "$python" -m venv "$dir" >&2
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check --index-url https://pypi.org/simple "$@" >&2 \
    || die "pip install $want failed"
  printf '%s' "$want" > "$marker"
}
venv torch "torch==2.15.0" "numpy<3"
venv tensorflow "tensorflow-cpu==2.21.0"
venv jax "jax[cpu]==0.10.2"
venv xgboost "xgboost-cpu==3.2.0" "numpy<3"
optional_venv() {  # like venv, but a failure is written to <root>/NAME.unavailable (the test skips with it)
  local name="$1"; shift
  wanted "$name" || return 0
  local log
  log="$(mktemp)"
  if ( venv "$name" "$@" ) 2>"$log"; then
    rm -f "$root/$name.unavailable"
    cat "$log" >&2
  else
    { echo "pip install $* failed on Python $("$python" -c 'import platform; print(platform.python_version())') ($(uname -m)):"
      grep -v '^install-frameworks: ' "$log" | tail -n 12; } > "$root/$name.unavailable"
    rm -rf "${root:?}/$name"
    say "$name: NOT installed; the reason is in $root/$name.unavailable (tests/e2e/test_mxnet.py skips with it)"
  fi
  rm -f "$log"
}
# MXNet is retired upstream (Apache attic): its last wheel may stop installing on a newer Python; that
# must not stop the other frameworks
optional_venv mxnet "mxnet==1.9.1" "numpy==1.23.5"
paddle="$cache/launchers/paddle"
if wanted paddle && [ ! -f "$paddle/.installed" ]; then
  say "paddle: missing, running tools/install-launchers.sh"
  bash "$(dirname "${BASH_SOURCE[0]}")/install-launchers.sh" >&2
fi
for n in torch tensorflow jax xgboost; do if wanted "$n"; then echo "$n=$root/$n/bin/python"; fi; done
if wanted mxnet && [ -f "$root/mxnet/.installed" ]; then echo "mxnet=$root/mxnet/bin/python"; fi
if wanted paddle; then echo "paddle=$paddle/bin/python"; fi
