"""Schema coercion: a parsed value checked against the subset of JSON schema the extraction
schemas use, repairing instead of rejecting wherever the intent is clear (see :func:`coerce`)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ..errors import ModelOutputError

__all__ = ["SPLIT_RE", "Invalid", "coerce", "coerce_value"]


class Invalid(Exception):
    """A value that cannot be made to fit its schema (message: why)."""


_LEADING_NUMBER_RE = re.compile(r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)")
SPLIT_RE = re.compile(r"\s*[,;]\s*")
_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    names: dict[type, str] = {dict: "object", list: "array", str: "string"}
    return names.get(type(value), type(value).__name__)


def _as_object(data: Any, schema: dict, path: str, problems: list[str]) -> Any:
    if not isinstance(data, dict):
        raise Invalid
    props = schema.get("properties", {})
    missing = [k for k in schema.get("required", []) if data.get(k) is None]
    if missing:
        raise Invalid(f"missing required {', '.join(map(repr, missing))}")
    out = {}
    for key, value in data.items():
        if key not in props:
            if schema.get("additionalProperties", True) is not False:
                out[key] = value
            continue
        try:
            out[key] = coerce_value(value, props[key], f"{path}.{key}", problems)
        except Invalid as err:
            if key in schema.get("required", []):
                raise Invalid(f"required {key!r}: {err}") from None
            problems.append(f"{path}.{key}: dropped: {err}")
    return out


def _as_array(data: Any, schema: dict, path: str, problems: list[str]) -> Any:
    items = schema.get("items", {})
    if isinstance(data, str):
        text = data.strip()
        if text[:1] == "[" and text[-1:] == "]":
            text = text[1:-1]
        data = [p.strip().strip("\"'") for p in SPLIT_RE.split(text) if p.strip().strip("\"'")]
    elif not isinstance(data, list):
        data = [data]  # a single object (or scalar) where a list belongs
    out_list = []
    for n, item in enumerate(data):
        try:
            out_list.append(coerce_value(item, items, f"{path}[{n}]", problems))
        except Invalid as err:
            problems.append(f"{path}[{n}]: dropped: {err}")
    return out_list


def _as_string(data: Any) -> Any:
    if isinstance(data, str):
        return data
    if isinstance(data, bool) or data is None:
        raise Invalid
    if isinstance(data, (int, float)):
        return str(data)
    if isinstance(data, list) and all(isinstance(x, (str, int, float)) for x in data):
        return ", ".join(str(x) for x in data)
    raise Invalid


def _as_number(data: Any, kind: str, schema: dict, path: str, problems: list[str]) -> Any:
    if isinstance(data, bool):
        raise Invalid
    if isinstance(data, str):
        match = _LEADING_NUMBER_RE.match(data)
        if not match:
            raise Invalid
        data = float(match.group(1))
    if not isinstance(data, (int, float)) or not math.isfinite(data):
        raise Invalid
    low, high = schema.get("minimum"), schema.get("maximum")
    if kind == "integer" and isinstance(data, int) and (low is None or data >= low) and (
            high is None or data <= high):
        return data  # exact, however large
    num: float = float(data)
    if low is not None and num < low:
        problems.append(f"{path}: {num:g} clamped to minimum {low}")
        num = float(low)
    if high is not None and num > high:
        problems.append(f"{path}: {num:g} clamped to maximum {high}")
        num = float(high)
    return int(round(num)) if kind == "integer" else num


def _as_boolean(data: Any) -> Any:
    if isinstance(data, bool):
        return data
    if isinstance(data, (int, float, str)):
        text = str(data).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
    raise Invalid


def _as_type(data: Any, kind: str, schema: dict, path: str, problems: list[str]) -> Any:
    if kind == "object":
        return _as_object(data, schema, path, problems)
    if kind == "array":
        return _as_array(data, schema, path, problems)
    if kind == "string":
        return _as_string(data)
    if kind in ("number", "integer"):
        return _as_number(data, kind, schema, path, problems)
    if kind == "boolean":
        return _as_boolean(data)
    if kind == "null":
        if data is None:
            return None
        raise Invalid
    return data  # unknown type name: accept


def coerce_value(data: Any, schema: dict, path: str, problems: list[str]) -> Any:
    """:func:`coerce` for one value at ``path``; raises :class:`Invalid` instead of returning."""
    if "enum" in schema:
        allowed = schema["enum"]
        for option in allowed:
            if data == option or (isinstance(data, str) and isinstance(option, str)
                                  and data.strip().casefold() == option.casefold()):
                return option
        raise Invalid(f"{data!r} is not one of {allowed!r}")
    types = schema.get("type")
    if types is None:
        return data
    types = [types] if isinstance(types, str) else list(types)
    if data is None:
        if "null" in types:
            return None
        raise Invalid(f"expected {'/'.join(types)}, got null")
    errors = []
    for kind in types:
        try:
            return _as_type(data, kind, schema, path, problems)
        except Invalid as err:
            if str(err):
                errors.append(str(err))
    raise Invalid(errors[0] if errors else f"expected {'/'.join(types)}, got {_kind(data)}")


def coerce(data: Any, schema: dict) -> tuple[Any, list[str]]:
    """``(value, problems)``: ``data`` checked against (the used subset of) JSON schema.

    Supported: ``type`` (object, array, string, number, integer, boolean, null, or a list of
    them -- ``["string", "null"]`` is nullable), ``properties``, ``required``,
    ``additionalProperties: false``, ``items``, ``enum`` (case-insensitive for strings),
    ``minimum``/``maximum`` (clamped). Repairs: numeric strings ("8", "0.9") become numbers, a
    string where an array belongs is split on commas/semicolons, a single value where an array
    belongs is wrapped, invalid array items and invalid optional fields are dropped. Each repair
    that loses or changes data is described in ``problems``. Raises
    :class:`ModelOutputError` only when the top-level value itself cannot be made to fit.
    """
    problems: list[str] = []
    try:
        return coerce_value(data, schema, "$", problems), problems
    except Invalid as err:
        raw = json.dumps(data, default=str, ensure_ascii=False)[:4000]
        raise ModelOutputError(f"output does not match the schema: {err}", raw) from None
