"""What a file holds for a search from outside: to its end, unpacked, and never "empty" when it could not be read."""

from __future__ import annotations

import gzip
import lzma
from pathlib import Path

import pytest

from boundary import unpack


def everything(path: Path) -> bytes:
    return b"".join(unpack.pieces(path))


def test_a_cut_archive_gives_what_it_holds_up_to_the_cut(tmp_path: Path) -> None:
    """A job killed while it wrote its archive: the part written is searched, and the file is no error."""
    whole = gzip.compress(b"A" * 5000 + b"the copy" + b"B" * 100_000)
    (tmp_path / "cut.gz").write_bytes(whole[: len(whole) // 2])
    assert b"the copy" in everything(tmp_path / "cut.gz")


def test_text_that_starts_like_zlib_is_only_text(tmp_path: Path) -> None:
    (tmp_path / "notes").write_bytes(b"x^2 + y^2 = r^2\n")
    assert everything(tmp_path / "notes") == b"x^2 + y^2 = r^2\n"


def test_archives_inside_archives_are_unpacked_to_the_depth(tmp_path: Path) -> None:
    (tmp_path / "deep.xz").write_bytes(lzma.compress(gzip.compress(b"the copy")))
    assert b"the copy" in everything(tmp_path / "deep.xz")


def test_a_file_gone_since_it_was_listed_holds_nothing(tmp_path: Path) -> None:
    assert everything(tmp_path / "gone") == b""


def test_a_file_it_cannot_open_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(unpack.Unreadable, match="directory"):
        everything(tmp_path)  # a directory where a file was listed: read fails with EISDIR
