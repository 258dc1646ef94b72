"""Click options shared by `convert`, `report` and the kubectl plugin, and how they become a
`ConvertOptions`. Its own module so that the CLI and the plugin import it without importing each other."""
from __future__ import annotations

import click

from ..choices import (
    DEFAULT_GANG_SCHEDULER_NAME,
    LATEST_JOBSET_VERSION,
    MPI_HOSTFILE_MODES,
    SCHEDULERS,
    TARGETS,
    TRAINER_RUNTIMES,
    TRAINER_VERSIONS,
)

_JOBSET_VERSION = "v{}.{}".format(*LATEST_JOBSET_VERSION)
_TRAINER_VERSION = "v{}.{}".format(*TRAINER_VERSIONS[-1])


def conversion_options(func):
    """Options shared by convert, report and the kubectl plugin."""
    opts = [
        click.option("--jobset-version", default=_JOBSET_VERSION, show_default=True,
                     help="Oldest JobSet release the output must run on (v0.6 or newer)."),
        click.option("--scheduler", type=click.Choice(SCHEDULERS), default=SCHEDULERS[0], show_default=True,
                     help="Where runPolicy.schedulingPolicy goes; never guessed."),
        click.option("--gang-scheduler-name", default=DEFAULT_GANG_SCHEDULER_NAME, show_default=True,
                     help="--scheduler scheduler-plugins: the operator's --gang-scheduler-name (the pods' schedulerName)."),
        click.option("--name", "name", default=None, help="JobSet name (only when converting a single job)."),
        click.option("--subdomain", default=None, help="Pin network.subdomain instead of using the JobSet name."),
        click.option("--keep-kubeflow-labels", is_flag=True, help="Keep the static training.kubeflow.org/* pod labels."),
        click.option("--ssh-secret", default=None, help="MPI: existing kubernetes.io/ssh-auth Secret to mount (default <jobset>-ssh)."),
        click.option("--accept-mpi-ssh", is_flag=True, help="MPIJob v1: accept the breaking switch from kubectl exec to SSH."),
        click.option("--mpi-hostfile", type=click.Choice(MPI_HOSTFILE_MODES), default=MPI_HOSTFILE_MODES[0], show_default=True,
                     help="MPI hostfile as a ConfigMap, or generated in the launcher at start-up (works without a known name)."),
        click.option("--cluster-domain", default=None, help="The operator's CUSTOM_CLUSTER_DOMAIN / --cluster-domain, if it had one."),
        click.option("--v1-pod-services", is_flag=True,
                     help="Also write v1's per-pod Services (<job>-<type>-<i>) selecting the JobSet's pods, for "
                          "addresses in code or images."),
        click.option("--katib", is_flag=True, help="Also convert jobs inside Katib Experiments (trialTemplate.trialSpec)."),
        click.option("--target", type=click.Choice(TARGETS), default=TARGETS[0], show_default=True,
                     help="Write JobSets, or Kubeflow Trainer v2 TrainJobs (each with the TrainingRuntime it runs on)."),
        click.option("--trainer-version", default=_TRAINER_VERSION, show_default=True,
                     help="--target trainjob: the Kubeflow Trainer release whose API is written (v2.3)."),
        click.option("--trainer-runtime", type=click.Choice(TRAINER_RUNTIMES), default=TRAINER_RUNTIMES[0],
                     show_default=True,
                     help="--target trainjob: a built-in runtime where the job fits one, else one of kf2jobset's "
                          "bundle (`kf2jobset runtimes`), else the job is refused (exit 4), saying why (auto); or "
                          "always a per-job TrainingRuntime that keeps the v1 contract exactly (per-job; "
                          "`generated` is its old name)."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def build_options(kw: dict):
    from ..options import ConvertOptions, parse_trainer_version, parse_version  # not for --version and --help

    return ConvertOptions(
        jobset_version=parse_version(kw.pop("jobset_version")),
        scheduler=kw.pop("scheduler"),
        gang_scheduler_name=kw.pop("gang_scheduler_name"),
        name=kw.pop("name"),
        subdomain=kw.pop("subdomain"),
        keep_kubeflow_labels=kw.pop("keep_kubeflow_labels"),
        ssh_secret=kw.pop("ssh_secret"),
        accept_mpi_ssh=kw.pop("accept_mpi_ssh"),
        mpi_hostfile=kw.pop("mpi_hostfile"),
        cluster_domain=kw.pop("cluster_domain"),
        katib=kw.pop("katib"),
        v1_pod_services=kw.pop("v1_pod_services", False),
        target=kw.pop("target", "jobset"),
        trainer_version=parse_trainer_version(kw.pop("trainer_version", _TRAINER_VERSION)),
        trainer_runtime=kw.pop("trainer_runtime", "auto"),
    )


def options_from_args(args: list[str]):
    """The ConvertOptions a list of command-line options (a fixture's `args` file) stands for, read by the
    CLI's own option parser."""
    @click.command()
    @conversion_options
    def cmd(**kw):
        return build_options(kw)

    return cmd.main(list(args), standalone_mode=False)
