"""The kubectl plugin (`kubectl kf2jobset`, also `kf2jobset live`): v1 jobs read from a cluster.

Layout (kopf-like: one place per concern):

* ``kinds``     the v1 job kinds the plugin reads (group, plural, versions) and KIND parsing; pure
* ``objects``   what the plugin does to live objects: strip server fields, state, replicas,
                worst finding, Secret references; pure
* ``apierrors`` the ONE place where HTTP/connection failures become typed errors (exit codes 5/6/7)
* ``cluster``   the connection (kubeconfig -> ApiClient, never written back) and every API call
* ``plugin``    click commands: get, scan, apply

Only ``cluster`` and ``apierrors`` import the `kubernetes` package, and only when a command runs,
so `kf2jobset convert` never pays for it.
"""
