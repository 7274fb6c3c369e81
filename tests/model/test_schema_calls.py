"""Arguments for any tool from its JSON schema: every free string is a slot, every required parameter is filled."""

from __future__ import annotations

import pytest

from boundary.model.schema_calls import (
    DESCRIPTION,
    FILLER,
    arguments,
    described,
    slot_name,
    string_slots,
    variants,
)
from boundary.model.schema_reading import CannotDrive

# The shapes agents send (opencode's todowrite, Claude Code's optional strings, codex's numbers, an MCP $ref).
TODOS = {
    "type": "object",
    "properties": {
        "todos": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string"},
                    "status": {"type": "string", "enum": ["pending", "done"]},
                    "id": {"type": "string"},
                },
                "required": ["content", "status"],
            },
        }
    },
    "required": ["todos"],
}


def test_every_free_string_is_a_slot_nested_ones_too() -> None:
    assert [slot_name(s) for s in string_slots(TODOS)] == ["todos[].content", "todos[].id"]


def test_the_slot_carries_the_value_and_the_rest_is_harmless() -> None:
    built = arguments(TODOS, ("todos", "[]", "id"), "/a/file")
    assert built == {"todos": [{"content": "boundary", "status": "pending", "id": "/a/file"}]}


def test_required_numbers_booleans_and_optional_parameters() -> None:
    schema = {
        "type": "object",
        "properties": {
            "session_id": {"type": "integer", "minimum": 0},
            "chars": {"type": ["string", "null"]},
            "raw": {"type": "boolean"},
            "extra": {"type": "string"},
            "delaySeconds": {"type": "number"},  # optional, yet the tool needs it unless `stop`
            "elsewhere": {"$ref": "http://x/s.json"},  # optional and unbuildable: left out
        },
        "required": ["session_id", "raw"],
    }
    assert [slot_name(s) for s in string_slots(schema)] == ["chars", "extra"]
    built = arguments(schema, ("chars",), "x")
    assert built == {"session_id": 0, "raw": False, "delaySeconds": 1, "chars": "x"}


def test_any_of_and_local_refs() -> None:
    schema = {
        "type": "object",
        "$defs": {"Path": {"anyOf": [{"type": "null"}, {"type": "string"}]}},
        "properties": {"where": {"$ref": "#/$defs/Path"}},
        "required": ["where"],
    }
    assert string_slots(schema) == [("where",)]
    assert arguments(schema, ("where",), "/p") == {"where": "/p"}


def test_what_the_harness_cannot_build_says_why() -> None:
    with pytest.raises(CannotDrive, match="does not describe"):
        arguments({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]}, ("a",), "x")
    with pytest.raises(CannotDrive, match="refers outside"):
        arguments({"type": "object", "properties": {"a": {"$ref": "http://x/s.json"}}}, ("a",), "x")
    with pytest.raises(CannotDrive, match="cannot fill"):
        unknown = {"a": {"type": "string"}, "b": {"type": "x"}}
        arguments({"type": "object", "properties": unknown, "required": ["b"]}, ("a",))


def test_a_schema_with_no_string_has_no_slot() -> None:
    assert string_slots({"type": "object", "properties": {"n": {"type": "integer"}}}) == []


def test_a_default_or_an_example_fills_a_parameter_not_under_attack() -> None:
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "mode": {"type": "string", "default": "text"},
            "agent": {"type": "string", "examples": ["general"]},
        },
        "required": ["path", "mode", "agent"],
    }
    assert arguments(schema, ("path",), "/a") == {"path": "/a", "mode": "text", "agent": "general"}
    assert arguments(schema, ("mode",), "/a")["mode"] == "/a"


# opencode 1.18.33's task tool, as it describes itself (its subagent_type takes only an agent's name).
TASK = described(
    {
        "type": "object",
        "properties": {
            "description": {"type": "string", "description": "A short (3-5 words) description of the task"},
            "prompt": {"type": "string", "description": "The task for the agent to perform"},
            "subagent_type": {"type": "string", "description": "The type of specialized agent to use for this task"},
            "task_id": {"type": "string", "description": "Resume a previous task by passing its task_id"},
        },
        "required": ["description", "prompt", "subagent_type"],
    },
    "Launch a new agent to handle complex tasks.\n\n"
    "Available agent types and the tools they have access to:\n"
    "- explore: Fast agent specialized for exploring codebases\n"
    "- general: General-purpose agent for researching complex questions\n\n"
    "When using the Task tool:\n- Launch agents concurrently\n",
)


def test_a_free_string_whose_values_the_tool_describes_takes_the_first_of_them() -> None:
    """Else the tool refuses the filler ("Unknown agent type: boundary") and the slot under attack is never reached."""
    built = arguments(TASK, ("task_id",), "ses_a")
    assert built == {"description": "boundary", "prompt": "boundary", "subagent_type": "explore", "task_id": "ses_a"}
    assert arguments(TASK, ("subagent_type",), "/a")["subagent_type"] == "/a"  # under attack, it still is one
    assert ("subagent_type",) in string_slots(TASK)


def test_a_list_under_a_heading_that_names_another_thing_is_left_alone() -> None:
    tool = described(
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        "Reads a file.\nUsage notes:\n- offset: the line to start at\n- limit: how many lines\n",
    )
    assert arguments(tool, None) == {"path": "boundary"}
    assert arguments({**tool, DESCRIPTION: 42}, None) == {"path": "boundary"}


# Issue 43 item 1: the schema gaps that left a parameter unattacked, or every call refused for the harness's filler.
GET_OUTPUT = {  # a tool keyed by job: its path is read only in the job named beside it
    "type": "object",
    "properties": {"job": {"type": "string"}, "path": {"type": "string"}},
    "required": ["job", "path"],
}


def test_the_other_strings_take_the_callers_filler_a_jobs_name() -> None:
    assert arguments(GET_OUTPUT, ("path",), "/a/notes", filler="job-a") == {"job": "job-a", "path": "/a/notes"}
    assert arguments(GET_OUTPUT, ("job",), "job-a") == {"job": "job-a", "path": "boundary"}


def test_a_string_with_a_format_or_a_pattern_gets_a_value_it_accepts() -> None:
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "since": {"type": "string", "format": "date-time"},
            "run": {"type": "string", "pattern": "^[0-9]+$"},
        },
        "required": ["path", "since", "run"],
    }
    assert arguments(schema, ("path",), "/a") == {"path": "/a", "since": "2026-01-01T00:00:00Z", "run": "1"}
    impossible = {**schema, "properties": {**schema["properties"], "run": {"type": "string", "pattern": "^zz$"}}}
    with pytest.raises(CannotDrive, match=r"must match '\^zz\$'"):
        arguments(impossible, ("path",), "/a")


def test_each_choice_flag_and_number_is_a_variant_tried_in_turn() -> None:
    schema = {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "mode": {"type": "string", "enum": ["stat", "read", "list", "tail", "head"]},
            "follow": {"type": "boolean"},
            "lines": {"type": "integer", "minimum": 1, "maximum": 99},
            "offset": {"type": "integer", "minimum": 1},
        },
        "required": ["path"],
    }
    assert variants(schema) == [
        {},
        {"mode": "read"},
        {"mode": "list"},
        {"mode": "tail"},
        {"follow": True},
        {"lines": 50},
        {"offset": 101},
    ]
    assert arguments(schema, ("path",), "/a", variant={"mode": "read"})["mode"] == "read"
    assert arguments(schema, ("path",), "/a", variant={"path": "x"})["path"] == "/a"  # the slot wins


def test_untyped_all_of_and_additional_properties_parameters_are_slots() -> None:
    schema = {
        "type": "object",
        "allOf": [{"properties": {"source": {"type": "string"}}, "required": ["source"]}],
        "properties": {
            "anything": {"description": "no type: any value"},
            "env": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    }
    assert [slot_name(s) for s in string_slots(schema)] == ["anything", "env.{}", "source"]
    assert arguments(schema, ("env", "{}"), "/a") == {"env": {"path": "/a"}, "source": "boundary"}
    assert arguments(schema, ("anything",), "/a") == {"anything": "/a", "source": "boundary"}


def test_a_string_whose_all_of_holds_patterns_is_filled_with_a_value_matching_each() -> None:
    """Claude Code 2.1.332's SendMessage `to`: a string whose `allOf` holds two patterns. It was taken for an object
    (its parts' properties joined), and the tool was left undriven."""
    to = {"type": "string", "allOf": [{"pattern": "^[^\\n\\r]*$"}, {"pattern": "^[\\s\\S]{0,300}$"}]}
    schema = {"type": "object", "properties": {"to": to, "message": {"type": "string"}}, "required": ["to", "message"]}
    assert arguments(schema, ("message",), "/x/y") == {"to": FILLER, "message": "/x/y"}
    strict = {**schema, "properties": {**schema["properties"], "to": {"allOf": [{"pattern": "^a"}, {"pattern": "1$"}]}}}
    assert arguments(strict, ("message",), "/x/y")["to"] == "a1"
    never = {
        **schema,
        "properties": {**schema["properties"], "to": {"allOf": [{"pattern": "^a$"}, {"pattern": "^b$"}]}},
    }
    with pytest.raises(CannotDrive, match="'\\^a\\$' and '\\^b\\$'"):
        arguments(never, ("message",), "/x/y")
