#!/usr/bin/env bash
# Build (or find in the cache) the real components the end-to-end tests (tests/e2e) run, and print
# their paths. See tools/README-ground-truth.md.
#
#   tools/install-ground-truth.sh                    # build what is missing; print NAME=PATH lines
#   tools/install-ground-truth.sh NAME...            # only these; the last line is the last NAME's path
#   tools/install-ground-truth.sh --print-paths [NAME...]   # print NAME=PATH lines, build nothing
#
# NAME is one of:
#   etcd                     etcd 3.6.8                       tools/testetcd
#   kube-apiserver           kube-apiserver v1.36.3           tools/testapiserver (install-test-apiserver.sh)
#   kube-controller-manager  kube-controller-manager v1.36.3  tools/testcontrollermanager
#   training-operator        Kubeflow Training Operator v1.9.4 tools/testtrainingoperator
#   jobset-controller        JobSet controller v0.12.0        tools/testjobset
#   mpi-operator             MPI Operator v0.8.2 (MPIJob kubeflow.org/v2beta1) tools/testmpioperator
#   training-operator-v1.8.1 Kubeflow Training Operator v1.8.1 (MXJob: removed in v1.9.0) tools/testtrainingoperator
#                            built with -modfile=v1.8.1.mod (the same program, v1.8.1 pinned)
#   trainer-controller       Kubeflow Trainer v2.3.0 (TrainJob trainer.kubeflow.org/v1alpha1) tools/testtrainer
#   coscheduling-scheduler   kube-scheduler v1.36.3 + scheduler-plugins v0.35.4-devel Coscheduling tools/testcoscheduling
#                            (gang-scheduling run; not in the default set)
#   kustomize                kustomize v5.7.1                 tools/kustomize (repo-mode tests; not in the default set)
#   helm3                    Helm v3.22.0                     tools/helm3 (post-renderer tests; not in the default set)
#   helm4                    Helm v4.3.1                      tools/helm4 (post-renderer plugin tests; not in the default set)
#   upstream                 `go mod download` of the modules in tools/upstream-modules.txt (the example jobs,
#                            CRDs and runtimes the tests read: tests/upstream.py); prints `go env GOMODCACHE`
#
# Each binary is built from its project-owned Go module into
#   ${KF2JOBSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kf2jobset}/<module>-<version>-<hash>/<NAME>
# where <hash> covers the module's go.mod (or the -modfile the component names) with its .sum, *.go files
# and the build flags, so any change
# rebuilds. Binaries never go into the work tree. Builds run one at a time (a lock in the cache
# directory), at low priority (nice), with GOTOOLCHAIN=local and -mod=readonly (go.mod/go.sum are
# never rewritten). Idempotent; progress on stderr; non-zero exit with a message when a build fails.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache_root="${KF2JOBSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kf2jobset}"
all=(upstream etcd kube-apiserver kube-controller-manager training-operator jobset-controller mpi-operator training-operator-v1.8.1
     trainer-controller)

say() { printf 'install-ground-truth: %s\n' "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

# name -> module dir, version, package to build, extra ldflags[, the module file when not go.mod]
spec() {
  local k8s="k8s.io/component-base/version"
  local kver="v1.36.3"
  local kflags="-X $k8s.gitVersion=$kver -X $k8s.gitMajor=1 -X $k8s.gitMinor=36 -X $k8s.gitTreeState=clean"
  case "$1" in
    etcd)                    echo "testetcd|v3.6.8|.|" ;;
    kube-controller-manager) echo "testcontrollermanager|$kver|.|$kflags" ;;
    training-operator)       echo "testtrainingoperator|$(pin training-operator)|.|" ;;
    training-operator-v1.8.1) echo "testtrainingoperator|$(pin training-operator-v1.8.1)|.||v1.8.1.mod" ;;
    jobset-controller)       local v; v="$(pin jobset)"
                             echo "testjobset|$v|sigs.k8s.io/jobset|-X sigs.k8s.io/jobset/pkg/version.GitVersion=$v" ;;
    mpi-operator)            local v; v="$(pin mpi-operator)"
                             echo "testmpioperator|$v|.|-X github.com/kubeflow/mpi-operator/pkg/version.Version=$v" ;;
    trainer-controller)      echo "testtrainer|$(pin trainer)|github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager|" ;;
    coscheduling-scheduler)  echo "testcoscheduling|v0.35.4-devel|.|$kflags" ;;
    kustomize)               echo "kustomize|v5.7.1|sigs.k8s.io/kustomize/kustomize/v5|" ;;
    helm3)                   echo "helm3|v3.22.0|helm.sh/helm/v3/cmd/helm|-X helm.sh/helm/v3/internal/version.version=v3.22.0" ;;
    helm4)                   echo "helm4|v4.3.1|helm.sh/helm/v4/cmd/helm|-X helm.sh/helm/v4/internal/version.version=v4.3.1" ;;
    *) return 1 ;;
  esac
}

pins="$here/upstream-modules.txt"
pin() {  # NAME of tools/upstream-modules.txt -> its version
  awk -v n="$1" '$1 == n {print $3; found=1} END {exit !found}' "$pins" || die "$1 is not pinned in $pins"
}

upstream() {  # download the pinned modules (a no-op when they are in the module cache); print the cache
  command -v go >/dev/null 2>&1 || die "Go toolchain not found: need go on PATH to download the modules of $pins"
  local mods
  mods="$(awk '!/^ *#/ && NF == 3 {print $2 "@" $3}' "$pins")"
  # outside any module (the zip of each, checked against sum.golang.org); progress on stderr
  # shellcheck disable=SC2086 # one argument per module
  (cd / && GOTOOLCHAIN=local nice -n 10 go mod download $mods >&2 </dev/null) \
    || die "go mod download of the modules in $pins failed (see the messages above)"
  say "upstream modules in the module cache: $(echo $mods)"
  GOTOOLCHAIN=local go env GOMODCACHE
}

binary_path() {  # NAME -> cache path of its binary (built or not)
  local name="$1"
  if [ "$name" = upstream ]; then
    GOTOOLCHAIN=local go env GOMODCACHE
    return
  fi
  if [ "$name" = kube-apiserver ]; then
    bash "$here/install-test-apiserver.sh" --print-path
    return
  fi
  local s mod version pkg ldflags modfile dir hash
  s="$(spec "$name")" || die "unknown component: $name (one of: ${all[*]})"
  IFS='|' read -r mod version pkg ldflags modfile <<<"$s"
  modfile="${modfile:-go.mod}"
  dir="$here/$mod"
  [ -f "$dir/$modfile" ] || die "missing $dir/$modfile"
  # go.mod builds keep the hash they always had; another module file adds its name (two builds, one dir)
  hash="$( { cat "$dir/$modfile" "$dir/${modfile%.mod}.sum"; find "$dir" -maxdepth 1 -name '*.go' | LC_ALL=C sort | xargs -r cat;
            printf '%s\n' "$pkg" "$ldflags"; [ "$modfile" = go.mod ] || printf '%s\n' "$modfile"; } | sha256sum | cut -c1-12)"
  echo "$cache_root/$mod-$version-$hash/$name"
}

build() {  # NAME -> builds if needed; prints the path
  local name="$1"
  if [ "$name" = upstream ]; then
    upstream
    return
  fi
  if [ "$name" = kube-apiserver ]; then
    # the existing script (it also makes sure openssl is there); its last stdout line is the path
    bash "$here/install-test-apiserver.sh" | tail -1
    return
  fi
  local s mod version pkg ldflags modfile binary out_dir tmp start
  s="$(spec "$name")"
  IFS='|' read -r mod version pkg ldflags modfile <<<"$s"
  modfile="${modfile:-go.mod}"
  binary="$(binary_path "$name")"
  out_dir="$(dirname "$binary")"
  if [ -x "$binary" ]; then
    say "$name $version already built: $binary"
    echo "$binary"
    return
  fi
  command -v go >/dev/null 2>&1 || die "Go toolchain not found: need go >= 1.26 on PATH to build $here/$mod ($name)"
  local need_go have_go
  need_go="$(awk '$1 == "go" {print $2; exit}' "$here/$mod/$modfile")"
  have_go="$(GOTOOLCHAIN=local go env GOVERSION 2>/dev/null | sed 's/^go//')"
  if [ "$(printf '%s\n%s\n' "$need_go" "$have_go" | sort -V | head -1)" != "$need_go" ]; then
    die "Go toolchain too old: have go$have_go, $here/$mod/$modfile needs go$need_go (GOTOOLCHAIN=local)"
  fi
  mkdir -p "$cache_root" "$out_dir"
  # one build at a time on this machine (2 cores), whichever component
  exec 8>"$cache_root/.ground-truth-build.lock"
  flock 8 || die "cannot lock $cache_root/.ground-truth-build.lock"
  if [ -x "$binary" ]; then  # built by a concurrent run while we waited
    exec 8>&-
    echo "$binary"
    return
  fi
  say "building $name $version from tools/$mod ($modfile) into $out_dir (cold on 2 cores: ~1.5 min for etcd, up to ~5 min for kube-controller-manager)"
  tmp="$out_dir/$name.tmp.$$"
  start=$(date +%s)
  if ! (
    cd "$here/$mod"
    GOTOOLCHAIN=local GOFLAGS="-mod=readonly -buildvcs=false" CGO_ENABLED=0 \
      nice -n 10 go build -modfile="$modfile" -trimpath -ldflags "-s -w $ldflags" -o "$tmp" "$pkg"
  ) >&2 </dev/null; then
    rm -f "$tmp"
    die "go build of tools/$mod ($name) failed (see the messages above)"
  fi
  mv -f "$tmp" "$binary"
  exec 8>&-
  say "built $name in $(( $(date +%s) - start )) s: $binary"
  echo "$binary"
}

print_only=0
names=()
for a in "$@"; do
  case "$a" in
    --print-paths) print_only=1 ;;
    -h|--help) sed -n '2,/^[^#]/p' "${BASH_SOURCE[0]}" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option: $a (try --help)" ;;
    *) spec "$a" >/dev/null || [ "$a" = kube-apiserver ] || [ "$a" = upstream ] || die "unknown component: $a (one of: ${all[*]})"
       names+=("$a") ;;
  esac
done
explicit=${#names[@]}
[ "$explicit" -gt 0 ] || names=("${all[@]}")

if [ "$print_only" = 1 ]; then
  for n in "${names[@]}"; do echo "$n=$(binary_path "$n")"; done
  exit 0
fi

for n in "${names[@]}"; do
  p="$(build "$n")"
  if [ "$explicit" -gt 0 ]; then echo "$p"; else echo "$n=$p"; fi
done
