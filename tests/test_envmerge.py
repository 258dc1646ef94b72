"""envmerge: one entry per name, every variable resolving to the value it had with the repeats."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kf2jobset.core.envmerge import SHADOW_PREFIX, merge_env
from kf2jobset.runtime.compare import effective
from kf2jobset.runtime.pods import Pod, resolve_env


def _resolved(entries):
    pod = Pod(role="worker", index=0, name="p", namespace="ns", ip="10.0.0.1")
    return {n: v for n, v in effective(resolve_env(entries, pod)) if not n.startswith(SHADOW_PREFIX)}


def e(name, value):
    return {"name": name, "value": value}


def test_unread_user_entry_is_dropped_and_the_later_one_kept_in_place():
    merged, overrides = merge_env([e("A", "1"), e("B", "x"), e("A", "2")])
    assert merged == [e("B", "x"), e("A", "2")]
    assert [(o.name, o.renamed_to) for o in overrides] == [("A", None)]


def test_an_entry_read_before_the_override_is_renamed_and_its_readers_follow():
    merged, overrides = merge_env([e("A", "1"), e("B", "$(A)-$$(A)"), e("A", "2"), e("C", "$(A)")])
    assert merged == [e(SHADOW_PREFIX + "A", "1"), e("B", f"$({SHADOW_PREFIX}A)-$$(A)"), e("A", "2"), e("C", "$(A)")]
    assert overrides[0].readers == ("B",)
    assert _resolved(merged) == {"B": "1-$(A)", "A": "2", "C": "2"}


def test_three_entries_and_a_taken_shadow_name():
    entries = [e(SHADOW_PREFIX + "A", "keep"), e("A", "1"), e("X", "$(A)"), e("A", "2"), e("Y", "$(A)"), e("A", "3")]
    merged, overrides = merge_env(entries)
    assert [m["name"] for m in merged] == [SHADOW_PREFIX + "A", SHADOW_PREFIX + "A_2", "X", SHADOW_PREFIX + "A_3", "Y", "A"]
    assert _resolved(merged) == _resolved(entries)
    assert len(overrides) == 2


def test_no_repeats_is_the_identity():
    entries = [e("A", "1"), {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
    assert merge_env(entries) == (entries, [])


NAMES = st.sampled_from(["A", "B", "C"])
VALUES = st.sampled_from(["1", "$(A)", "$(B)x", "$$(C)", "$(C)$(A)"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.builds(e, NAMES, VALUES), max_size=8))
def test_merging_keeps_every_resolved_value_and_leaves_no_repeat(entries):
    merged, _ = merge_env(entries)
    names = [m["name"] for m in merged]
    assert len(names) == len(set(names))
    assert _resolved(merged) == _resolved(entries)
