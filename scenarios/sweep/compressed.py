"""How B's shell sweep reads gzip and zlib copies (a git loose object is zlib), every member of each, and names any it
could not read to its end.

A compressed file is not decompressed in the sandbox when it is small: B's shell (perl) reads the first two bytes of
each file and prints each one under a MiB that starts with gzip's or zlib's magic, in base64; the harness inflates
and searches it. A larger one is inflated in the job by perl's zlib as it streams (raw canaries only). Either way
every member is read (`cat a.gz b.gz` is one gzip file), a damaged trailer costs nothing of what inflated, and a
file that cannot be read to its end — damaged, its check failed, inflating past the cap, or no perl zlib to inflate
it — is named (`UNSEARCHED`): the shell sweep's cells are then INCONCLUSIVE (unless a canary was found: LEAKED),
since what it holds was not searched.
"""

from __future__ import annotations

import base64
import binascii
import re
import shlex
import zlib
from pathlib import Path

from boundary import canary
from boundary.scenarios.sweep.places import SWEEP_OUTPUT

COMPRESSED = "boundary-compressed"  # `boundary-compressed PATH BASE64`: a small gzip or zlib file
INFLATED = "boundary-inflated"  # `boundary-inflated PATH:CANARY`: a canary in a large one, inflated in the job
UNSEARCHED = "boundary-compressed-unsearched"  # `… PATH (WHY)`: one not searched to its end
NO_ZLIB = "no Compress::Raw::Zlib in the job's view"
NO_PERL = "boundary-compressed-unread: no perl in the job's view to read compressed files; fix: install perl there"
COMPRESSED_MAX = 1 << 20  # bytes: larger compressed files are inflated in the job, not shipped out
INFLATED_MAX = COMPRESSED_MAX * 64  # bytes: a shipped file inflated further (a bomb) is named, not searched on
GZIP, ZLIB = "gzip", "zlib"
_SLICE = 1 << 16  # compressed bytes inflated at a time: a damaged stream loses at most one slice's output
_ZLIB_HEADS = (b"\x78\x01", b"\x78\x5e", b"\x78\x9c", b"\x78\xda")  # the magic the job's perl ships by

# The program (`compressed.pl`) goes into B's checkout beside the forms' patterns, not into B's command: Claude Code
# asks before it runs a command of 10,000 characters or more, and the sweep's is near that at the cap of places.
PROGRAM_FILE = f"{SWEEP_OUTPUT}compressed.pl"


def _program() -> str:
    """`compressed.pl`, its words (the markers, the size shipped whole, the canaries' pattern) filled in."""
    words = {"COMPRESSED": COMPRESSED, "UNSEARCHED": UNSEARCHED, "INFLATED": INFLATED, "NO_ZLIB": NO_ZLIB}
    words |= {"MAX": str(COMPRESSED_MAX), "PATTERN": canary.PATTERN}
    text = (Path(__file__).parent / "compressed.pl").read_text()
    return re.sub(rf"\b({'|'.join(words)})\b", lambda word: words[word.group()], text)


def write_program(directory: Path) -> None:
    """The job's program that reads compressed files, into `directory` (B's checkout), where `ship_line` runs."""
    (directory / PROGRAM_FILE).write_text(_program())


def ship_line(files: str) -> str:
    """B's shell over the files listed (NUL-separated) in `files`: each compressed one shipped or inflated. perl
    failing part-way (killed, out of memory) names every file listed as not searched, whatever it printed first."""
    cut = shlex.quote(f"{UNSEARCHED} every compressed file listed (perl exited %s before it was done)\n")
    return f"perl {PROGRAM_FILE} < {files} 2>/dev/null || {{ rc=$?; echo {shlex.quote(NO_PERL)}; printf {cut} $rc; }}"


def inflated(rest: str, tokens: list[str]) -> list[str]:
    """A shipped file's canaries (`rest`: `PATH BASE64`): `gzip copy in PATH:CANARY` (or zlib), and the file named
    as not searched to its end when it was not."""
    path, _, encoded = rest.rpartition(" ")
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        return [f"{UNSEARCHED} {path} (what the job shipped of it is not base64)"]
    form, text, why = inflate(data)
    cut = [f"{UNSEARCHED} {path} ({why})"] if why else []
    return [f"{form} copy in {path}:{t}" for t in tokens if t.encode() in text] + cut


def inflate(data: bytes) -> tuple[str, bytes, str | None]:
    """Every member inflated, one after another (a file cut short still shows what it holds; b'' when it is
    neither form), and why it was not searched to its end (None: it was). Inflated raw, its header read and its
    trailer checked here: a damaged trailer costs nothing of what inflated, yet names the file (a failed check
    cannot tell a bad trailer from a body damaged into other bytes)."""
    form, text, at = GZIP if data[:2] == b"\x1f\x8b" else ZLIB, bytearray(), 0
    while (body := _body(data, at)) is not None:
        begun, (start, size) = len(text), body
        if form == ZLIB and not at and not _inflates(data[start : start + 16]):
            return form, b"", None  # a zlib header on no stream (a text file that starts "x^2"): searched as it is
        end, why = _member(data, start, text)
        if end is None or why:
            return form, bytes(text), why
        trailer, at = data[end : end + size], end + size
        if len(trailer) == size and trailer != _trailer(bytes(text[begun:]), size):
            return form, bytes(text), f"its check failed {end} bytes in: what inflated may not be what was written"
    return form, bytes(text), None


def _inflates(head: bytes) -> bool:
    """Whether raw deflate data starts here: zlib's two header bytes are ordinary text ("x^", "x\x01")."""
    try:
        zlib.decompressobj(-zlib.MAX_WBITS).decompress(head)
    except zlib.error:
        return False
    return True


def _trailer(out: bytes, size: int) -> bytes:
    """What a gzip trailer (8 bytes: CRC-32, length) or a zlib one (4: Adler-32) holds for `out`."""
    if size == 8:
        return zlib.crc32(out).to_bytes(4, "little") + (len(out) & 0xFFFFFFFF).to_bytes(4, "little")
    return zlib.adler32(out).to_bytes(4, "big")


def _body(data: bytes, at: int) -> tuple[int, int] | None:
    """Where the deflate data of the gzip or zlib stream at `at` starts, and its trailer's length (None: no stream
    starts there; what is there was searched as it is)."""
    if data[at : at + 2] in _ZLIB_HEADS:
        return at + 2, 4
    if data[at : at + 3] != b"\x1f\x8b\x08" or len(data) < at + 10:
        return None
    flags, start = data[at + 3], at + 10
    if flags & 4:  # FEXTRA: its length, then itself
        start += 2 + int.from_bytes(data[start : start + 2], "little")
    for flag in (8, 16):  # FNAME, FCOMMENT: each ends at a NUL
        if flags & flag:
            start = data.find(b"\0", start) + 1 or len(data)
    return start + (2 if flags & 2 else 0), 8  # FHCRC


def _member(data: bytes, start: int, text: bytearray) -> tuple[int | None, str | None]:
    """The raw deflate data at `start` inflated onto `text`, a slice at a time (an error loses that slice's output
    only): where it ends (None: the file ends first), and why the rest was not searched (None: nothing was left)."""
    stream, view = zlib.decompressobj(-zlib.MAX_WBITS), memoryview(data)
    for at in range(start, len(data), _SLICE):
        piece = view[at : at + _SLICE]
        try:
            text += stream.decompress(piece, INFLATED_MAX + 1 - len(text))
        except zlib.error as error:
            return None, f"damaged {at - start} to {at - start + len(piece)} bytes into a stream: {error}"
        if len(text) > INFLATED_MAX:
            return None, f"inflates past {INFLATED_MAX >> 20} MiB"
        if stream.eof:
            return at + len(piece) - len(stream.unused_data), None
    return None, None


def unsearched(found: str) -> str | None:
    """Why the shell sweep's cells prove nothing: compressed files it found but could not search to their end."""
    paths = [line[len(UNSEARCHED) + 1 :] for line in found.splitlines() if line.startswith(f"{UNSEARCHED} ")]
    if not paths:
        return None
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    fix = " (fix: perl's Compress::Raw::Zlib in the job's view inflates the large ones)"
    return (
        f"shell_sweep could not search {len(paths)} compressed file(s) to their end: {shown}; what they hold may be "
        f"A's{fix if any(NO_ZLIB in path for path in paths) else ''}"
    )
