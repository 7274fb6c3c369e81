"""Reading a tool's JSON schema as an agent sends it: local `$ref`s resolved, `allOf` parts merged, the type a node
takes, its choices and its patterns (schema_calls.py builds arguments from what these say)."""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]
PATTERNS = "x-boundary-patterns"  # every `pattern` of a string schema and its `allOf` parts, merged


class CannotDrive(ValueError):
    """The schema asks for something the harness cannot build (a $ref outside it, a type it does not know)."""


def merged(root: Schema, schema: Schema) -> Schema:
    """`schema` with the parts of its `allOf` folded in (their properties and requirements joined)."""
    parts = [merged(root, resolve(root, p)) for p in schema.get("allOf") or [] if isinstance(p, dict)]
    if not parts:
        return schema
    joined: Schema = {key: v for key, v in schema.items() if key != "allOf"}
    patterns = list(dict.fromkeys(found for part in (schema, *parts) for found in patterns_of(part)))
    for part in parts:
        joined = {**part, **joined}
        if "properties" in part or "required" in part:  # an object's parts: their parameters joined
            joined["properties"] = {**(joined.get("properties") or {}), **(part.get("properties") or {})}
            joined["required"] = list(dict.fromkeys([*joined.get("required", []), *part.get("required", [])]))
    return {**joined, PATTERNS: patterns} if patterns else joined


def patterns_of(schema: Schema) -> list[str]:
    """Every `pattern` a (merged) string schema holds: a string must match them all."""
    found = schema.get(PATTERNS) or ([schema["pattern"]] if isinstance(schema.get("pattern"), str) else [])
    return [p for p in found if isinstance(p, str)]


def choices_of(schema: Schema) -> list[Schema]:
    options = schema.get("anyOf") or schema.get("oneOf") or []
    return [o for o in options if isinstance(o, dict)]


def type_of(schema: Schema) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, list):  # ["string", "null"]: the first that is not null
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None and "properties" in schema:
        return "object"
    return kind if isinstance(kind, str) else None


def resolve(root: Schema, schema: Schema) -> Schema:
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
