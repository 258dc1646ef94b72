"""Kubernetes resource quantities read the way Go reads them (apimachinery resource.ParseQuantity).

The JobSet webhooks decode a JobSet into Go types before the API server checks its schema: a
quantity given as a JSON number (`cpu: 0.5`) or as a string with surrounding blanks is read by
`Quantity.UnmarshalJSON` (which trims blanks) and written back in canonical form, and anything
`ParseQuantity` refuses makes the webhook deny the request. Pure functions.
"""
from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation, localcontext

# ParseQuantity's scanner: sign, digits, fraction, suffix letters, an optional sign and exponent digits
_SCAN = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[+-]?[0-9]*)\Z")
_DECIMAL = {"": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_INT64 = 2 ** 63
_GO_SPACE = " \t\n\v\f\r\x85\xa0"  # unicode.IsSpace for Latin-1; strings.TrimSpace trims these (and wider spaces)


def parse_quantity(value) -> Decimal | None:
    """The amount `value` (a JSON number or a string) stands for, or None when Go refuses it."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if value != value or value in (float("inf"), float("-inf")):
            return None
        return Decimal(value) if isinstance(value, int) else Decimal(repr(value))
    if not isinstance(value, str):
        return None
    text = _go_json_text(value).strip(_GO_SPACE + "\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
    if not text:
        return None
    if text == "0":
        return Decimal(0)
    m = _SCAN.match(text)
    if not m:
        return None
    sign, whole, frac, suffix = m.group(1), m.group(2), m.group(3) or "", m.group(4)
    if suffix in _DECIMAL:
        exponent, base = _DECIMAL[suffix], 10
    elif suffix in _BINARY:
        exponent, base = _BINARY[suffix], 2
    elif len(suffix) > 1 and suffix[0] in "eE" and re.fullmatch(r"[+-]?[0-9]+", suffix[1:]) and -_INT64 <= int(suffix[1:]) < _INT64:
        exponent, base = int(suffix[1:]), 10
    else:
        return None
    number = Decimal(f"{sign}{whole or '0'}.{frac or '0'}")
    with localcontext() as ctx:
        ctx.prec, ctx.Emax, ctx.Emin = 60, 10 ** 9, -10 ** 9
        try:
            return number * (Decimal(2) ** exponent if base == 2 else Decimal(10) ** max(min(exponent, 10 ** 6), -10 ** 6))
        except (ArithmeticError, InvalidOperation):
            return None


def _go_json_text(value: str) -> str:
    """The string as it sits between the quotes of the JSON the API server hands the webhook (Go's
    encoder): Quantity.UnmarshalJSON parses those bytes without unescaping them, so a newline inside
    is the two characters backslash and n, which no quantity has."""
    import json

    text = json.dumps(value, ensure_ascii=False)[1:-1]
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def canonical(amount: Decimal) -> str:
    """A plain decimal string for `amount` (the quantity pattern accepts it; Go would pick a suffix)."""
    text = format(amount.normalize(), "f") if amount else "0"
    return text
