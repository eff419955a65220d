"""Atomic writes: an error names the file asked for, never the temp file beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from infx.yamlio import atomic_write


def test_a_missing_folder_is_named_by_the_file_asked_for(tmp_path: Path) -> None:
    """`results compare --out missing/x.md` said `No such file or directory:
    missing/.x.md.ma71dqsx.tmp`, a file the user never named."""
    target = tmp_path / "missing" / "x.md"
    with pytest.raises(FileNotFoundError) as raised:
        atomic_write(target, b"x")
    assert raised.value.filename == str(target)
    assert not (tmp_path / "missing").exists()


def test_the_file_is_written_whole(tmp_path: Path) -> None:
    target = tmp_path / "x.md"
    atomic_write(target, b"one")
    atomic_write(target, b"two")
    assert target.read_bytes() == b"two" and [p.name for p in tmp_path.iterdir()] == ["x.md"]
