"""Read, Write, Edit, MultiEdit and NotebookEdit."""

from __future__ import annotations

import pytest

from normalize import (
    ModifyFile,
    Mutation,
    ReadFile,
    action_type_for,
    normalize_tool_result,
    normalize_tool_use,
    title_for,
)
from normalize._files import language_for
from tests.normalize.normalize_helpers import apply_patch


def _modify(payload: object) -> ModifyFile:
    assert isinstance(payload, ModifyFile)
    return payload


def _read(payload: object) -> ReadFile:
    assert isinstance(payload, ReadFile)
    return payload


# --------------------------------------------------------------------------- Read


@pytest.mark.parametrize(
    "text",
    [
        "     1\tdef f():\n     2\t    return 1\n     3\t",  # cat -n
        "1\tdef f():\n2\t    return 1\n3\t",  # CLI 2.1.x
        "     1\u2192def f():\n     2\u2192    return 1\n     3\u2192",  # older CLIs
    ],
)
def test_read_strips_line_numbers(text: str) -> None:
    """Every line-number style is stripped; the count is kept."""
    payload = normalize_tool_use("Read", {"file_path": "/w/src/app.py"})
    output = _read(normalize_tool_result(payload, content=text)).output
    assert output is not None
    assert output.content == "def f():\n    return 1\n"
    assert output.line_count == 3
    assert output.language == "python"


def test_read_ignores_trailing_system_reminder() -> None:
    """Text after the numbered lines (a system reminder) is not file content."""
    payload = normalize_tool_use("Read", {"file_path": "a.md"})
    text = "1\t# Title\n2\t\n\n<system-reminder>\nWhatever.\n</system-reminder>\n"
    output = _read(normalize_tool_result(payload, content=text)).output
    assert output is not None
    assert (output.content, output.line_count, output.language) == ("# Title\n", 2, "markdown")


def test_read_offset_limit_and_title() -> None:
    """Offset and limit are kept and shown in the title as an inclusive line range."""
    payload = _read(
        normalize_tool_use("Read", {"file_path": "/w/README.md", "offset": 10, "limit": 51})
    )
    assert (payload.offset, payload.limit) == (10, 51)
    assert title_for(payload, work_dir="/w") == "Read README.md (lines 10\u201360)"
    assert title_for(normalize_tool_use("Read", {"file_path": "/w/x", "offset": 5})) == (
        "Read /w/x (from line 5)"
    )
    assert action_type_for(payload) == "file_read"


def test_read_image_has_no_text_content() -> None:
    """An image result says ``file_type="image"`` and carries no base64 text."""
    payload = normalize_tool_use("Read", {"file_path": "shot.png"})
    result = {"type": "image", "file": {"base64": "AAAA", "type": "image/png"}}
    output = _read(
        normalize_tool_result(
            payload, content=[{"type": "image", "source": {}}], tool_use_result=result
        )
    ).output
    assert output is not None
    assert (output.file_type, output.content) == ("image", None)


def test_read_truncates_on_a_character_boundary() -> None:
    """A long file is cut to the byte cap without splitting a character."""
    payload = normalize_tool_use("Read", {"file_path": "a.txt"})
    content = "é" * 100
    result = {"type": "text", "file": {"filePath": "a.txt", "content": content, "numLines": 1}}
    output = _read(
        normalize_tool_result(payload, content="", tool_use_result=result, max_output_bytes=51)
    ).output
    assert output is not None
    assert output.truncated
    assert output.content == "é" * 25
    assert output.line_count == 1


def test_read_error() -> None:
    """A failed Read sets ``error`` and no output."""
    payload = normalize_tool_use("Read", {"file_path": "nope"})
    after = _read(
        normalize_tool_result(
            payload,
            content="<tool_use_error>File does not exist.</tool_use_error>",
            is_error=True,
            tool_use_result="Error: File does not exist.",
        )
    )
    assert (after.error, after.output) == ("File does not exist.", None)


@pytest.mark.parametrize(
    ("path", "language"),
    [("a/b.py", "python"), ("X.TSX", "tsx"), ("Dockerfile", "dockerfile"), ("noext", None)],
)
def test_language_for(path: str, language: str | None) -> None:
    """Languages are guessed from extensions and a few well-known file names."""
    assert language_for(path) == language


# --------------------------------------------------------------------------- Write


def test_write_overwrite_uses_structured_patch() -> None:
    """``tool_use_result.type == "update"`` turns the create into a replace with a diff."""
    payload = normalize_tool_use("Write", {"file_path": "/w/a.txt", "content": "one\nTWO\n"})
    assert _modify(payload).mutations == (Mutation(type="create", content="one\nTWO\n"),)
    assert title_for(payload, work_dir="/w") == "Create a.txt"
    result = {
        "type": "update",
        "filePath": "/w/a.txt",
        "content": "one\nTWO\n",
        "structuredPatch": [
            {
                "oldStart": 1,
                "oldLines": 2,
                "newStart": 1,
                "newLines": 2,
                "lines": [" one", "-two", "+TWO"],
            }
        ],
        "originalFile": "one\ntwo\n",
    }
    after = _modify(normalize_tool_result(payload, content="ok", tool_use_result=result))
    (mutation,) = after.mutations
    assert mutation.type == "replace"
    assert mutation.content == "one\nTWO\n"
    assert mutation.diff is not None
    assert apply_patch("one\ntwo\n", mutation.diff) == "one\nTWO\n"
    assert (mutation.start_line, mutation.end_line) == (1, 2)
    assert title_for(after, work_dir="/w") == "Write a.txt"
    assert action_type_for(after) == "file_write"


def test_write_overwrite_without_patch_diffs_the_original() -> None:
    """Without structuredPatch the diff is computed from ``originalFile``."""
    payload = normalize_tool_use("Write", {"file_path": "a.txt", "content": "x\ny\n"})
    result = {"type": "update", "originalFile": "x\n", "structuredPatch": None}
    (mutation,) = _modify(normalize_tool_result(payload, tool_use_result=result)).mutations
    assert mutation.type == "replace"
    assert mutation.diff is not None
    assert apply_patch("x\n", mutation.diff) == "x\ny\n"


def test_write_create_stays_create() -> None:
    """``type == "create"`` keeps the single create mutation."""
    payload = normalize_tool_use("Write", {"file_path": "a.txt", "content": "x"})
    after = normalize_tool_result(payload, tool_use_result={"type": "create"})
    assert _modify(after).mutations == (Mutation(type="create", content="x"),)


def test_write_huge_overwrite_drops_the_diff_and_cuts_content() -> None:
    """Over the byte cap: content is cut, the diff dropped (a cut diff would not apply)."""
    new = "line\n" * 100
    payload = normalize_tool_use("Write", {"file_path": "a.txt", "content": new})
    result = {"type": "update", "originalFile": "old\n" * 100}
    (mutation,) = _modify(
        normalize_tool_result(payload, tool_use_result=result, max_output_bytes=64)
    ).mutations
    assert mutation.truncated
    assert mutation.diff is None
    assert mutation.content == new[:64]


# --------------------------------------------------------------------------- Edit / MultiEdit


def test_edit_before_result_has_a_snippet_diff() -> None:
    """Before the result the diff covers just old_string → new_string."""
    payload = _modify(
        normalize_tool_use(
            "Edit",
            {
                "file_path": "a.py",
                "old_string": "x = 1",
                "new_string": "x = 2",
                "replace_all": True,
            },
        )
    )
    (mutation,) = payload.mutations
    assert (mutation.type, mutation.replace_all) == ("patch", True)
    no_eol = "\\ No newline at end of file\n"
    assert mutation.diff == f"--- a.py\n+++ a.py\n@@ -1 +1 @@\n-x = 1\n{no_eol}+x = 2\n{no_eol}"


def test_edit_without_structured_patch_replays_on_the_original() -> None:
    """With only ``originalFile`` the edit is replayed to get real line numbers."""
    original = "".join(f"{i}\n" for i in range(1, 11))
    payload = normalize_tool_use(
        "Edit", {"file_path": "n.txt", "old_string": "7\n", "new_string": "seven\n"}
    )
    after = _modify(
        normalize_tool_result(payload, content="ok", tool_use_result={"originalFile": original})
    )
    (mutation,) = after.mutations
    assert mutation.diff is not None
    assert apply_patch(original, mutation.diff) == original.replace("7\n", "seven\n")
    assert (mutation.start_line, mutation.end_line) == (4, 10)


def test_multi_edit_has_one_mutation_per_edit_with_real_diffs() -> None:
    """MultiEdit: one mutation per edit; each diff applies to the file the previous left."""
    original = "alpha\nbeta\ngamma\nbeta\n"
    edits = [
        {"old_string": "alpha", "new_string": "ALPHA"},
        {"old_string": "beta", "new_string": "B", "replace_all": True},
    ]
    payload = _modify(normalize_tool_use("MultiEdit", {"file_path": "g.txt", "edits": edits}))
    assert len(payload.mutations) == 2
    assert title_for(payload) == "Edit g.txt (2 edits)"
    after = _modify(
        normalize_tool_result(
            payload,
            content="ok",
            tool_use_result={"filePath": "g.txt", "originalFileContents": original},
        )
    )
    text = original
    for mutation in after.mutations:
        assert mutation.diff is not None
        text = apply_patch(text, mutation.diff)
    assert text == "ALPHA\nB\ngamma\nB\n"
    assert after.mutations[1].replace_all


def test_multi_edit_that_cannot_be_replayed_keeps_snippet_diffs() -> None:
    """If an edit does not apply to the original, the mutations stay as they were."""
    payload = normalize_tool_use(
        "MultiEdit",
        {"file_path": "g.txt", "edits": [{"old_string": "zzz", "new_string": "y"}]},
    )
    after = normalize_tool_result(payload, tool_use_result={"originalFile": "abc\n"})
    assert after == payload


def test_edit_error() -> None:
    """A failed Edit reports the error and keeps its mutation."""
    payload = normalize_tool_use("Edit", {"file_path": "a", "old_string": "a", "new_string": "b"})
    after = _modify(
        normalize_tool_result(
            payload,
            content="<tool_use_error>String to replace not found in file.</tool_use_error>",
            is_error=True,
        )
    )
    assert after.error == "String to replace not found in file."
    assert len(after.mutations) == 1


# --------------------------------------------------------------------------- NotebookEdit


@pytest.mark.parametrize(
    ("mode", "kind", "title"),
    [
        ("replace", "patch", "Edit nb.ipynb"),
        (None, "patch", "Edit nb.ipynb"),
        ("insert", "create", "Insert cell in nb.ipynb"),
        ("delete", "delete", "Delete cell in nb.ipynb"),
    ],
)
def test_notebook_edit_modes(mode: str | None, kind: str, title: str) -> None:
    """edit_mode maps to a mutation type on the cell."""
    data = {"notebook_path": "nb.ipynb", "new_source": "print(1)", "cell_id": "c1"}
    if mode:
        data["edit_mode"] = mode
    payload = _modify(normalize_tool_use("NotebookEdit", data))
    (mutation,) = payload.mutations
    assert (mutation.type, mutation.cell_id, mutation.new_content) == (kind, "c1", "print(1)")
    assert title_for(payload) == title


def test_notebook_insert_result_gives_the_new_cell_id() -> None:
    """The result names the inserted cell."""
    payload = normalize_tool_use(
        "NotebookEdit",
        {
            "notebook_path": "nb.ipynb",
            "new_source": "x",
            "edit_mode": "insert",
            "cell_type": "code",
        },
    )
    after = _modify(
        normalize_tool_result(
            payload,
            content="Inserted cell",
            tool_use_result={"cell_id": "new-id", "cell_type": "code", "error": ""},
        )
    )
    assert after.mutations[0].cell_id == "new-id"
    assert after.mutations[0].cell_type == "code"
    assert after.error is None
