"""YAML read as strictly as Kubernetes reads it, on libyaml's composed nodes before anything builds a tree:
duplicate keys, non-scalar keys and core tags that do not fit their node or value are errors."""
from __future__ import annotations

_CORE = "tag:yaml.org,2002:"
_SCALAR_TAGS = {_CORE + t for t in ("bool", "int", "float", "null", "timestamp", "binary")}
_MAPPING_TAGS = (_CORE + "map", _CORE + "omap", _CORE + "pairs", _CORE + "set")
_SEQUENCE_TAGS = (_CORE + "seq", _CORE + "omap", _CORE + "pairs")
_COLLECTION_TAGS = (_CORE + "map", _CORE + "seq", _CORE + "set", _CORE + "omap", _CORE + "pairs")


def strict_loader():
    """`check(text) -> (error or None, documents)`: PyYAML (libyaml when available), YAML 1.1 like
    Kubernetes; unknown local tags are accepted as their plain values, broken core tags are not."""
    try:
        import yaml as pyyaml
    except ImportError:  # pragma: no cover - PyYAML is a dependency
        return lambda text: (None, [], [])
    base = getattr(pyyaml, "CSafeLoader", pyyaml.SafeLoader)
    resolver = pyyaml.resolver.Resolver()

    def check(text: str):
        """(error or None, apiVersion/kind of each document, libyaml's composed nodes)."""
        try:
            roots = list(pyyaml.compose_all(text, Loader=base))
        except Exception as exc:  # noqa: BLE001
            if not isinstance(exc, pyyaml.YAMLError):
                exc = pyyaml.YAMLError(f"cannot read a value: {type(exc).__name__}: {exc}")
            return exc, [], []
        for root in roots:
            err = _problem(pyyaml, resolver, root) if root is not None else None
            if err is not None:
                return err, [], []
        return None, [_top(pyyaml, r) for r in roots], roots

    return check


def _problem(pyyaml, resolver, root):
    """Duplicate keys and broken core tags, walking the composed nodes (no construction)."""
    constructor = None
    stack = [root]
    seen_nodes = set()
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        tag = node.tag or ""
        if isinstance(node, pyyaml.MappingNode):
            err = _mapping_problem(pyyaml, node, tag, stack)
            if err is not None:
                return err
        elif isinstance(node, pyyaml.SequenceNode):
            if tag.startswith(_CORE) and tag not in _SEQUENCE_TAGS:
                return pyyaml.constructor.ConstructorError(None, None, f"a sequence cannot have the tag {tag}", node.start_mark)
            stack += node.value
        elif tag in _SCALAR_TAGS and resolver.resolve(pyyaml.ScalarNode, node.value, (True, False)) != tag:
            if constructor is None:
                constructor = pyyaml.constructor.SafeConstructor()
            err = _tagged_scalar_problem(pyyaml, constructor, node, tag)
            if err is not None:
                return err
        elif tag.startswith(_CORE) and tag in _COLLECTION_TAGS:
            return pyyaml.constructor.ConstructorError(None, None, f"a scalar cannot have the tag {tag}", node.start_mark)
    return None


def _mapping_problem(pyyaml, node, tag: str, stack: list):
    """A mapping's own problem (its tag, a key that is not a scalar, a key given twice), or None with its
    keys and values pushed on `stack` to be walked."""
    if tag.startswith(_CORE) and tag not in _MAPPING_TAGS:
        return pyyaml.constructor.ConstructorError(None, None, f"a mapping cannot have the tag {tag}", node.start_mark)
    keys = set()
    for key, value in node.value:
        if not isinstance(key, pyyaml.ScalarNode):  # sigs.k8s.io/yaml: "invalid map key"
            return pyyaml.constructor.ConstructorError("while constructing a mapping", node.start_mark,
                                                       "a mapping key must be a scalar", key.start_mark)
        if key.tag != _CORE + "merge":
            ident = (key.tag, key.value)
            if ident in keys:
                return pyyaml.constructor.ConstructorError("while constructing a mapping", node.start_mark,
                                                           f"found duplicate key {key.value!r}", key.start_mark)
            keys.add(ident)
        stack += (key, value)
    return None


def _tagged_scalar_problem(pyyaml, constructor, node, tag: str):
    """An explicit core tag on a scalar that does not read as that tag: does the value fit it?"""
    try:
        constructor.construct_object(node, deep=True)
    except Exception as exc:  # noqa: BLE001 - KeyError/ValueError for `!!bool maybe`
        return pyyaml.constructor.ConstructorError(None, None, f"cannot read {node.value!r} as {tag}: {exc}",
                                                   node.start_mark)
    return None


def _top(pyyaml, root) -> dict:
    """The document's top-level apiVersion and kind, where they are plain scalars."""
    out = {}
    if isinstance(root, pyyaml.MappingNode):
        for key, value in root.value:
            if isinstance(key, pyyaml.ScalarNode) and isinstance(value, pyyaml.ScalarNode) \
                    and key.value in ("kind", "apiVersion"):
                out[key.value] = value.value
    return out
