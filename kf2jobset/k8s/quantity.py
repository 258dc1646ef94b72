"""Kubernetes resource quantities read the way Go reads them (apimachinery resource.ParseQuantity).

The JobSet webhooks decode a JobSet into Go types before the API server checks its schema: a
quantity given as a JSON number (`cpu: 0.5`) or as a string with surrounding blanks is read by
`Quantity.UnmarshalJSON` (which trims blanks) and written back in canonical form, and anything
`ParseQuantity` refuses makes the webhook deny the request. Pure functions.
"""
from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation, localcontext

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
    text = _go_json_text(value).strip(_GO_SPACE + "\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
                                                  "\u2028\u2029\u202f\u205f\u3000")
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


_SI_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BIN_SUFFIX = {10: "Ki", 20: "Mi", 30: "Gi", 40: "Ti", 50: "Pi", 60: "Ei"}


def go_string(value) -> str | None:
    """Quantity.String() of what Go reads from `value` (None when it cannot): the text as written
    when ParseQuantity keeps it (it is already canonical), else the canonical form. Validation
    compares some quantities by this string (a resourceFieldRef divisor: "1" passes, "+1" not)."""
    amount = parse_quantity(value)
    if amount is None:
        return None
    if not isinstance(value, str):
        value = repr(value) if isinstance(value, float) else str(value)
        if "e" in value or "E" in value or "." in value:  # the API server hands the webhook Go's rendering
            value = format(amount, "f").rstrip("0").rstrip(".") if "." in format(amount, "f") else format(amount, "f")
    text = _go_json_text(value).strip(_GO_SPACE)
    if text == "0":
        return text
    m = _SCAN.match(text)
    whole, frac, suffix = m.group(2).lstrip("0"), m.group(3) or "", m.group(4)
    shifted = (whole or "0") + frac
    if suffix in _BINARY:
        if not frac and _BINARY[suffix] % 10 == 0 and int(shifted) & 7:
            return text
        return _canonical(amount, binary=True)
    exponent = _DECIMAL.get(suffix)
    exponent_form = exponent is None
    if exponent_form:
        exponent = int(suffix[1:])
    scale = exponent - len(frac)
    if scale >= -9 and len(shifted) <= 18 and scale % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0":
        return text
    return _canonical(amount, exponent_form=exponent_form)


def _canonical(amount: Decimal, *, binary: bool = False, exponent_form: bool = False) -> str:
    """The canonical string of an amount (suffix chosen as Go's CanonicalizeBytes does for the usual cases)."""
    if amount == 0:
        return "0"
    sign = "-" if amount < 0 else ""
    amount = abs(amount)
    if binary and amount >= 1024 and amount == amount.to_integral_value():
        n, exp = int(amount), 0
        while n % 1024 == 0 and exp < 60:
            n //= 1024
            exp += 10
        if exp:
            return f"{sign}{n}{_BIN_SUFFIX[exp]}"
    # decimal: amounts below a nano round up to it; then the largest multiple-of-3 exponent with an integer mantissa
    with localcontext() as ctx:
        ctx.prec = 80
        amount = (amount * Decimal(10) ** 9).to_integral_value(rounding=ROUND_CEILING) / Decimal(10) ** 9
        best = None
        for exp in range(18, -10, -3):
            mantissa = amount / (Decimal(10) ** exp)
            if mantissa == mantissa.to_integral_value():
                best = (int(mantissa), exp)
                break
    if best is None:
        return f"{sign}{amount}"
    mantissa, exp = best
    if exponent_form:
        return f"{sign}{mantissa}" + (f"e{exp}" if exp else "")
    return f"{sign}{mantissa}{_SI_SUFFIX[exp]}"


def canonical(amount: Decimal, *, binary: bool = False) -> str:
    """An amount written as Quantity.String() writes it in the binary (Ki, Mi, ...) or the decimal format."""
    return _canonical(amount, binary=binary)


def go_sum(values) -> str | None:
    """Quantity.String() of the Go sum of `values` (Quantity.Add into a copy of the first): the format of
    the first non-zero amount, canonical form; one value is its own go_string. None when one is unreadable."""
    values = list(values)
    amounts = [parse_quantity(v) for v in values]
    if not values or any(a is None for a in amounts):
        return None
    if len(values) == 1:
        return go_string(values[0])
    first = next((v for v, a in zip(values, amounts, strict=False) if a != 0), values[0])
    text = _go_json_text(first if isinstance(first, str) else str(first)).strip(_GO_SPACE)
    m = _SCAN.match(text)
    suffix = m.group(4) if m else ""
    return _canonical(sum(amounts), binary=suffix in _BINARY, exponent_form=suffix[:1] in ("e", "E"))
