"""The merge compares a variant's conversion with the base's keys in the base's order (kf2jobset writes a
field it adds to where the job had it, or last when the job had none): chart/reorder.py."""
from __future__ import annotations

from kf2jobset.sources.chart.reorder import reorder_like

BASE = """\
spec:
  containers:
    - name: pytorch
      image: img
      env:
        - name: A
          value: "1"
      resources: {}
      ports:
        - containerPort: 1
  restartPolicy: Never""".split("\n")

MOVED = """\
spec:
  containers:
    - name: pytorch
      image: img
      # a comment stays with its key
      resources: {}
      ports:
        - containerPort: 1
      env:
        - name: A
          value: "1"
  restartPolicy: Never""".split("\n")


def test_keys_follow_the_reference_order_and_comments_move_with_their_key():
    out = reorder_like(MOVED, BASE)
    assert out == [
        "spec:", "  containers:", "    - name: pytorch", "      image: img", "      env:", "        - name: A",
        '          value: "1"', "      # a comment stays with its key", "      resources: {}", "      ports:",
        "        - containerPort: 1", "  restartPolicy: Never"]


def test_lists_keep_their_order_and_unknown_keys_stay_after_their_neighbour():
    reference = ["a:", "  - x", "  - y", "b: 1", "c: 2"]
    lines = ["c: 2", "new: 3", "a:", "  - y", "  - x", "b: 1"]
    assert reorder_like(lines, reference) == ["a:", "  - y", "  - x", "b: 1", "c: 2", "new: 3"]


def test_a_list_at_its_keys_indentation_belongs_to_the_key():
    reference = ["k:", "- a", "z: 1"]
    assert reorder_like(["z: 1", "k:", "- a"], reference) == reference
