"""The JSON Schemas of prstack's JSON outputs, one file per schema id (prstack.audit/2 -> prstack.audit-2.json)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

IDS = ("prstack.audit/2", "prstack.audit/1", "prstack.graph/1", "prstack.hunks/1", "prstack.plan/1",
       "prstack.upkeep/1", "prstack.matrix/1")


def schema(schema_id: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of an output whose "schema" field is `schema_id`."""
    if schema_id not in IDS:
        raise KeyError(schema_id)
    text = resources.files(__name__).joinpath(schema_id.replace("/", "-") + ".json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data
