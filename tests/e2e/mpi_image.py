"""The emulated MPI image's files on this machine, shared by the MPI e2e modules (test_mpi_frameworks.py,
test_trainjob_mpi.py): Open MPI 5 to bind-mount over /usr/local, the sshd/ssh configuration and host key an MPI
image ships, the user's SSH key for the Secret; and the pods' mount points kept while a module runs."""
from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from ..podnet import ssh_config, sshd_config
from .mpi_runner import ssh_keys


def image_files(openmpi5: Path, prefix: str) -> tuple[Path, dict]:
    """(a new directory holding the image's files as mpi_runner.MPIRunner reads them, the SSH Secret's data)."""
    files = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(files, 0o755)
    (files / "openmpi5").symlink_to(openmpi5)
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(files / "hostkey")], check=True)
    (files / "sshd_config").write_text(sshd_config(files / "hostkey"))
    (files / "ssh_config").write_text(ssh_config())
    return files, ssh_keys(files)


# Mount points on this machine that the MPI pods use. A node agent creates a missing one and removes it
# when it stops; removing a directory detaches every mount on it in every mount namespace (Linux >=
# 3.18), so another test process's agent stopping would pull /etc/mpi out of our running pods. A file
# inside (hidden in the pods by their bind mounts) makes that rmdir fail while the module runs.
KEEP = ".kf2jobset-mpi-keep-{pid}"


def keep_mount_points(mount_points) -> list:
    made = []
    for d in map(Path, mount_points):
        created = not d.exists()
        d.mkdir(parents=True, exist_ok=True)
        keep = d / KEEP.format(pid=os.getpid())
        keep.touch()
        made.append((d, keep, created))
    return made


def release_mount_points(made: list) -> None:
    for d, keep, created in made:
        keep.unlink(missing_ok=True)
        if created:
            try:
                d.rmdir()
            except OSError:  # another process's keep file is still in it: that process removes it
                pass
