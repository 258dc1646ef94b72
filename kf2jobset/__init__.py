"""kf2jobset: Kubeflow Training Operator v1 jobs -> Kubernetes JobSet or Kubeflow Trainer v2 TrainJob.

The Python API (kf2jobset/api/__init__.py, docs/api.md): ``kf2jobset.convert_job(job_dict, **options)`` and
``kf2jobset.convert_yaml(text, **options)``. Loaded on first use, so that ``import kf2jobset`` (and
the CLI, which imports the package) stays cheap for the pre-commit hook."""

from .version import __version__ as __version__  # re-exported: `kf2jobset.__version__` (listed in __all__)

_API = {"convert_job", "convert_yaml", "Converted"}
_ERRORS = {"Kf2JobSetError", "InputError", "InvalidJobError", "UnsupportedError", "RejectedJobSetError", "UsageError"}
__all__ = sorted(_API | _ERRORS | {"ConvertOptions", "__version__"})


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    if name in _ERRORS:
        from . import errors

        return getattr(errors, name)
    if name == "ConvertOptions":
        from .options import ConvertOptions

        return ConvertOptions
    raise AttributeError(f"module 'kf2jobset' has no attribute {name!r}")
