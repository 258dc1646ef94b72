"""kf2jobset: Kubeflow Training Operator v1 jobs -> Kubernetes JobSet or Kubeflow Trainer v2 TrainJob.

The Python API (kf2jobset/api/__init__.py, docs/api.md): ``kf2jobset.convert_job(job, **options)`` (a dict or an
OpenAPI model) and ``kf2jobset.convert_yaml(text, **options)``; ``kf2jobset.live`` reads jobs from and applies
results to a cluster. Loaded on first use, so that ``import kf2jobset`` (and the CLI, which imports the
package) stays cheap for the pre-commit hook; type checkers and IDEs read the names from the block below."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .version import __version__ as __version__  # re-exported: `kf2jobset.__version__` (listed in __all__)

if TYPE_CHECKING:  # what the lazy names below are, for type checkers and IDEs (never run)
    from .api import ConvertKeywords as ConvertKeywords
    from .api import Converted as Converted
    from .api import convert_job as convert_job
    from .api import convert_yaml as convert_yaml
    from .errors import ClusterAuthError as ClusterAuthError
    from .errors import ClusterUnreachableError as ClusterUnreachableError
    from .errors import InputError as InputError
    from .errors import InvalidJobError as InvalidJobError
    from .errors import Kf2JobSetError as Kf2JobSetError
    from .errors import NotFoundError as NotFoundError
    from .errors import Problem as Problem
    from .errors import RejectedJobSetError as RejectedJobSetError
    from .errors import UnsupportedError as UnsupportedError
    from .errors import UsageError as UsageError
    from .notes import Note as Note
    from .options import ConvertOptions as ConvertOptions

_API = {"convert_job", "convert_yaml", "Converted", "ConvertKeywords"}
_ERRORS = {"Kf2JobSetError", "InputError", "InvalidJobError", "UnsupportedError", "RejectedJobSetError", "UsageError",
           "Problem", "ClusterAuthError", "ClusterUnreachableError", "NotFoundError"}
__all__ = sorted(_API | _ERRORS | {"ConvertOptions", "Note", "__version__"})


def __getattr__(name: str) -> object:
    if name in _API:
        from . import api

        return getattr(api, name)
    if name in _ERRORS:
        from . import errors

        return getattr(errors, name)
    if name == "ConvertOptions":
        from .options import ConvertOptions

        return ConvertOptions
    if name == "Note":
        from .notes import Note

        return Note
    raise AttributeError(f"module 'kf2jobset' has no attribute {name!r}")
