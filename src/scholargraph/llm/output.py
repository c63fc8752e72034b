"""LLM output as typed models: what a reply must hold is a pydantic model, the JSON schema sent as
``response_format`` is generated from it (:func:`output_schema`), and a reply -- JSON found and
repaired by :mod:`.repair` -- is validated against it leniently (:func:`validate`)::

    class Verdict(LenientModel):
        winner: Text
        score: Annotated[Number, Clamp(0, 10)] | None = None

    SCHEMA = output_schema(Verdict)      # {"type": "object", "properties": {...}, "required": ["winner"]}
    verdict = validate(parse_json(reply), Verdict, problems)   # or Invalid("why")

Lenient means what small models get wrong is repaired rather than rejected, each repair that
loses or changes data noted in ``problems``: numeric strings ("8", "0.9", "8/10") are numbers;
numbers out of a :class:`Clamp` range are clamped; a string where a list belongs is split on
commas/semicolons and a single value is wrapped (:data:`Items`); invalid list items and invalid
optional fields are dropped; ``None`` for a required field counts as missing; numbers become
text and a list of scalars becomes "a, b" (:data:`Text`); yes/no are booleans (:data:`Flag`);
enums match case-insensitively (:class:`OneOf`); keys the model does not name are kept. A field
may come under other keys (:class:`Keys`), a list of names as "a, b | c" (:data:`Names`), and a
reply that is a bare array or string may stand for one field (``LenientModel.bare_field``).
:func:`parse_reply` is the whole way from a raw answer to a model, or a
:class:`~scholargraph.errors.ModelOutputError` carrying the raw answer.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any, ClassVar, TypeVar, overload

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)
from pydantic_core import PydanticCustomError, core_schema

from ..errors import ModelOutputError
from .repair import parse_json

__all__ = ["NAME_SPLIT_RE", "SPLIT_RE", "Clamp", "Flag", "Integer", "Invalid", "Items", "Keys", "LenientModel",
           "Names", "Number", "OneOf", "Text", "coerce", "first_of", "names", "output_schema", "parse_reply",
           "validate"]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

SPLIT_RE = re.compile(r"\s*[,;]\s*")
NAME_SPLIT_RE = re.compile(r"\s*[,;|]\s*")
_LEADING_NUMBER_RE = re.compile(r"\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)")
_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}


class Invalid(ValueError):
    """A value that cannot be made to fit its model (message: why)."""


# --------------------------------------------------------------------------------------------
# Where a validation is (for the notes): the context dict carries "problems" and "path"
# --------------------------------------------------------------------------------------------


def _path(info: ValidationInfo) -> str:
    ctx = info.context if isinstance(info.context, dict) else {}
    base = ctx.get("path", "$")
    return f"{base}.{info.field_name}" if info.field_name else base


def _note(info: ValidationInfo, text: str) -> None:
    if isinstance(info.context, dict) and isinstance(info.context.get("problems"), list):
        info.context["problems"].append(text)


@contextmanager
def _at(info: ValidationInfo, path: str) -> Iterator[None]:
    ctx = info.context if isinstance(info.context, dict) else None
    if ctx is None:
        yield
        return
    before = ctx.get("path", "$")
    ctx["path"] = path
    try:
        yield
    finally:
        ctx["path"] = before


def _reason(err: ValidationError) -> str:
    """The first error of ``err`` as one short line (its location inside the value, then why)."""
    first = err.errors(include_url=False)[0]
    msg = str(first["msg"]).removeprefix("Value error, ")
    loc = ".".join(str(p) for p in first["loc"])
    return f"{loc}: {msg}" if loc else msg


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    names: dict[type, str] = {dict: "object", list: "array", str: "string"}
    return names.get(type(value), type(value).__name__)


# --------------------------------------------------------------------------------------------
# Lenient field types
# --------------------------------------------------------------------------------------------


def _text(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, list) and all(isinstance(x, (str, int, float)) for x in value):
        return ", ".join(str(x) for x in value)
    raise ValueError(f"expected string, got {_kind(value)}")


def _number(value: Any) -> Any:
    if isinstance(value, str):
        match = _LEADING_NUMBER_RE.match(value)
        if not match:
            raise ValueError(f"expected number, got {value[:40]!r}")
        value = float(match.group(1))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"expected number, got {_kind(value)}")
    return value


def _integer(value: Any) -> Any:
    value = _number(value)
    return value if isinstance(value, int) else int(round(value))


def _flag(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float, str)):
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
    raise ValueError(f"expected boolean, got {_kind(value)}")


def _split(text: str, pattern: re.Pattern[str], quotes: str = "") -> list[str]:
    return [p.strip().strip(quotes) for p in pattern.split(text) if p.strip().strip(quotes)]


def names(value: Any, split: re.Pattern[str] = NAME_SPLIT_RE) -> list[str]:
    """The names in ``value``, however a model lists them: a string split on ``split`` (commas,
    semicolons and bars by default: "a, b | c"), a list flattened with its strings split too,
    numbers as text; null, booleans and objects hold none. Never fails (:data:`Names`)."""
    if value is None or isinstance(value, (bool, dict)):
        return []
    if isinstance(value, list):
        return [n for v in value for n in names(v, split)]
    return _split(str(value), split)


def _items(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> list[Any]:
    if isinstance(value, str):
        text = value.strip()
        if text[:1] == "[" and text[-1:] == "]":
            text = text[1:-1]
        value = _split(text, SPLIT_RE, "\"'")
    elif not isinstance(value, list):
        value = [value]  # a single object (or scalar) where a list belongs
    path = _path(info)
    out: list[Any] = []
    for n, item in enumerate(value):
        with _at(info, f"{path}[{n}]"):
            try:
                out.extend(handler([item]))
            except ValidationError as err:
                _note(info, f"{path}[{n}]: dropped: {_reason(err).removeprefix('0: ').removeprefix('0.')}")
    return out


Text = Annotated[str, BeforeValidator(_text)]
Number = Annotated[float, BeforeValidator(_number)]
Integer = Annotated[int, BeforeValidator(_integer)]
Flag = Annotated[bool, BeforeValidator(_flag)]
Items = Annotated[list[T], WrapValidator(_items)]
Names = Annotated[list[str], BeforeValidator(names)]


def first_of(data: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The value of the first of ``keys`` in ``data`` that holds one (not null, "" or []), else None."""
    for key in keys:
        if data.get(key) not in (None, "", []):
            return data[key]
    return None


@dataclass(frozen=True, init=False)
class Keys:
    """``Annotated[Text, Keys("entity", "name")]``: the other keys a model may put the field under.
    The first of the field's own name and these keys that holds a value (not null, "" or []) is
    the field's value; when none holds one, the first that is there with "" or [] is (so
    ``{"entities": []}`` is an empty list, while an answer with none of the keys lacks the field).
    The schema names only the field itself."""

    names: tuple[str, ...] = field(default=())

    def __init__(self, *names: str):
        object.__setattr__(self, "names", names)


@lru_cache(maxsize=256)
def _variants(model: type[BaseModel]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``(field, (field, *other keys))`` for each field of ``model`` with :class:`Keys`."""
    return tuple((name, (name, *meta.names)) for name, info in model.model_fields.items()
                 for meta in info.metadata if isinstance(meta, Keys))


def _gather(data: dict[str, Any], variants: tuple[tuple[str, tuple[str, ...]], ...]) -> dict[str, Any]:
    """``data`` with each field's value taken from the first of its keys that holds one."""
    for name, keys in variants:
        key = next((k for k in keys if data.get(k) not in (None, "", [])), None) or next(
            (k for k in keys if data.get(k) is not None), None)
        if key is not None and key != name:
            data[name] = data.pop(key)
    return data


@dataclass(frozen=True)
class Clamp:
    """``Annotated[Number, Clamp(0, 10)]``: a number outside the range is clamped (and noted); the
    schema says ``minimum``/``maximum``."""

    low: float | None = None
    high: float | None = None

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.with_info_after_validator_function(self._clamp, handler(source))

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> Any:
        out = handler(schema)
        if self.low is not None:
            out["minimum"] = self.low
        if self.high is not None:
            out["maximum"] = self.high
        return out

    def _clamp(self, value: Any, info: ValidationInfo) -> Any:
        kind = type(value)
        if self.low is not None and value < self.low:
            _note(info, f"{_path(info)}: {value:g} clamped to minimum {self.low}")
            value = self.low
        if self.high is not None and value > self.high:
            _note(info, f"{_path(info)}: {value:g} clamped to maximum {self.high}")
            value = self.high
        return int(round(value)) if kind is int else float(value)


@dataclass(frozen=True, init=False)
class OneOf:
    """``Annotated[str, OneOf("Causal", "Risk Factor")]``: one of the options, matched
    case-insensitively (" causal " is "Causal"); the schema says ``enum``."""

    options: tuple[Any, ...] = field(default=())

    def __init__(self, *options: Any):
        object.__setattr__(self, "options", options)

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(self._match)

    def __get_pydantic_json_schema__(self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler) -> Any:
        return {"enum": list(self.options)}

    def _match(self, value: Any) -> Any:
        for option in self.options:
            if value == option or (isinstance(value, str) and isinstance(option, str)
                                   and value.strip().casefold() == option.casefold()):
                return option
        raise ValueError(f"{value!r} is not one of {list(self.options)!r}")


# --------------------------------------------------------------------------------------------
# Models
# --------------------------------------------------------------------------------------------


class LenientModel(BaseModel):
    """Base of every LLM reply model: unknown keys are kept, ``None`` for a required field is
    missing, and an optional field that does not validate is dropped (noted) instead of failing
    the object. Fields marked with :class:`Keys` are read from their key variants. A model whose
    ``bare_field`` names a field reads a bare array or string (where the object belongs) as that
    field's value: ``["a", "b"]`` is ``{"mentions": ["a", "b"]}``, ``"ANU"`` is ``{"text": "ANU"}``;
    a model that reads other shapes overrides :meth:`bare`."""

    model_config = ConfigDict(extra="allow")
    bare_field: ClassVar[str | None] = None

    @classmethod
    def bare(cls, data: Any) -> Any:
        """The object that ``data``, a reply that is not an object, stands for (else ``data``)."""
        if cls.bare_field and isinstance(data, (list, str)):
            return {cls.bare_field: data}
        return data

    @model_validator(mode="wrap")
    @classmethod
    def _lenient(cls, data: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
        if not isinstance(data, dict):
            data = cls.bare(data)
        if not isinstance(data, dict):
            if isinstance(data, BaseModel):
                return handler(data)
            raise PydanticCustomError("object_type", "expected object, got {kind}", {"kind": _kind(data)})
        data = _gather(dict(data), _variants(cls))
        fields = cls.model_fields
        missing = [k for k, f in fields.items() if f.is_required() and data.get(k) is None]
        if missing:
            raise PydanticCustomError("missing_required", "missing required {names}",
                                      {"names": ", ".join(map(repr, missing))})
        path = _path(info) if info.field_name is None else (info.context or {}).get("path", "$")
        while True:
            try:
                return handler(data)
            except ValidationError as err:
                first = err.errors(include_url=False)[0]
                key = first["loc"][0] if first["loc"] else None
                if not isinstance(key, str) or key not in data or key not in fields or fields[key].is_required():
                    where = f"required {key!r}: " if isinstance(key, str) and key in fields else ""
                    raise PydanticCustomError("invalid", "{reason}", {"reason": where + _reason(err)}) from None
                _note(info, f"{path}.{key}: dropped: {_reason(err).removeprefix(key + ': ')}")
                del data[key]


@overload
def validate(data: Any, model: type[M], problems: list[str] | None = None, path: str = "$") -> M: ...


@overload
def validate(data: Any, model: Any, problems: list[str] | None = None, path: str = "$") -> Any: ...


def validate(data: Any, model: Any, problems: list[str] | None = None, path: str = "$") -> Any:
    """``data`` (parsed JSON) as a ``model`` (a model class, or any type such as ``Items[Text]``),
    leniently; repairs that lost something are appended to ``problems``. Raises :class:`Invalid`
    (why) when ``data`` itself cannot fit."""
    return _validate(_adapter(model), data, problems, path)


def parse_reply(raw: str, model: type[M], problems: list[str] | None = None,
                placeholders: frozenset[str] = frozenset()) -> M:
    """A model's raw answer as ``model``: its JSON found and repaired (:func:`~.repair.parse_json`),
    without the prompt's example values (``placeholders``: :func:`example_placeholders`), then
    validated leniently (:func:`validate`). Raises :class:`ModelOutputError` (why, and the raw
    answer) when there is no JSON or it cannot fit: "answer does not match Model: why"."""
    value = parse_json(raw)
    if placeholders:
        value = without_placeholders(value, placeholders)
    try:
        return validate(value, model, problems)
    except Invalid as err:
        raise ModelOutputError(f"answer does not match {model.__name__}: {err}", raw) from None


# the string values of a prompt's reply example, e.g. {"text": "mention as written", "types": ["parent type"]}:
# a value follows a colon or opens a list (keys are followed by a colon and are not taken)
_EXAMPLE_VALUE = re.compile(r'(?::|\[)\s*"([^"]{2,80})"\s*(?=[,}\]])')
_DROPPED = object()


def example_placeholders(instructions: str) -> frozenset[str]:
    """The example values of the JSON reply format a prompt shows on its "Reply with JSON ..." line
    ("mention as written", "parent type", "one sentence", "entity"). Small local models copy them as
    data: Qwen2.5-Coder 0.5B gave "parent type" as a type and "one sentence" as a description."""
    values: set[str] = set()
    for line in instructions.splitlines():
        if "JSON" in line and "{" in line:
            values.update(v.strip().casefold() for v in _EXAMPLE_VALUE.findall(line))
    return frozenset(values)


def without_placeholders(value: Any, placeholders: frozenset[str]) -> Any:
    """``value`` (parsed JSON) without the strings that are one of ``placeholders``: such a list item
    is left out, such an object field is left out (so an item that needed it fails validation and
    is dropped, with its reason, like any other bad item)."""
    cleaned = _scrub(value, placeholders)
    return None if cleaned is _DROPPED else cleaned


def _scrub(value: Any, placeholders: frozenset[str]) -> Any:
    if isinstance(value, str):
        return _DROPPED if value.strip().casefold() in placeholders else value
    if isinstance(value, list):
        return [x for x in (_scrub(v, placeholders) for v in value) if x is not _DROPPED]
    if isinstance(value, dict):
        return {k: x for k, x in ((k, _scrub(v, placeholders)) for k, v in value.items()) if x is not _DROPPED}
    return value


def _validate(adapter: TypeAdapter[Any], data: Any, problems: list[str] | None, path: str) -> Any:
    context = {"problems": problems if problems is not None else [], "path": path}
    try:
        return adapter.validate_python(data, context=context)
    except ValidationError as err:
        raise Invalid(_reason(err)) from None


# --------------------------------------------------------------------------------------------
# Schema for response_format
# --------------------------------------------------------------------------------------------


def output_schema(model: type[BaseModel] | Any) -> dict[str, Any]:
    """The compact JSON schema of ``model`` (a model class or any type) for ``response_format``:
    ``model_json_schema()`` without titles, defaults or ``$defs`` (nested models inlined), an
    optional field as its plain type (not ``anyOf`` with null), so small local models get the
    shortest schema that says the same."""
    full = model.model_json_schema() if isinstance(model, type) and issubclass(model, BaseModel) else (
        TypeAdapter(model).json_schema())
    return _compact(full, full.get("$defs", {}))


def _compact(node: Any, defs: dict[str, Any]) -> Any:
    """One schema node without titles, defaults, descriptions (docstrings) or refs."""
    if isinstance(node, list):
        return [_compact(x, defs) for x in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _compact(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    options = node.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        rest = [o for o in options if o != {"type": "null"}]
        if len(rest) == 1:
            return _compact(rest[0], defs)
    out = {"type": node["type"]} if "type" in node else {}  # "type" first, as people write it
    for key, value in node.items():
        if key in ("title", "default", "description", "$defs") or (key == "additionalProperties" and value is True):
            continue
        if key == "properties":
            out[key] = {name: _compact(sub, defs) for name, sub in value.items()}
        else:
            out[key] = value if key == "enum" else _compact(value, defs)
    return out


# --------------------------------------------------------------------------------------------
# Plain values in, plain values out
# --------------------------------------------------------------------------------------------


def coerce(data: Any, kind: Any) -> tuple[Any, list[str]]:
    """``(value, problems)``: ``data`` made to fit ``kind`` (a model class or any type, such as
    ``Items[Text]`` or ``Annotated[Number, Clamp(0, 1)]``) with the leniency above, as plain
    JSON values again (an object keeps only the keys that were given). Raises
    :class:`ModelOutputError` when the value itself cannot be made to fit."""
    adapter = _adapter(kind)
    problems: list[str] = []
    try:
        value = _validate(adapter, data, problems, "$")
    except Invalid as err:
        raw = json.dumps(data, default=str, ensure_ascii=False)[:4000]
        raise ModelOutputError(f"output does not match the schema: {err}", raw) from None
    return adapter.dump_python(value, exclude_unset=True), problems


def _adapter(kind: Any) -> TypeAdapter[Any]:
    try:
        return _cached_adapter(kind)
    except TypeError:  # an unhashable type
        return TypeAdapter(kind)


@lru_cache(maxsize=64)
def _cached_adapter(kind: Any) -> TypeAdapter[Any]:
    return TypeAdapter(kind)
