"""Arguments for any tool, from the JSON schema the agent sends the model: one string parameter carries a chosen
value, every other required one (and every optional number, flag or choice) its schema's default or first example,
else a harmless value of its type.

This is how a tool no one here has seen is still attacked: its schema, not a list of known tools, says where a
path can go. A slot is where one free string sits in the arguments (a dotted path; `[]` steps into an array's
item), so strings nested in objects and arrays are driven too.
"""

from __future__ import annotations

import re
from typing import Any

Schema = dict[str, Any]
Slot = tuple[str, ...]  # property names, and "[]" for an array's item
FILLER = "boundary"  # the value of every string not under attack
MAX_DEPTH = 6  # deeper nesting than any agent's tool schema: a recursive $ref stops here


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


class CannotDrive(ValueError):
    """The schema asks for something the harness cannot build (a $ref outside it, a type it does not know)."""


def string_slots(schema: Schema) -> list[Slot]:
    """Every free string in the arguments (not an enum or const: those take only their own values)."""
    return _slots(schema, schema, (), 0)


def arguments(schema: Schema, slot: Slot | None, value: str = "") -> dict[str, Any]:
    """The arguments with `value` at `slot` (None: nowhere) and every required parameter filled; CannotDrive when
    the schema asks for what the harness cannot build."""
    built = _build(schema, schema, slot, value, 0)
    if not isinstance(built, dict):
        raise CannotDrive(f"its parameters are not an object (type {_type(_resolve(schema, schema))!r})")
    return built


def slot_name(slot: Slot) -> str:
    return ".".join(slot).replace(".[]", "[]")


def _slots(root: Schema, schema: Schema, at: Slot, depth: int) -> list[Slot]:
    try:
        schema = _resolve(root, schema)
    except CannotDrive:
        return []  # a part the harness cannot build carries nothing (and fails the call if it is required)
    if depth > MAX_DEPTH:
        return []
    options = _options(schema)
    if options:
        return list(dict.fromkeys(s for option in options for s in _slots(root, option, at, depth + 1)))
    kind = _type(schema)
    if kind == "string":
        return [] if "enum" in schema or "const" in schema else [at]
    if kind == "array" and isinstance(schema.get("items"), dict):
        return _slots(root, schema["items"], (*at, "[]"), depth + 1)
    if kind == "object":
        properties = schema.get("properties") or {}
        return [s for name, sub in properties.items() for s in _slots(root, sub, (*at, name), depth + 1)]
    return []


def _build(root: Schema, schema: Schema, slot: Slot | None, value: str, depth: int) -> Any:
    """A value for `schema`: `value` where `slot` (relative to it, () = here) points, None: harmless throughout."""
    schema = _resolve(root, schema)
    if depth > MAX_DEPTH:
        raise CannotDrive("its schema nests deeper than the harness builds")
    options = _options(schema)
    if options:
        return _build(root, _option_for(root, options, slot), slot, value, depth + 1)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = _type(schema)
    if kind == "string" and slot == ():
        return value
    if slot is None and "default" in schema:  # a value the tool itself suggests is likelier to be accepted
        return schema["default"]
    if slot is None and isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    if kind == "string":
        return FILLER
    if kind == "object":
        return _object(root, schema, slot, value, depth)
    if kind == "array":
        return _array(root, schema, slot, value, depth)
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    raise CannotDrive(f"a parameter of type {kind!r} the harness cannot fill: {str(schema)[:120]}")


def _object(root: Schema, schema: Schema, slot: Slot | None, value: str, depth: int) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    # Required parameters, and optional ones the harness can fill without a guess (a number, a flag, a choice):
    # a tool may need one the schema cannot mark required ("delaySeconds is required when stop is not true").
    scalars = [name for name, sub in properties.items() if _fixed_scalar(root, sub)]
    wanted = dict.fromkeys([*schema.get("required", []), *scalars, *(slot or ())[:1]])
    built = {}
    for name in wanted:
        if name not in properties:
            raise CannotDrive(f"it requires {name!r}, which its schema does not describe")
        below = slot[1:] if slot and slot[0] == name else None
        listed = _listed_value(root, name, properties[name]) if below is None else None
        built[name] = listed if listed is not None else _build(root, properties[name], below, value, depth + 1)
    return built


def _listed_value(root: Schema, name: str, schema: Schema) -> str | None:
    """For a free string the tool's description lists values for (under a heading that shares a word with the
    parameter's name), the first of them: a tool that takes only those would refuse the filler, and
    the parameter under attack would never be reached."""
    description = root.get(DESCRIPTION)
    if not isinstance(description, str) or not isinstance(schema, dict) or _type(schema) != "string":
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


def _array(root: Schema, schema: Schema, slot: Slot | None, value: str, depth: int) -> list[Any]:
    items = schema.get("items")
    count = 1 if slot else schema.get("minItems", 0)
    if not isinstance(items, dict):
        if not count:
            return []
        raise CannotDrive(f"it requires an array whose items its schema does not describe: {str(schema)[:120]}")
    return [_build(root, items, slot[1:] if slot else None, value, depth + 1) for _ in range(count)]


def _fixed_scalar(root: Schema, schema: Schema) -> bool:
    """A parameter whose value needs no guess: a default, a choice, a number or a flag."""
    try:
        schema = _resolve(root, schema) if isinstance(schema, dict) else {}
    except CannotDrive:
        return False  # an optional parameter the harness cannot build is left out
    if "default" in schema or "enum" in schema or "const" in schema:
        return True
    return _type(schema) in ("integer", "number", "boolean")


def _option_for(root: Schema, options: list[Schema], slot: Slot | None) -> Schema:
    """The option of an anyOf/oneOf that holds the slot, else the first that is not null."""
    if slot is not None:
        for option in options:
            if any(s[: len(slot)] == slot for s in _slots(root, option, (), 0)):
                return option
    return next((o for o in options if _type(_resolve(root, o)) != "null"), options[0])


def _options(schema: Schema) -> list[Schema]:
    options = schema.get("anyOf") or schema.get("oneOf") or []
    return [o for o in options if isinstance(o, dict)]


def _type(schema: Schema) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):  # ["string", "null"]: the first that is not null
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and "properties" in schema:
        return "object"
    return kind if isinstance(kind, str) else None


def _resolve(root: Schema, schema: Schema) -> Schema:
    """`schema`, or what its local `$ref` ("#/$defs/X", "#/definitions/X") names."""
    ref = schema.get("$ref")
    if not isinstance(ref, str):
        return schema
    if not ref.startswith("#/"):
        raise CannotDrive(f"its schema refers outside itself ({ref})")
    node: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(node, dict) or part not in node:
            raise CannotDrive(f"its schema's reference {ref} names nothing")
        node = node[part]
    return node if isinstance(node, dict) else {}
