"""`kubectl kf2jobset get | scan | apply` (also `kf2jobset live ...`): v1 jobs read from a cluster.

kubectl neither parses nor forwards its own flags to plugins, so the plugin parses the standard
ones itself (flags.py): --kubeconfig, --context, -n/--namespace, -A/--all-namespaces,
-l/--selector, -o/--output, --request-timeout, --chunk-size. stdout carries data only (manifests,
the table, kubectl-style "created" lines); notes, warnings and errors go to stderr (output.py).

This module is the click group and the console script; each command has its own module
(get_command.py, scan_command.py, apply_command.py), and they read jobs through reading.py.
"""
from __future__ import annotations

import click

from ..version import __version__
from .apply_command import apply
from .flags import hoist_flags
from .get_command import get
from .scan_command import scan

PLUGIN_NAME = "kubectl kf2jobset"


class _PluginGroup(click.Group):
    """Accepts the standard flags before the command too: `kubectl kf2jobset -n ml scan`."""

    def parse_args(self, ctx, args):
        return super().parse_args(ctx, hoist_flags(list(args), self.commands))


@click.group(cls=_PluginGroup, context_settings={"help_option_names": ["-h", "--help"]},
             short_help="The kubectl plugin's commands for a live cluster: get, scan, apply.")
@click.version_option(__version__, prog_name="kf2jobset")
def plugin():
    """Migrate the Kubeflow Training Operator v1 jobs of a cluster to JobSet.

    \b
    get    print the JobSets (and companions) of live v1 jobs, for GitOps
    scan   inventory every v1 job with its state and worst migration finding
    apply  create the JobSet of one v1 job (server-side dry run by default)

    \b
    Exit codes: 0 ok; 2 bad usage; 3 invalid job; 4 needs a decision
    (e.g. --accept-mpi-ssh) or rejected by the API; 5 unauthorized/forbidden;
    6 cluster unreachable or bad kubeconfig; 7 object or CRD not found.
    """


for _command in (get, scan, apply):
    plugin.add_command(_command)


def main() -> None:
    """Console script `kubectl-kf2jobset` (kubectl runs it for `kubectl kf2jobset ...`)."""
    try:
        plugin.main(prog_name=PLUGIN_NAME)
    finally:
        # Exit without a last garbage collection over everything the client and converter loaded
        # (~0.1 s after a scan); objects are still finalised and atexit handlers still run.
        import gc

        gc.freeze()
