"""JSON whose last field's rows are one a line: the same document, a row a line, whatever the text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prstack.render.json_rows import dumps_rows_last

_scalars = st.none() | st.booleans() | st.integers() | st.text()
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


@settings(max_examples=200, deadline=None)
@given(fields=st.dictionaries(st.text(max_size=8).filter(lambda k: k != "rows"), _values, max_size=4),
       rows=st.lists(st.dictionaries(st.text(max_size=5), _values, max_size=4), max_size=5))
@pytest.mark.slow
def test_the_document_reads_back_equal_and_each_row_is_one_line(fields: dict[str, Any],
                                                                 rows: list[dict[str, Any]]) -> None:
    data = {**fields, "rows": rows}
    text = dumps_rows_last(data)
    assert json.loads(text) == data
    assert list(json.loads(text)) == list(data)  # (fields in their order, rows last)
    assert text.endswith("}\n")
    lines = text.splitlines()
    start = lines.index('  "rows": [') if rows else None
    if start is None:
        assert '  "rows": []' in lines
        return
    listed = lines[start + 1 : start + 1 + len(rows)]
    assert [json.loads(line.strip().removesuffix(",")) for line in listed] == rows
    assert lines[start + 1 + len(rows)] == "  ]"


def test_an_audit_row_with_newlines_and_control_text_stays_on_its_line() -> None:
    row = {"pr": 1, "note": "two\nlines\r\x1b[31m red \u2028 sep", "path": 'a"b\\c'}
    text = dumps_rows_last({"schema": "prstack.audit/1", "hunks": [row, {"pr": 2}]})
    assert text.splitlines() == [
        "{",
        '  "schema": "prstack.audit/1",',
        '  "hunks": [',
        f"    {json.dumps(row)},",
        '    {"pr": 2}',
        "  ]",
        "}",
    ]
