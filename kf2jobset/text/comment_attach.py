"""Comments re-attached to the output objects: every ruamel comment is stripped from the outputs, then
each comment owned in the source (kf2jobset.text.comments) goes where its block lives in the output, at
the same column relative to the block's children (see kf2jobset.text.comments for the whole story)."""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from .comment_targets import PathMap
from .comments import Lines, Owned, get_path

def commented(obj: Any) -> Any:
    """dict/list -> CommentedMap/CommentedSeq (kept if already), every old comment removed."""
    from ruamel.yaml.comments import Comment, CommentedMap, CommentedSeq, merge_attrib

    return _commented(obj, Comment, CommentedMap, CommentedSeq, merge_attrib)


def _commented(obj: Any, ca_type, map_type, seq_type, merge_attrib) -> Any:
    if isinstance(obj, dict):
        if isinstance(obj, map_type):
            setattr(obj, ca_type.attrib, ca_type())
            if getattr(obj, merge_attrib, None):  # assigning every key makes merged keys the map's own
                for k in list(obj.keys()):
                    obj[k] = _commented(obj[k], ca_type, map_type, seq_type, merge_attrib)
                return obj
            for k, v in list(dict.items(obj)):  # ruamel's own views iterate slowly
                new = _commented(v, ca_type, map_type, seq_type, merge_attrib)
                if new is not v:
                    obj[k] = new
            return obj
        out = map_type()
        for k, v in obj.items():
            out[k] = _commented(v, ca_type, map_type, seq_type, merge_attrib)
        return out
    if isinstance(obj, list):
        if isinstance(obj, seq_type):
            setattr(obj, ca_type.attrib, ca_type())
            for i, v in enumerate(obj):
                new = _commented(v, ca_type, map_type, seq_type, merge_attrib)
                if new is not v:
                    obj[i] = new
            return obj
        out = seq_type()
        out.extend(_commented(v, ca_type, map_type, seq_type, merge_attrib) for v in obj)
        return out
    return obj


def _is_flow(node) -> bool:
    fa = getattr(node, "fa", None)
    return fa is not None and fa.flow_style()


def _column(obj: Any, path: Sequence, style) -> int | None:
    """Output column of the key (map) or dash (sequence item) at `path`; None inside flow style.

    Follows ruamel's block layout for `yaml.indent(mapping, sequence, offset)`: a nested map's keys
    sit `mapping` columns right of its key, a nested sequence's dashes `offset` columns right of it,
    and an item's content `sequence - offset` columns right of its dash."""
    indent = 0  # keys of the current map / dashes of the current sequence
    node, col = obj, 0
    for part in path:
        if _is_flow(node):
            return None
        col = indent
        child = node[part]
        base = indent if isinstance(node, dict) else indent + (style.sequence - style.offset)
        if isinstance(child, dict):
            indent = base + (style.mapping if isinstance(node, dict) else 0)
        elif isinstance(child, list):
            indent = base + (style.offset if isinstance(node, dict) else 0)
        node = child
    return col


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except Exception:  # pragma: no cover - exotic scalars
        return False


def _match_item(src: list, i: int, out: list) -> int | None:
    """Index in `out` of the item that source item `i` became: the same item (where it was, else
    anywhere), else the item with its `name` (a container kf2jobset rewrote), else the same index
    when nothing was inserted or removed."""
    item = src[i]
    if i < len(out) and _same(out[i], item):
        return i
    for j, o in enumerate(out):
        if _same(o, item):
            return j
    if isinstance(item, dict) and item.get("name") is not None:
        for j, o in enumerate(out):
            if isinstance(o, dict) and o.get("name") == item.get("name"):
                return j
    return i if len(out) == len(src) and i < len(out) else None


def _settle(source: Any, src_path: tuple, out_obj: Any, out_path: tuple) -> tuple | None:
    """`out_path` with its sequence indices checked against the items themselves: where the output
    is the source carried over (the common tail of both paths), kf2jobset may have added or merged
    items (env, volumes, containers). None: the source item has no counterpart."""
    n = 0
    while n < min(len(src_path), len(out_path)) and src_path[-1 - n] == out_path[-1 - n]:
        n += 1
    if n == 0 or source is None:
        return out_path
    found_s, _, s = get_path(source, src_path[:len(src_path) - n])
    found_o, _, o = get_path(out_obj, out_path[:len(out_path) - n])
    if not (found_s and found_o):
        return out_path
    fixed = list(out_path[:len(out_path) - n])
    for part in src_path[len(src_path) - n:]:
        if isinstance(part, int):
            if not (isinstance(s, list) and isinstance(o, list) and 0 <= part < len(s)):
                return out_path
            j = _match_item(s, part, o)
            if j is None:
                return None
            s, o = s[part], o[j]
            fixed.append(j)
        else:
            if not (isinstance(s, dict) and isinstance(o, dict) and part in s and part in o):
                return out_path
            s, o = s[part], o[part]
            fixed.append(part)
    return tuple(fixed)


class _Targets:
    """Source path -> (output index, path in that output), with sequence indices settled."""

    def __init__(self, outputs: list, pm: PathMap, source: Any):
        self.outputs, self.pm, self.source = outputs, pm, source
        self.memo: dict[tuple, Any] = {}

    def __call__(self, path: tuple) -> tuple[int, tuple] | None:
        if path not in self.memo:
            self.memo[path] = self._target(path)
        return self.memo[path]

    def _target(self, path: tuple) -> tuple[int, tuple] | None:
        where = self.pm.target(path)
        if where is None or where[0] < 0 or where[0] >= len(self.outputs):
            return None
        fixed = _settle(self.source, path, self.outputs[where[0]], where[1])
        return None if fixed is None else (where[0], fixed)

    def node(self, where) -> tuple[bool, Any]:
        found, _, node = get_path(self.outputs[where[0]], where[1])
        return found, node


def _children_column(obj: Any, path: tuple, node: Any, style) -> int | None:
    """Output column of the keys / dashes of the non-empty block collection at `path`."""
    if not isinstance(node, (dict, list)) or not node or _is_flow(node):
        return None
    first = next(iter(node)) if isinstance(node, dict) else 0
    return _column(obj, path + (first,), style)


def _next_slot(obj: Any, path: tuple) -> tuple | None:
    """(parent path, key) of the node written right after the subtree at `path`; None: the document ends."""
    for i in range(len(path), 0, -1):
        ppath, key = path[:i - 1], path[i - 1]
        found, _, parent = get_path(obj, ppath)
        if not found:
            return None
        if isinstance(parent, dict):
            keys = list(parent)
            j = keys.index(key)
            if j + 1 < len(keys):
                return ppath, keys[j + 1]
        elif isinstance(parent, list) and key + 1 < len(parent):
            return ppath, key + 1
    return None


def _last_leaf_column(obj: Any, path: tuple, style) -> int | None:
    """If the last thing written inside the subtree at `path` is a multi-line string (a block scalar),
    the column a comment line after it must not exceed (deeper, it would be read as the string's text)."""
    node = get_path(obj, path)[2]
    while isinstance(node, (dict, list)) and node and not _is_flow(node):
        key = next(reversed(node)) if isinstance(node, dict) else len(node) - 1
        path, node = path + (key,), node[key]
    if isinstance(node, str) and "\n" in node and path:
        return _column(obj, path, style)
    return None


def attach(outputs: list, owned: Iterable, pm: PathMap, style, source: Any = None) -> tuple[int, dict[int, list[tuple[int, str]]]]:
    """Attach owned comments to the outputs (already `commented`). Returns how many comment lines
    had no place to go, and the comment lines that go after the last line of each output."""
    targets = _Targets(outputs, pm, source)
    dropped = 0
    slots: dict[tuple, list] = {}  # (output, parent path, key) or (output,) -> [(order, group)]
    owned = list(owned)
    for item in owned:
        if isinstance(item, Lines):
            _restore_empty(item, targets)  # before any place is computed: it adds a key
    targets.memo.clear()
    for item in owned:
        if isinstance(item, Lines):
            placed = _place_lines(item, targets, style)
            if placed is None:
                dropped += len([t for _, t in item.lines if t])
            else:
                slot, order, rows = placed
                slots.setdefault(slot, []).append((order, item, rows))
        elif not _attach_eol(item, outputs, targets, style):
            dropped += len([t for t in item.lines if t])
    return dropped, _write_slots(slots, outputs)


def _attach_eol(item: Owned, outputs: list, targets: _Targets, style) -> bool:
    """Put an end-of-line comment on its field's line in the output; False when the field has no line there."""
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    where = targets(item.path)
    if where is None or not where[1]:
        return False
    out_index, path = where
    found, parent, node = get_path(outputs[out_index], path)
    if item.eol and found and isinstance(parent, list) and isinstance(node, dict) and node and not _is_flow(node):
        path = path + (next(iter(node)),)  # `- key: value  # c`: the comment goes on the item's first line
        found, parent, node = get_path(outputs[out_index], path)
    if not found or parent is None or _is_flow(parent) or not hasattr(parent, "ca"):
        return False
    key = path[-1]
    col = _column(outputs[out_index], path, style)
    if col is None:
        return False
    entry = parent.ca.items.setdefault(key, [None, None, None, None])
    target_col = col + (style.sequence - style.offset if isinstance(key, int) else 0)
    token = CommentToken(item.lines[0], CommentMark(max(target_col + item.delta, 0)))
    if isinstance(parent, list):
        entry[0] = token
    else:
        entry[2] = token
    return True


def _write_slots(slots: dict, outputs: list) -> dict[int, list[tuple[int, str]]]:
    """The comment lines of each slot, in order, written above their key; those of an output's end returned."""
    from ruamel.yaml.error import CommentMark
    from ruamel.yaml.tokens import CommentToken

    trailing: dict[int, list[tuple[int, str]]] = {}
    for slot, entries in slots.items():
        entries.sort(key=lambda e: e[0])
        rows: list[tuple[int, str]] = []
        prev = None
        for _, item, item_rows in entries:
            if prev is not None and prev.run == item.run and item.gap:
                rows += [(0, "")] * item.gap
            rows += item_rows
            prev = item
        if len(slot) == 1:
            trailing[slot[0]] = rows
            continue
        out_index, ppath, key = slot
        parent = get_path(outputs[out_index], ppath)[2]
        entry = parent.ca.items.setdefault(key, [None, None, None, None])
        tokens = entry[1] if entry[1] is not None else []
        for col, text in rows:
            tokens.append(CommentToken((text + "\n") if text else "\n", CommentMark(col)))
        entry[1] = tokens
    return trailing


def _place_lines(item: Lines, targets: _Targets, style):
    """(slot, order, [(column, text)]) for a Lines group, or None when it has no place to go.

    Prose above a field goes wherever that field went (gone: the comment is too). Otherwise the
    group goes to its block's counterpart in the output (for a commented-out key: the block where
    that field lives in the JobSet), before the child that followed it in v1, else after the one
    that preceded it, else at the block's end, at the same column relative to the block's children."""
    if item.kind == "prose" and item.before is not None:
        nxt = targets(item.block + (item.before,))
        if nxt is None or not nxt[1] or not targets.node(nxt)[0]:
            return None
        obj = targets.outputs[nxt[0]]
        col = _column(obj, nxt[1], style)
        if col is None:
            return None
        slot = (nxt[0], nxt[1][:-1], nxt[1][-1])
        return slot, (1, -len(slot[1]), item.line), _rows(item, col, _slot_limit(obj, slot, style))
    block = _target_block(item, targets)
    if block is None:
        return None
    out_index, tpath = block
    obj = targets.outputs[out_index]
    cols = _children_column(obj, tpath, get_path(obj, tpath)[2], style)
    if cols is None:
        return None

    def child(key):
        return _child(item, targets, block, key)

    before, after = child(item.before), child(item.after)
    if item.under_after and after is not None:
        filled = _filled(item, targets, out_index, tpath + (after,), style)
        if filled is not None:
            return filled
    if before is not None and not (item.under_after and after is not None):
        slot = (out_index, tpath, before)
    else:
        nxt = _next_slot(obj, tpath + (after,) if after is not None else tpath)
        slot = (out_index,) if nxt is None else (out_index, *nxt)
    order = (1 if len(slot) == 3 and slot[1] == tpath else 0, -len(tpath), item.line)
    return slot, order, _rows(item, cols, _slot_limit(obj, slot, style))


def _filled(item: Lines, targets: _Targets, out_index: int, path: tuple, style):
    """A comment under a key that is empty in v1 (`env:` over `#- name: X`) and that kf2jobset filled
    (its own env entries come after the user's): the comment goes above the first of them, as the
    first of the key's children."""
    obj = targets.outputs[out_index]
    found, _, value = get_path(targets.source, item.block + (item.after,))
    node = get_path(obj, path)[2]
    if not found or value is not None or not isinstance(node, (dict, list)) or not node:
        return None
    col = _children_column(obj, path, node, style)
    if col is None:
        return None
    first = next(iter(node)) if isinstance(node, dict) else 0
    slot = (out_index, path, first)
    return slot, (1, -len(path), item.line), _rows(item, col - item.lines[0][0], None)


def _child(item: Lines, targets: _Targets, block: tuple, key) -> Any:
    """The output key/index, inside the output block, of the source block's child `key` (None: not there)."""
    t = None if key is None else targets(item.block + (key,))
    if t is None or t[0] != block[0] or t[1][:-1] != block[1] or not targets.node(t)[0]:
        return None
    return t[1][-1]


def _restore_empty(item: Lines, targets: _Targets) -> None:
    """The comment continues a key whose value is empty in v1 (`limits:` above `#  cpu: 4`), which the
    JobSet leaves out (null and absent mean the same): put the empty key back so that uncommenting the
    lines gives them their key again."""
    if item.kind == "prose" and item.before is not None or not item.under_after:
        return
    block = _target_block(item, targets)
    if block is None or _child(item, targets, block, item.after) is not None:
        return
    node = get_path(targets.outputs[block[0]], block[1])[2]
    found, _, value = get_path(targets.source, item.block + (item.after,))
    where = targets.pm.target(item.block + (item.after,))
    if not found or value is not None or where is None or (where[0], where[1][:-1]) != block or \
            not isinstance(node, dict) or not hasattr(node, "insert") or where[1][-1] in node:
        return
    src_parent = get_path(targets.source, item.block)[2]
    keys = list(src_parent)
    position = 0
    for earlier in reversed(keys[:keys.index(item.after)]):
        out_key = _child(item, targets, block, earlier)
        if out_key is not None and out_key in node:
            position = list(node).index(out_key) + 1
            break
    node.insert(position, where[1][-1], None)


def _target_block(item: Lines, targets: _Targets) -> tuple[int, tuple] | None:
    if item.kind == "key" and isinstance(item.key, str):
        field_at = targets.pm.target(item.block + (item.key,))
        if field_at is None or not field_at[1]:
            return None  # the field has no place in the JobSet: neither has the commented-out line
        parent = (field_at[0], field_at[1][:-1])
        own = targets.pm.target(item.block)
        if own is not None and own == parent:
            parent = targets(item.block)  # the block itself, its sequence indices settled
        if parent is not None and 0 <= parent[0] < len(targets.outputs):
            found, node = targets.node(parent)
            if found and isinstance(node, dict) and node and not _is_flow(node):
                return parent
    where = targets(item.block)
    if where is None or not targets.node(where)[0]:
        return None
    return where


def _slot_limit(obj: Any, slot: tuple, style) -> int | None:
    """The deepest column a comment line may take in `slot` (after a block scalar, deeper is its text)."""
    if len(slot) == 1:
        return _last_leaf_column(obj, (), style)
    _, ppath, key = slot
    parent = get_path(obj, ppath)[2]
    keys = list(parent) if isinstance(parent, dict) else list(range(len(parent)))
    k = keys.index(key)
    return None if k == 0 else _last_leaf_column(obj, ppath + (keys[k - 1],), style)


def _rows(item: Lines, base: int, limit: int | None) -> list[tuple[int, str]]:
    rows = []
    for rel, text in item.lines:
        if not text:
            rows.append((0, ""))
            continue
        col = max(base + rel, 0)
        if limit is not None:
            col = min(col, limit)
        rows.append((col, text))
    return rows
