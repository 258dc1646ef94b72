"""The one place where API and connection failures become typed errors (kopf's habit).

Callers catch meaning (`Forbidden`, `NotFound`), never HTTP status codes. Every class is also one
of the kf2jobset error kinds, so exit codes come from kf2jobset.exitcodes like everywhere else:

    401 Unauthorized, 403 Forbidden               -> ClusterAuthError        exit 5
    connection/TLS/timeout, bad kubeconfig, 5xx,
    429, other unexpected statuses                -> ClusterUnreachableError exit 6
    404 NotFound (object, or a CRD not served)    -> NotFoundError           exit 7
    400/422 Invalid, 409 Conflict/AlreadyExists   -> RejectedJobSetError     exit 4
"""
from __future__ import annotations

import json
import re

from ..errors import (
    ClusterAuthError,
    ClusterUnreachableError,
    Kf2JobSetError,
    NotFoundError,
    Problem,
    RejectedJobSetError,
)


class APIError:
    """Mixin: what the API server said (HTTP status, Status.reason, Status.message)."""

    status: int = 0
    reason: str = ""
    message: str = ""


class Unauthorized(APIError, ClusterAuthError):
    pass


class Forbidden(APIError, ClusterAuthError):
    pass


class NotFound(APIError, NotFoundError):
    pass


class Conflict(APIError, RejectedJobSetError):
    pass


class Invalid(APIError, RejectedJobSetError):
    pass


class ServerError(APIError, ClusterUnreachableError):
    pass


class Unreachable(ClusterUnreachableError):
    """No answer: connection refused, DNS, TLS, timeout."""


class BadKubeconfig(ClusterUnreachableError):
    """No usable kubeconfig / context / in-cluster configuration."""


_BY_STATUS = {400: Invalid, 401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict, 422: Invalid}

_HINTS = {
    401: "the credentials of this context were refused (expired token or certificate?); refresh them with kubectl",
    403: "ask for RBAC access, or use --context / --kubeconfig for an identity that has it",
    409: "it exists already: delete it, or choose another JobSet name with --name",
    429: "the API server is throttling requests; try again later",
}


def status_message(body) -> tuple[str, str]:
    """(reason, message) from a Kubernetes Status body (bytes, str or None)."""
    if isinstance(body, bytes):
        body = body.decode("utf-8", errors="replace")
    if not body:
        return "", ""
    try:
        data = json.loads(body)
    except ValueError:
        return "", body.strip().splitlines()[0][:500]
    if not isinstance(data, dict):
        return "", str(data)[:500]
    return str(data.get("reason") or ""), str(data.get("message") or "")


def translate(exc: BaseException, action: str, server: str = "") -> Kf2JobSetError:
    """An exception raised by the kubernetes client (or urllib3 below it) -> a typed kf2jobset error.

    `action` says what was attempted, e.g. "list tfjobs.kubeflow.org in namespace ml"; it starts the
    one-line message. Unknown exception types are returned untouched by the caller (bugs stay bugs).
    """
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError as Urllib3Error

    if isinstance(exc, ApiException):
        status = int(exc.status or 0)
        if status == 0:  # the client wraps TLS failures as status 0
            reason = str(exc.reason or "").replace("\n", ": ")
            return _make(Unreachable, f"cannot {action}: no TLS connection to {server or 'the API server'}: {reason}")
        reason, message = status_message(exc.body)
        reason = reason or str(exc.reason or "") or f"HTTP {status}"
        cls = _BY_STATUS.get(status, ServerError)
        text = f"cannot {action}: {reason}: {message}" if message else f"cannot {action}: {reason} (HTTP {status})"
        err = _make(cls, text, _HINTS.get(status))
        err.status, err.reason, err.message = status, reason, message
        return err
    if isinstance(exc, Urllib3Error):
        cause = getattr(exc, "reason", None) or exc
        return _make(Unreachable, f"cannot {action}: cannot reach {server or 'the API server'}: {_short(cause)}")
    if isinstance(exc, (ConnectionError, TimeoutError)):
        return _make(Unreachable, f"cannot {action}: cannot reach {server or 'the API server'}: {_short(exc)}")
    raise exc


def _short(exc: BaseException) -> str:
    text = str(exc)
    # urllib3 prefixes the connection object: "HTTPSConnection(host='h', port=1): Failed to establish ..."
    text = re.sub(r"^(<[^>]*>|\w+Connection(Pool)?\([^)]*\)): ", "", text)
    return text.replace("\n", " ")[:300] or type(exc).__name__


def _make(cls, message: str, hint: str | None = None):
    return cls([Problem(message, hint=hint)])
