"""What a file holds, for a search from outside: its bytes to the end, and what they unpack to when the file is a
gzip, zlib, xz, zstd or zip archive (a small archive inside one too), so a copy a job or a runner compressed is found
like a plain one. Everything is read in overlapping chunks, so memory stays small whatever the file's size. Nothing
is taken as empty: a file that cannot be read, or an archive that unpacks beyond UNPACKED_MAX (an archive can
inflate without bound), raises `Unreadable`, naming it — a search that did not see a file's content proved nothing.
"""

from __future__ import annotations

import io
import lzma
import shutil
import subprocess
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

CHUNK = 8 << 20  # bytes read, or unpacked, at a time
OVERLAP = 4096  # bytes one chunk repeats of the last: longer than any form searched for
UNPACKED_MAX = 1 << 30  # what one archive may unpack to, all its members together
DEPTH = 2  # archives inside archives (each inner one at most a CHUNK), this deep

GZIP, ZLIB, XZ, ZSTD, ZIP = "gzip", "zlib", "xz", "zstd", "zip"
MAGIC = [(b"\x1f\x8b", GZIP), (b"\xfd7zXZ\x00", XZ), (b"\x28\xb5\x2f\xfd", ZSTD), (b"PK\x03\x04", ZIP)]
ZLIB_HEADERS = (b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda")


class Unreadable(Exception):
    """A file whose content a search could not see to the end: what it is and why."""


def pieces(path: Path, unpack: bool = True) -> Iterator[bytes]:
    """The file's bytes in overlapping chunks, then, if it is an archive (and `unpack`), what it unpacks to. A file
    gone since it was listed yields nothing (nothing holds what no longer exists)."""
    try:
        with path.open("rb") as file:
            head = file.read(CHUNK)
            yield from _overlapping(_read(file, head))
            found = kind(head)
            if found is not None and unpack:
                file.seek(0)
                yield from unpacked(found, file, str(path), DEPTH)
    except FileNotFoundError:
        return
    except OSError as error:
        raise Unreadable(f"{path}: {error.strerror or error}") from error


def kind(data: bytes) -> str | None:
    """The archive `data` starts as, by its magic; None for anything else."""
    found = next((name for magic, name in MAGIC if data.startswith(magic)), None)
    return found or (ZLIB if data[:2] in ZLIB_HEADERS else None)


def unpacked(found: str, file: IO[bytes], name: str, depth: int) -> Iterator[bytes]:
    """What archive `file` (of kind `found`, called `name` in errors) unpacks to, in overlapping chunks; an inner
    archive that fits in one chunk is unpacked in turn. A cut stream gives what it holds up to the cut."""
    counted = [0]  # bytes unpacked so far, all members together
    for member, chunks in UNPACKERS[found](file, name):
        if found == ZIP:
            yield member.encode() + b"\n"  # a member's name may hold a copy too
        for piece in _overlapping(_capped(chunks, counted, name)):
            yield piece
            inner = kind(piece)
            if inner is not None and depth > 1 and len(piece) < CHUNK:
                yield from unpacked(inner, io.BytesIO(piece), f"{name}:{member}", depth - 1)


def _read(file: IO[bytes], head: bytes = b"") -> Iterator[bytes]:
    if head:
        yield head
    while chunk := file.read(CHUNK):
        yield chunk


def _capped(chunks: Iterator[bytes], counted: list[int], name: str) -> Iterator[bytes]:
    for chunk in chunks:
        counted[0] += len(chunk)
        if counted[0] > UNPACKED_MAX:
            raise Unreadable(f"{name}: unpacks to over {UNPACKED_MAX >> 20} MiB")
        yield chunk


def _overlapping(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Each chunk with the end of the one before: a copy that straddles two chunks is whole in one piece."""
    tail = b""
    for chunk in chunks:
        if chunk:
            yield tail + chunk
            tail = chunk[-OVERLAP:]


def _zlib_stream(file: IO[bytes], wbits: int) -> Iterator[bytes]:
    decompressor = zlib.decompressobj(wbits=wbits)
    try:
        for data in _read(file):
            while data:
                yield decompressor.decompress(data, CHUNK)
                data = decompressor.unconsumed_tail
            if decompressor.eof:
                return
    except zlib.error:
        return  # not that archive after all, or cut


def _xz_stream(file: IO[bytes]) -> Iterator[bytes]:
    decompressor = lzma.LZMADecompressor()
    try:
        for data in _read(file):
            yield decompressor.decompress(data, CHUNK)
            while not decompressor.needs_input and not decompressor.eof:
                yield decompressor.decompress(b"", CHUNK)
            if decompressor.eof:
                return
    except lzma.LZMAError:
        return


def _zstd_stream(file: IO[bytes], name: str) -> Iterator[bytes]:
    """Through the zstd command (Python 3.11 has no zstd): its absence is Unreadable, with the fix."""
    command = shutil.which("zstd")
    if command is None:
        raise Unreadable(f"{name}: a zstd archive, and no zstd command to unpack it (fix: apt-get install zstd)")
    if isinstance(file, io.BytesIO):  # an inner archive, at most a CHUNK
        yield subprocess.run([command, "-dcq"], input=file.getvalue(), capture_output=True, check=False).stdout
        return
    with subprocess.Popen([command, "-dcq"], stdin=file, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as zstd:
        assert zstd.stdout is not None
        try:
            yield from _read(zstd.stdout)  # a cut stream: what came out before the cut
        finally:
            zstd.kill()


def _zip_members(file: IO[bytes], name: str) -> Iterator[tuple[str, Iterator[bytes]]]:
    try:
        with zipfile.ZipFile(file) as archive:
            for member in archive.infolist():
                with archive.open(member) as content:
                    yield member.filename, _read(content)
    except (zipfile.BadZipFile, RuntimeError, NotImplementedError, EOFError) as error:  # encrypted, cut, unknown
        raise Unreadable(f"{name}: a zip archive it could not unpack ({error})") from error


Unpacker = Callable[[IO[bytes], str], Iterator[tuple[str, Iterator[bytes]]]]
UNPACKERS: dict[str, Unpacker] = {
    GZIP: lambda file, name: iter([(GZIP, _zlib_stream(file, 31))]),
    ZLIB: lambda file, name: iter([(ZLIB, _zlib_stream(file, 15))]),
    XZ: lambda file, name: iter([(XZ, _xz_stream(file))]),
    ZSTD: lambda file, name: iter([(ZSTD, _zstd_stream(file, name))]),
    ZIP: _zip_members,
}
