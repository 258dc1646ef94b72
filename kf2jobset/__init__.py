"""kf2jobset: Kubeflow Training Operator v1 jobs -> Kubernetes JobSet."""

__version__ = "0.1.0"
