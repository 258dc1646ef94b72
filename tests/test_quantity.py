"""kf2jobset/k8s/quantity.py: quantities read as Go's resource.ParseQuantity and Quantity.String() read
them (apimachinery v0.36.3 quantity.go). The live counterpart, against the real webhook and Job
API, is tools/validator_vs_apiserver.py (and its slice in tests/live)."""
from __future__ import annotations

from decimal import Decimal

import pytest

from kf2jobset.k8s.quantity import go_string, parse_quantity


@pytest.mark.parametrize("text,amount", [
    ("500m", Decimal("0.5")), ("1.5Gi", Decimal(1610612736)), ("1e3", Decimal(1000)), ("1E", Decimal(10) ** 18),
    ("1n", Decimal("1e-9")), (" 1", Decimal(1)), (".", Decimal(0)), ("+", Decimal(0)), ("5.", Decimal(5)),
    (0.5, Decimal("0.5")), (3, Decimal(3)), ("-1", Decimal(-1)),
])
def test_what_go_reads(text, amount):
    assert parse_quantity(text) == amount


@pytest.mark.parametrize("text", ["", "1e", "1e1.5", "1ki", "1.5.5", "0x10", "abc", "1\n", True, None, float("nan")])
def test_what_go_refuses(text):
    # "1\n": Quantity.UnmarshalJSON parses the JSON bytes without unescaping (a backslash and an n)
    assert parse_quantity(text) is None


@pytest.mark.parametrize("text,string", [
    ("1", "1"), ("+1", "+1"), ("1.0", "1"), ("1000m", "1"), ("0.001", "1m"), ("1Ki", "1Ki"), ("1e3", "1e3"),
    (0.5, "500m"), ("1.5", "1500m"), (".5", "500m"), ("2048", "2048"), ("0.0000000001", "1n"),
])
def test_string_as_go_writes_it(text, string):
    """String(): the text itself when ParseQuantity keeps it as canonical, else the canonical form
    (a divisor is compared by this: "1" is allowed for cpu, "+1" is not)."""
    assert go_string(text) == string
