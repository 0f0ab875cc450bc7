"""A patch's hunk bodies are checked against their headers' counts a run of lines at a time; where
that says a body is sound, it ends where the line-by-line walk ends it, and every body the walk
refuses is left to the walk (which words the refusal)."""

from __future__ import annotations

import random

import pytest

from prstack.diff.plain import body_end
from prstack.errors import InputError
from prstack.sources.patch.files import PatchFile, _walked_body, split_patch

KINDS = [" ", " ", " ", "-", "+", "+", "", "\\", "x"]


def _walked(lines: list[str], old: int, new: int) -> int | None:
    try:
        return _walked_body(lines, 0, (old, new), "p.diff", 1)
    except InputError:
        return None


def test_the_counted_end_is_the_walked_end_on_random_bodies() -> None:
    rng = random.Random(11)
    counted = 0
    for _ in range(5000):
        lines = [k + (f"line {i}" if k and rng.random() < 0.9 else "") for i, k in
                 enumerate(rng.choices(KINDS[:-1] if rng.random() < 0.7 else KINDS, k=rng.randint(0, 14)))]
        old = sum(line[:1] in (" ", "-", "") for line in lines) + rng.choice([0, 0, 0, -1, 1])
        new = sum(line[:1] in (" ", "+", "") for line in lines) + rng.choice([0, 0, 0, -1, 1])
        lines += rng.choice([[], [""], ["diff --git a/x b/x", ""], ["@@ -1 +1 @@", " x", ""], [" y", ""]])
        if old < 0 or new < 0:
            continue
        end = body_end(lines, 0, old, new, blank_context=True)
        walked = _walked(lines, old, new)
        if end is not None:
            counted += 1
            assert end[0] == walked, (lines, old, new)
    assert counted > 1000  # (the runs answer most bodies themselves)


@pytest.mark.parametrize(("body", "says"), [
    ("@@ -1,3 +1,3 @@\n a\n-b\n+c\n", "is truncated"),
    ("@@ -1,2 +1,2 @@\n a\n-b\n+c\n d\n", "holds more lines than its header counts"),
    ("@@ -1,3 +1,3 @@\n a\n-b\n+c\nxyz\n d\n", "ends before its counts say"),
])
def test_a_body_that_is_not_sound_is_refused_as_the_walk_words_it(body: str, says: str) -> None:
    text = f"diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n{body}"
    with pytest.raises(InputError) as caught:
        split_patch(PatchFile("p.diff", text.encode()))
    assert says in str(caught.value)


def test_a_mails_encoded_header_words_are_decoded_and_plain_ones_kept_as_they_are() -> None:
    """A subject or author written in RFC 2047 encoded words reads decoded; one without them
    reads exactly as written (runs of spaces, a lone "=?" included)."""
    diff = ("diff --git a/m.py b/m.py\nindex 1234567..89abcde 100644\n--- a/m.py\n+++ b/m.py\n"
            "@@ -1 +1 @@\n-a\n+b\n")

    def mail(subject: str, author: str) -> str:
        return (f"From 1234567890123456789012345678901234567890 Mon Sep 17 00:00:00 2001\nFrom: {author}\n"
                f"Subject: [PATCH] {subject}\n\nWhy.\n---\n{diff}")

    encoded = split_patch(PatchFile("1.patch", mail("=?UTF-8?q?Fix_caf=C3=A9?=",
                                                    "=?UTF-8?q?J=C3=B6rg?= <j@example.org>").encode()))
    assert (encoded.mails[0].subject, encoded.mails[0].author) == ("Fix café", "Jörg <j@example.org>")
    plain = split_patch(PatchFile("2.patch", mail("Keep  two  spaces =? here", "Zoë <z@example.org>").encode()))
    assert (plain.mails[0].subject, plain.mails[0].author) == ("Keep  two  spaces =? here", "Zoë <z@example.org>")
