"""Per-kind mapping data (mappings/*.yaml) as typed, cached objects."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from .data_dirs import data_dir


@dataclass(frozen=True)
class Port:
    name: str
    number: int


@dataclass(frozen=True)
class ReplicaTypeRule:
    type: str
    required: bool = False
    exact_replicas: int | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None
    default_replicas: int = 1


@dataclass(frozen=True)
class StartRule:
    type: str
    after: str
    status: str  # Ready | Complete
    # How the operator itself held `type` back, for the note when a gang scheduler makes the JobSet start
    # it at once (JS092), e.g. PyTorch workers waiting in init-pytorch.
    operator_wait: str | None = None
    # When the profile writes this rule's start-order note itself (it replaces the operator's init container, or
    # the operator started the pods otherwise): a `when` condition as success rules have, {} always, None never.
    noted_by_profile: dict | None = None


@dataclass(frozen=True)
class SuccessRule:
    operator: str
    targets: tuple[str, ...]
    exact: bool
    when: dict = field(default_factory=dict)
    note: str | None = None


@dataclass(frozen=True)
class KindMapping:
    kind: str
    api_versions: tuple[str, ...]
    schema: str
    replica_specs_field: str
    profile: str
    operator_name: str  # the training.kubeflow.org/operator-name pod label value
    operator: str  # which operator ran the kind: training-operator | mpi-operator (its pods, labels and run policy differ)
    default_container: str | None
    default_port: Port | None
    default_restart_policy: str
    replica_types: tuple[ReplicaTypeRule, ...]
    # unknown replica-spec keys: refuse (the operator rejected them), convert (TF ran them), ignore (mpi-operator)
    unknown_replica_types: str
    env_containers: str  # all | default | first
    start_order: tuple[StartRule, ...]
    success: tuple[SuccessRule, ...]
    master_role: tuple[str, ...]
    # Known types whose map keys the operator camel-cased before it reconciled ("worker" -> "Worker").
    case_normalized_types: tuple[str, ...] = ()
    # A replica type with no container named default_container (audit: docs/ground-truth.md, "No container
    # of the default name"): the types whose default-named container gave every pod's env a port (without
    # it no version created a pod: refused as inherited), and what the versions that made pods did (JS060).
    port_read_from: tuple[PortRead, ...] = ()
    never_ran_versions: str = ""
    without_default_ran: str | None = None
    # The operator had a validating webhook that could reject the kind (training-operator v1.8+; see
    # parse.v1_webhook_rejections). MPIJob and MXJob had none that rejected anything.
    validating_webhook: bool = True
    mutually_exclusive: tuple[tuple[str, ...], ...] = ()
    restart_policy_by_type: dict = field(default_factory=dict)
    allowed_restart_policies: tuple[str, ...] = ("Always", "OnFailure", "Never", "ExitCode")
    # volumes the operator added to each role's pods; the user's own containers may mount them by name
    operator_volumes: dict = field(default_factory=dict)
    # older apiVersions read as this mapping's job (kf2jobset/upgrade/__init__.py), e.g. TFJob kubeflow.org/v1beta2
    upgrade_from: tuple[str, ...] = ()
    upgrades: tuple[UpgradeSource, ...] = ()  # how each of them is read, in upgrade_from's order
    # what the old operators' pods got that v1's did not (note UP002), where a version says nothing else
    upgrade_contract: str | None = None
    # How a pod was reached in the v1 world (POD_ADDRESSES): addresses, Services and the DNS comparison
    # follow it.
    pod_addresses: str = "service"
    # Types whose one pod the operator named itself outside the replica reconciler ("{job}-launcher"):
    # no index in the name and no replica-index label.
    named_pods: dict = field(default_factory=dict)
    # spec.cleanPodPolicy: a deprecated copy of runPolicy.cleanPodPolicy the operator still read when
    # runPolicy had none.
    top_level_clean_pod_policy: bool = False
    webhook: WebhookRules | None = None
    file: str = ""

    @property
    def allow_unknown_replica_types(self) -> bool:
        return self.unknown_replica_types == "convert"

    @property
    def known_types(self) -> tuple[str, ...]:
        return tuple(r.type for r in self.replica_types)

    def rule(self, rtype: str) -> ReplicaTypeRule | None:
        return next((r for r in self.replica_types if r.type == rtype), None)

    def default_restart(self, rtype: str) -> str:
        return self.restart_policy_by_type.get(rtype, self.default_restart_policy)

    def upgrade_source(self, api_version: str) -> UpgradeSource | None:
        return next((u for u in self.upgrades if u.api_version == api_version), None)

    def pod_name(self, job: str, rtype: str, index: int) -> str:
        """The v1 pod's name: <job>-<type>-<index>, or the name the operator gave a type's one pod."""
        named = self.named_pods.get(rtype)
        return named.format(job=job) if named else f"{job}-{rtype.lower()}-{index}"


@dataclass(frozen=True)
class UpgradeSource:
    """One older apiVersion of the kind (mapping `upgradeFrom`) and what its operator did, for upgrade.py."""
    api_version: str
    reader: str  # the reader of its shape: upgrade.READERS
    operator: str  # the operator release(s) that served it, e.g. "tf-operator v0.3.0"
    summary: str  # what the jump to v1 changes (note UP001)
    contract: str | None = None  # what its pods got that v1's did not (UP002); None: the mapping's upgradeContract
    # an unset cleanPodPolicy meant this under that operator (made explicit in runPolicy): (value, why)
    clean_pod_policy_default: tuple[str, str] | None = None
    replica_list: dict = field(default_factory=dict)  # the replica list form's field names (reader replicaList)
    old_default_container: str | None = None  # the old operator's default container name, renamed to v1's

    @property
    def version(self) -> str:
        return self.api_version.split("/", 1)[1]


UPGRADE_KEYS = ("apiVersion", "reader", "operator", "summary", "contract", "cleanPodPolicyDefault", "replicaList",
                "oldDefaultContainer")
REPLICA_LIST_KEYS = ("typeField", "portField", "imageField", "indexField", "termination", "types", "known")


def _upgrades(data: dict, file: str) -> tuple[UpgradeSource, ...]:
    out = []
    for u in data.get("upgradeFrom") or ():
        unknown = sorted(set(u) - set(UPGRADE_KEYS))
        missing = [k for k in REPLICA_LIST_KEYS if k not in (u.get("replicaList") or {})] if u.get("reader") == "replicaList" else []
        if unknown or missing:  # a misspelt key would otherwise be a fact silently lost
            raise ValueError(f"{file}: upgradeFrom {u.get('apiVersion')}: " + (f"unknown keys {', '.join(unknown)}" if unknown
                             else f"replicaList needs {', '.join(missing)}"))
        clean = u.get("cleanPodPolicyDefault")
        out.append(UpgradeSource(u["apiVersion"], u["reader"], u["operator"], u["summary"], u.get("contract"),
                                 (clean["value"], clean["why"]) if clean else None, dict(u.get("replicaList") or {}),
                                 u.get("oldDefaultContainer")))
    return tuple(out)


@dataclass(frozen=True)
class WebhookRules:
    """What the kind's v1.8+ validating webhook refused beyond the common rules (parse.v1_webhook_rejections):
    each refusal comes with which releases ran such a job anyway (docs/ground-truth.md)."""
    replica_types: tuple[str, ...] = ()  # the only keys it took, exact spelling; () = no such rule
    other_spelling_ran: str | None = None  # a known type's key spelt in another case
    set_to_one: tuple[str, ...] = ()  # types whose replicas had to be written, as 1
    # type -> (what the refusal says, which releases ran it) for a type the job must have
    required: dict = field(default_factory=dict)


@dataclass(frozen=True)
class PortRead:
    """A replica type whose default-named container's port the operator read for every pod's env."""
    type: str  # "*": every type
    reads: str  # what read it, e.g. "MASTER_PORT (getPortFromPyTorchJob)"
    when: str | None = None  # only then: elasticWithoutRdzvPort | morePodsThanOne


PORT_READ_WHEN = ("elasticWithoutRdzvPort", "morePodsThanOne")


def _without_default(data: dict | None, file: str) -> dict:
    if not data:
        return {}
    reads = tuple(PortRead(r["type"], r["reads"], r.get("when")) for r in data.get("portReadFrom") or ())
    bad = [r.when for r in reads if r.when is not None and r.when not in PORT_READ_WHEN]
    if bad:
        raise ValueError(f"{file}: withoutDefaultContainer.portReadFrom when {bad[0]!r} is not one of {', '.join(PORT_READ_WHEN)}")
    return {"port_read_from": reads, "never_ran_versions": str(data.get("neverRan") or ""),
            "without_default_ran": data.get("otherwise")}


# A kind whose mapping names no schema of its own is checked against the common shape of v1 jobs.
GENERIC_SCHEMA = "kubeflow/job"


OPERATORS = ("training-operator", "mpi-operator")
# service: each pod its own Service <job>-<type>-<i> (the training operator's replica reconciler);
# podName: no Service, the bare pod name through kubectl exec (MPIJob v1);
# jobService: the pod's hostname under one headless Service named after the job (mpi-operator).
POD_ADDRESSES = ("service", "podName", "jobService")


def _webhook(data, file: str) -> tuple[bool, WebhookRules | None]:
    """validatingWebhook: false (none that refused anything), true (the common rules), or the kind's own rules."""
    if not isinstance(data, dict):
        return bool(data), None
    unknown = sorted(set(data) - {"replicaTypes", "otherSpellingRan", "setToOne", "required"})
    if unknown:
        raise ValueError(f"{file}: validatingWebhook has unknown keys {', '.join(unknown)}")
    required = {t: (r["message"], r["ran"]) for t, r in (data.get("required") or {}).items()}
    return True, WebhookRules(tuple(data.get("replicaTypes") or ()), data.get("otherSpellingRan"),
                              tuple(data.get("setToOne") or ()), required)


def _from_data(data: dict, file: str) -> KindMapping:
    port = data.get("defaultPort")
    if data.get("operator", OPERATORS[0]) not in OPERATORS:
        raise ValueError(f"{file}: operator {data['operator']!r} is not one of {', '.join(OPERATORS)}")
    if data.get("podAddresses", POD_ADDRESSES[0]) not in POD_ADDRESSES:
        raise ValueError(f"{file}: podAddresses {data['podAddresses']!r} is not one of {', '.join(POD_ADDRESSES)}")
    has_webhook, webhook = _webhook(data.get("validatingWebhook", True), file)
    return KindMapping(
        kind=data["kind"],
        api_versions=tuple(data["apiVersions"]),
        schema=data.get("schema") or GENERIC_SCHEMA,
        replica_specs_field=data["replicaSpecsField"],
        profile=data["profile"],
        operator_name=data["operatorName"],
        operator=data.get("operator", "training-operator"),
        default_container=data.get("defaultContainer"),
        default_port=Port(port["name"], int(port["number"])) if port else None,
        default_restart_policy=data["defaultRestartPolicy"],
        replica_types=tuple(
            ReplicaTypeRule(
                type=r["type"],
                required=bool(r.get("required", False)),
                exact_replicas=r.get("exactReplicas"),
                min_replicas=r.get("minReplicas"),
                max_replicas=r.get("maxReplicas"),
                default_replicas=int(r.get("defaultReplicas", 1)),
            )
            for r in data["replicaTypes"]
        ),
        unknown_replica_types=_unknown_types(data, file),
        env_containers=data["envContainers"],
        start_order=tuple(StartRule(s["type"], s["after"], s["status"], s.get("operatorWait"), _noted_when(s.get("notedByProfile"), file))
                          for s in data.get("startOrder") or ()),
        success=tuple(
            SuccessRule(
                operator=s["operator"],
                targets=tuple(s["targets"]),
                exact=bool(s["exact"]),
                when=_when(s.get("when") or {}, file),
                note=s.get("note"),
            )
            for s in data["success"]
        ),
        master_role=tuple(data.get("masterRole") or ()),
        case_normalized_types=_case_normalized(data),
        **_without_default(data.get("withoutDefaultContainer"), file),
        validating_webhook=has_webhook,
        mutually_exclusive=tuple(tuple(g) for g in data.get("mutuallyExclusive") or ()),
        restart_policy_by_type=dict(data.get("restartPolicyByType") or {}),
        allowed_restart_policies=tuple(
            data.get("allowedRestartPolicies") or ("Always", "OnFailure", "Never", "ExitCode")
        ),
        operator_volumes={k: tuple(v) for k, v in (data.get("operatorVolumes") or {}).items()},
        upgrade_from=tuple(u.api_version for u in _upgrades(data, file)),
        upgrades=_upgrades(data, file),
        upgrade_contract=data.get("upgradeContract"),
        pod_addresses=data.get("podAddresses", POD_ADDRESSES[0]),
        named_pods=dict(data.get("namedPods") or {}),
        top_level_clean_pod_policy=bool(data.get("topLevelCleanPodPolicy", False)),
        webhook=webhook,
        file=file,
    )


# Conditions a success or start rule may test (plan._matches): has: T; elastic: bool; successPolicy: value;
# replicas: {T: n} (pods per type, an absent type has 0); only: [T...] (no other type has a pod);
# framework: {field: value} (the kind's own spec fields as parsed, defaults filled).
SUCCESS_WHEN_KEYS = ("has", "elastic", "successPolicy", "replicas", "only", "framework")


def _when(when: dict, file: str, what: str = "success rule") -> dict:
    unknown = sorted(set(when) - set(SUCCESS_WHEN_KEYS))
    if unknown:  # a misspelt condition would otherwise always hold
        raise ValueError(f"{file}: {what} condition {', '.join(unknown)} is not one of {', '.join(SUCCESS_WHEN_KEYS)}")
    return dict(when)


def _noted_when(value, file: str) -> dict | None:
    """startOrder's notedByProfile: true (always), false or absent (never), or a condition."""
    if isinstance(value, dict):
        return _when(value, file, "notedByProfile")
    return {} if value else None


def _case_normalized(data: dict) -> tuple[str, ...]:
    """normalizeReplicaTypeCase: true (every known type, the default), false (none) or a list of types."""
    known = tuple(r["type"] for r in data["replicaTypes"])
    value = data.get("normalizeReplicaTypeCase", True)
    if value is True:
        return known
    if value is False or value is None:
        return ()
    unknown = [t for t in value if t not in known]
    if unknown:
        raise ValueError(f"normalizeReplicaTypeCase names types that are not in replicaTypes: {', '.join(unknown)}")
    return tuple(value)


UNKNOWN_TYPE_RULES = ("refuse", "convert", "ignore")


def _unknown_types(data: dict, file: str) -> str:
    rule = data.get("unknownReplicaTypes")
    if rule is None:  # the older boolean spelling
        return "convert" if data.get("allowUnknownReplicaTypes") else "refuse"
    if rule not in UNKNOWN_TYPE_RULES:
        raise ValueError(f"{file}: unknownReplicaTypes {rule!r} is not one of {', '.join(UNKNOWN_TYPE_RULES)}")
    return rule


@lru_cache(maxsize=None)
def all_mappings() -> tuple[KindMapping, ...]:
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    out = []
    for path in sorted(data_dir("mappings").glob("*.yaml")):
        out.append(_from_data(yaml.load(path.read_text(encoding="utf-8")), path.name))
    return tuple(out)


def mapping_for(api_version: str | None, kind: str | None) -> KindMapping | None:
    """The mapping for a document's apiVersion/kind, or None when it is not a Kubeflow job we convert."""
    if not api_version or not kind:
        return None
    for m in all_mappings():
        if m.kind == kind and api_version in m.api_versions:
            return m
    return None


def convertible_mapping(api_version: str | None, kind: str | None) -> KindMapping | None:
    """The mapping of a job we convert: its own apiVersions, or an older one it is upgraded from."""
    found = mapping_for(api_version, kind)
    if found is not None or not api_version or not kind:
        return found
    return next((m for m in all_mappings() if m.kind == kind and api_version in m.upgrade_from), None)


def _kinds_in_mapping_files() -> tuple[str, ...]:
    """The kinds the mapping files declare, read from their `kind:` lines (no YAML loading: the
    pre-commit hook imports this on every commit). A new mapping file adds its kind everywhere."""
    import re

    kinds: list[str] = []
    for path in sorted(data_dir("mappings").glob("*.yaml")):
        m = re.search(r"(?m)^kind:\s*([A-Za-z][A-Za-z0-9]*)\s*(?:#.*)?$", path.read_text(encoding="utf-8"))
        if m and m.group(1) not in kinds:
            kinds.append(m.group(1))
    return tuple(kinds)


# Cheap text pre-filter data: kinds we convert, without loading any YAML.
JOB_KINDS = _kinds_in_mapping_files()


_FOLDED_KINDS = {k.lower(): k for k in JOB_KINDS}


def kubeflow_job_kind(doc) -> str | None:
    """The job kind (as the API spells it) of any document that is a Kubeflow job kind in a kubeflow.org group,
    whatever its version, stray spaces or letter case (`PytorchJob`: a kind no API server serves, which
    kubectl never applied), so that none is passed through silently; else None."""
    if not isinstance(doc, dict):
        return None
    kind, api = scalar_text(doc.get("kind")), scalar_text(doc.get("apiVersion"))
    if kind is None or api is None:
        return None
    kind = kind.strip() if kind.strip() in JOB_KINDS else _FOLDED_KINDS.get(kind.strip().lower())
    if kind is None:
        return None
    group = api.strip().split("/", 1)[0].strip()
    # kubeflow.org and its subgroups: the old standalone operators served e.g. xgboostjob.kubeflow.org
    return kind if group.startswith("kubeflow.org") or group.endswith(".kubeflow.org") else None


def supported_versions(kind: str) -> list[str]:
    return [v for m in all_mappings() if m.kind == kind for v in m.api_versions]


def readable_versions(kind: str) -> list[str]:
    """Every apiVersion of `kind` kf2jobset converts: the current ones, then the older ones it upgrades."""
    out = supported_versions(kind)
    return out + [v for m in all_mappings() if m.kind == kind for v in m.upgrade_from if v not in out]


def scalar_text(value) -> str | None:
    """A string, or the text of a tagged scalar (`!custom kubeflow.org/v1`), else None."""
    if isinstance(value, str):
        return value
    inner = getattr(value, "value", None) if hasattr(value, "tag") else None
    return inner if isinstance(inner, str) else None
