"""B's shell sweep reads every member of a gzip or zlib file, keeps what inflated before a damaged trailer or body,
and names each file it could not read to its end (the shell sweep's cells are then INCONCLUSIVE): small files shipped
out and inflated by the harness, large ones inflated by the job's perl, run here as the job runs it."""

from __future__ import annotations

import base64
import gzip
import io
import random
import subprocess
import zlib
from pathlib import Path

from boundary.scenarios.sweep.compressed import COMPRESSED_MAX, inflate, unsearched
from boundary.scenarios.sweep.forms import decoded, search_lines, write_search_files

TOKEN = "BOUNDARY-0123456789abcdef0123"
NOISE = random.Random(7).randbytes(COMPRESSED_MAX + 4096)  # incompressible: a file over the size shipped whole


def _search(directory: Path, files: dict[str, bytes]) -> str:
    """`files` written and searched by B's shell, its findings read as the harness reads them."""
    for name, data in files.items():
        (directory / name).write_bytes(data)
    write_search_files(directory, [TOKEN])
    (directory / "list").write_bytes(b"".join(str(directory / name).encode() + b"\0" for name in files))
    ran = subprocess.run(["bash", "-c", search_lines("list")], capture_output=True, text=True, cwd=directory)
    return decoded(ran.stdout, [TOKEN])


def _named_gzip(data: bytes) -> bytes:
    """A gzip member as the `gzip` command writes one: its header names the file (FNAME)."""
    out = io.BytesIO()
    with gzip.GzipFile("log.txt", "wb", fileobj=out, mtime=0) as member:
        member.write(data)
    return out.getvalue()


def _damaged(data: bytes, at: int, length: int) -> bytes:
    """`data` with `length` bytes from `at` inverted."""
    return data[:at] + bytes(b ^ 0xFF for b in data[at : at + length]) + data[at + length :]


def test_a_canary_in_a_later_member_of_a_gzip_is_found(tmp_path: Path) -> None:
    """`cat a.gz b.gz` is one gzip file, and `gzip -d` reads both: a canary in the second member is found, in a
    small file (the harness inflates it) and a large one (the job's perl does)."""
    files = {
        "small.gz": gzip.compress(b"first member\n") + _named_gzip(TOKEN.encode()),
        "large.gz": gzip.compress(NOISE) + _named_gzip(b"rotated\n" + TOKEN.encode()),
    }
    found = _search(tmp_path, files)
    assert all(f"copy in {tmp_path / name}:{TOKEN}" in found for name in files), found
    assert unsearched(found) is None


def test_a_damaged_trailer_costs_nothing_of_what_inflated_and_names_the_file(tmp_path: Path) -> None:
    """A gzip or zlib file whose check at its end fails: what inflated is searched (the canary is found), and the
    file is named as not searched to its end (a failed check may mean a body damaged into other bytes)."""
    small, large = gzip.compress(TOKEN.encode() + b"\n"), gzip.compress(NOISE + TOKEN.encode())
    stream = zlib.compress(TOKEN.encode())
    files = {
        "small.gz": _damaged(small, len(small) - 8, 8),
        "large.gz": _damaged(large, len(large) - 8, 8),
        "small.zz": _damaged(stream, len(stream) - 4, 4),
    }
    found = _search(tmp_path, files)
    assert all(f"copy in {tmp_path / name}:{TOKEN}" in found for name in files), found
    why = unsearched(found)
    assert why is not None and all(str(tmp_path / name) in why for name in files), why


def test_a_stream_damaged_before_its_end_is_named_as_not_searched(tmp_path: Path) -> None:
    """A canary after the damage cannot be read: the file is named, small or large, and the shell sweep proves
    nothing of it."""
    text = random.Random(3).randbytes(1_300_000).hex().encode()  # compressible (Huffman coded), over a MiB as gzip
    small, large = gzip.compress(text[:40_000] + TOKEN.encode()), gzip.compress(text + TOKEN.encode())
    assert len(large) > COMPRESSED_MAX
    files = {"small.gz": _damaged(small, len(small) // 2, 64), "large.gz": _damaged(large, len(large) // 2, 64)}
    why = unsearched(_search(tmp_path, files))
    assert why is not None and all(str(tmp_path / name) in why for name in files), why


def test_a_shipped_file_that_does_not_decode_is_named() -> None:
    """What the job shipped of a small compressed file arrived unreadable (cut, mangled): it was not searched."""
    found = decoded(f"boundary-compressed /tmp/x.gz {base64.b64encode(b'x').decode()[:-1]}!\n", [TOKEN])
    why = unsearched(found)
    assert why is not None and "/tmp/x.gz" in why


def test_a_text_file_that_starts_like_a_zlib_header_is_searched_as_text() -> None:
    """A file of "x^2 + y^2" starts with a valid zlib header and inflates to nothing: no stream, so nothing is left
    unsearched (the grep reads it as text) and no cell turns INCONCLUSIVE for it (the review of issue 56)."""
    assert inflate(b"x^2 + y^2 = z^2\n") == ("zlib", b"", None)
