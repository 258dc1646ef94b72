"""What a Kubeflow job still in a tree is, in the words `convert --check` lists it with (repo mode's
summary, and the Markdown pages whose blocks are never rewritten). Its own module so that the file
forms below the front ends (kf2jobset/sources/markdown.py) name them without importing repo mode."""
from __future__ import annotations

# in the order the summary names them
TO_CONVERT = "to convert"  # `convert --in-place` converts it
DECISION = "needs a decision"  # a flag decides it (e.g. --accept-mpi-ssh), see its message
REFUSED = "refused"  # invalid, an API version kf2jobset does not convert, a JobSet the API would reject, not YAML
# inside another object kf2jobset does not rewrite (an AppWrapper, a ConfigMap value without --katib, an Argo
# delete/get/patch step): found, not converted
EMBEDDED = "embedded"
TEMPLATE = "template"  # an envsubst/template file kf2jobset cannot convert as it is (placeholders where values are needed, not YAML)
HELM = "Helm-skipped"  # in a Helm chart template: never parsed
PATCH = "kustomize patch"  # a kustomization/patch file still aimed at a v1 job
STALE = "stale copy"  # --check --out-dir: the converted copy is missing or out of date
RESIZED = "resized"  # a converted JobSet whose replicas no longer match the sizes its literals were written for
# a converted JobSet whose replicatedJobs were added, renamed or made to run several pods per Job, or whose values
# name v1's pods (layout_guard.py)
RESHAPED = "reshaped"
# a converted JobSet whose name or namespace no longer match those its name-bound literals were written for
RENAMED = "renamed"
ORDER = (TO_CONVERT, DECISION, REFUSED, EMBEDDED, TEMPLATE, HELM, PATCH, STALE, RESIZED, RESHAPED, RENAMED)
