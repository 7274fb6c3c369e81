"""Arguments for any tool, from the JSON schema the agent sends the model: one string parameter carries a chosen
value, every other required one (and every optional number, flag or choice) its schema's default or first example,
else a harmless value of its type: a free string the caller's filler (a job's name: a tool keyed by job is asked
for that job's files), or one its `format` or `pattern` accepts.

This is how a tool no one here has seen is still attacked: its schema, not a list of known tools, says where a
path can go. A slot is where one free string sits in the arguments (a dotted path; `[]` steps into an array's
item, `{}` is a key of the caller's naming in an object of `additionalProperties`), so strings nested in objects
and arrays are driven too; so is a parameter of no type (any value, a string too), and each part of an `allOf`.
`variants` are the other values a tool's top-level choices, flags and numbers take, each tried in turn.
"""

from __future__ import annotations

import re
from typing import Any

from boundary.model.schema_reading import CannotDrive, Schema, choices_of, merged, patterns_of, resolve, type_of

Slot = tuple[str, ...]  # property names, and "[]" for an array's item
FILLER = "boundary"  # the value of every string not under attack, unless the caller names another
MAX_DEPTH = 6  # deeper nesting than any agent's tool schema: a recursive $ref stops here
MAX_CHOICES = 4  # of an enum's values, tried in turn
ANY_KEY = "{}"  # a slot's step into an object's additionalProperties, under the key KEY
KEY = "path"
# A value each string `format` accepts (JSON Schema's formats; an agent's tool rarely has another).
FORMATS = {
    "date-time": "2026-01-01T00:00:00Z",
    "date": "2026-01-01",
    "time": "00:00:00Z",
    "email": "boundary@example.com",
    "hostname": "localhost",
    "ipv4": "127.0.0.1",
    "ipv6": "::1",
    "uri": "file:///boundary",
    "uri-reference": "boundary",
    "uuid": "00000000-0000-4000-8000-000000000000",
}


# Set by a dialect on the schema of a tool the model's provider runs itself (OpenAI's `web_search`): the agent only
# names it to the model, and no call of it ever reaches the job.
HOSTED = "x-boundary-hosted"


def hosted(schema: Schema) -> str | None:
    """The kind of hosted tool this schema stands for (None: the agent runs it)."""
    kind = schema.get(HOSTED)
    return str(kind) if kind else None


# Set by a dialect on every tool's schema: the tool's own description, where it may list the values a free string
# takes ("Available agent types …:\n- explore: …" for a subagent's `subagent_type`).
DESCRIPTION = "x-boundary-description"
# A heading line that ends with a colon, then the items of its list, each `- name: what it is`.
ITEM = re.compile(r"[ \t]*[-*][ \t]+`?(?P<name>[\w.-]+)`?[ \t]*:")
LISTING = re.compile(r"^(?P<heading>[^\n]*):[ \t]*\n(?P<items>(?:[ \t]*[-*][ \t]+`?[\w.-]+`?[ \t]*:.*(?:\n|$))+)", re.M)
COMMON_WORDS = frozenset("a an and are as at be by for from have in is it of on or the they this to use with".split())  # noqa: SIM905


def described(schema: Schema, description: Any) -> Schema:
    """`schema` carrying the tool's description (for the values it lists), if the agent sent one."""
    return {**schema, DESCRIPTION: description} if isinstance(description, str) and description else schema


class Unfit(CannotDrive):
    """The value under attack is one its slot refuses (longer than its `maxLength`, outside its `pattern`): the
    tool would refuse the harness's call, never the value's file."""


def string_slots(schema: Schema) -> list[Slot]:
    """Every free string in the arguments (not an enum or const: those take only their own values)."""
    return _slots(schema, schema, (), 0)


def arguments(
    schema: Schema, slot: Slot | None, value: str = "", filler: str = FILLER, variant: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The arguments with `value` at `slot` (None: nowhere), every other free string `filler`, the top-level
    values of `variant` (one of `variants`), and every required parameter filled; CannotDrive when the schema asks
    for what the harness cannot build."""
    built = _build(schema, schema, slot, value, 0, filler)
    if not isinstance(built, dict):
        raise CannotDrive(f"its parameters are not an object (type {type_of(resolve(schema, schema))!r})")
    return built | {name: v for name, v in (variant or {}).items() if not slot or slot[0] != name}


def variants(schema: Schema) -> list[dict[str, Any]]:
    """The ways of filling the top-level choices, flags and numbers: none changed first, then each other value
    of each enum (up to MAX_CHOICES), each flag set, each number in its range's middle (or well above its least):
    a tool may read a file only in a mode its first choice is not."""
    try:
        properties = merged(schema, resolve(schema, schema)).get("properties") or {}
    except CannotDrive:
        return [{}]
    found: list[dict[str, Any]] = [{}]
    for name, sub in properties.items():
        try:
            sub = merged(schema, resolve(schema, sub)) if isinstance(sub, dict) else {}
        except CannotDrive:
            continue
        kind = type_of(sub)
        if isinstance(sub.get("enum"), list):
            found += [{name: choice} for choice in sub["enum"][1:MAX_CHOICES]]
        elif kind == "boolean":
            found.append({name: not sub.get("default", False)})
        elif kind in ("integer", "number"):
            least = sub.get("minimum", 0)
            found.append({name: (least + sub["maximum"]) // 2 if "maximum" in sub else least + 100})
    return found


def slot_name(slot: Slot) -> str:
    return ".".join(slot).replace(".[]", "[]")


def _slots(root: Schema, schema: Schema, at: Slot, depth: int) -> list[Slot]:
    try:  # a part the harness cannot build carries nothing (and fails the call if it is required)
        schema = merged(root, resolve(root, schema))
    except CannotDrive:
        return []
    if depth > MAX_DEPTH:
        return []
    options = choices_of(schema)
    if options:
        return list(dict.fromkeys(s for option in options for s in _slots(root, option, at, depth + 1)))
    kind = type_of(schema)
    if "enum" in schema or "const" in schema:
        return []
    if kind in ("string", None):  # a parameter of no type takes any value: a string too
        return [at]
    if kind == "array" and isinstance(schema.get("items"), dict):
        return _slots(root, schema["items"], (*at, "[]"), depth + 1)
    if kind == "object":
        properties = schema.get("properties") or {}
        named = [s for name, sub in properties.items() for s in _slots(root, sub, (*at, name), depth + 1)]
        more = schema.get("additionalProperties")
        return named + (_slots(root, more, (*at, ANY_KEY), depth + 1) if isinstance(more, dict) else [])
    return []


def _build(root: Schema, schema: Schema, slot: Slot | None, value: str, depth: int, filler: str) -> Any:
    """A value for `schema`: `value` where `slot` (relative to it, () = here) points, None: harmless throughout."""
    schema = merged(root, resolve(root, schema))
    if depth > MAX_DEPTH:
        raise CannotDrive("its schema nests deeper than the harness builds")
    options = choices_of(schema)
    if options:
        return _build(root, _option_for(root, options, slot), slot, value, depth + 1, filler)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = type_of(schema)
    if kind in ("string", None) and slot == ():
        return _fitting(schema, value)
    if slot is None and "default" in schema:  # a value the tool itself suggests is likelier to be accepted
        return schema["default"]
    if slot is None and isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    if kind in ("string", None) and not set(schema) & {"properties", "items", "additionalProperties"}:
        return _string(schema, filler)
    if kind == "object" or kind is None:
        return _object(root, schema, slot, value, depth, filler)
    if kind == "array":
        return _array(root, schema, slot, value, depth, filler)
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    raise CannotDrive(f"a parameter of type {kind!r} the harness cannot fill: {str(schema)[:120]}")


def _fitting(schema: Schema, value: str) -> str:
    """The value under attack, if its slot takes it; Unfit (with why) if the tool would refuse the call for it."""
    longest = schema.get("maxLength")
    if isinstance(longest, int) and len(value) > longest:
        raise Unfit(f"{len(value)} characters, over its maxLength {longest}")
    try:
        unmatched = [pattern for pattern in patterns_of(schema) if not re.search(pattern, value)]
    except re.error:
        return value  # a pattern Python cannot read: the tool decides
    if unmatched:
        raise Unfit(f"not matching its pattern {unmatched[0]!r}")
    return value


def _string(schema: Schema, filler: str) -> str:
    """A string not under attack: what its `format` takes, else the filler, else a short one its `pattern`
    matches; CannotDrive when none does (every call would be refused for it, the slot under attack never read)."""
    if schema.get("format") in FORMATS:
        return FORMATS[schema["format"]]
    patterns = patterns_of(schema)
    if not patterns:
        return filler
    for candidate in (filler, FILLER, "1", "a", "A", "a1", "0", "boundary-1", "x.txt"):
        try:
            if all(re.search(pattern, candidate) for pattern in patterns):
                return candidate
        except re.error:
            break
    raise CannotDrive(f"a string must match {' and '.join(map(repr, patterns))}, which the harness cannot fill")


def _object(root: Schema, schema: Schema, slot: Slot | None, value: str, depth: int, filler: str) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    # Required parameters, and optional ones the harness can fill without a guess (a number, a flag, a choice):
    # a tool may need one the schema cannot mark required ("delaySeconds is required when stop is not true").
    scalars = [name for name, sub in properties.items() if _fixed_scalar(root, sub)]
    wanted = dict.fromkeys([*schema.get("required", []), *scalars, *(slot or ())[:1]])
    built = {}
    for name in wanted:
        below = slot[1:] if slot and slot[0] == name else None
        if name == ANY_KEY and below is not None:
            built[KEY] = _build(root, schema.get("additionalProperties") or {}, below, value, depth + 1, filler)
            continue
        if name not in properties:
            raise CannotDrive(f"it requires {name!r}, which its schema does not describe")
        listed = _listed_value(root, name, properties[name]) if below is None else None
        if listed is None:
            listed = _build(root, properties[name], below, value, depth + 1, filler)
        built[name] = listed
    return built


def _listed_value(root: Schema, name: str, schema: Schema) -> str | None:
    """For a free string the tool's description lists values for (under a heading that shares a word with the
    parameter's name), the first of them: a tool that takes only those would refuse the filler, and
    the parameter under attack would never be reached."""
    description = root.get(DESCRIPTION)
    if not isinstance(description, str) or not isinstance(schema, dict) or type_of(schema) != "string":
        return None
    if "enum" in schema or "const" in schema or "default" in schema:
        return None
    about = _words(name)  # the name alone: descriptions share words too freely ("the task for the agent")
    for listing in LISTING.finditer(description):
        if _words(listing["heading"]) & about:
            return ITEM.match(listing["items"])["name"]  # type: ignore[index]
    return None


def _words(text: str) -> set[str]:
    """The words of `text`, lower case, a plural's s dropped, common words left out."""
    words = {w.lower().removesuffix("s") for w in re.split(r"[^A-Za-z]+", text) if len(w) > 1}
    return words - COMMON_WORDS


def _array(root: Schema, schema: Schema, slot: Slot | None, value: str, depth: int, filler: str) -> list[Any]:
    items = schema.get("items")
    count = 1 if slot else schema.get("minItems", 0)
    if not isinstance(items, dict):
        if not count:
            return []
        raise CannotDrive(f"it requires an array whose items its schema does not describe: {str(schema)[:120]}")
    return [_build(root, items, slot[1:] if slot else None, value, depth + 1, filler) for _ in range(count)]


def _fixed_scalar(root: Schema, schema: Schema) -> bool:
    """A parameter whose value needs no guess: a default, a choice, a number or a flag."""
    try:
        schema = resolve(root, schema) if isinstance(schema, dict) else {}
    except CannotDrive:
        return False  # an optional parameter the harness cannot build is left out
    if "default" in schema or "enum" in schema or "const" in schema:
        return True
    return type_of(schema) in ("integer", "number", "boolean")


def _option_for(root: Schema, options: list[Schema], slot: Slot | None) -> Schema:
    """The option of an anyOf/oneOf that holds the slot, else the first that is not null."""
    if slot is not None:
        for option in options:
            if any(s[: len(slot)] == slot for s in _slots(root, option, (), 0)):
                return option
    return next((o for o in options if type_of(resolve(root, o)) != "null"), options[0])
