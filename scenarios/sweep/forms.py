"""The forms a copy of a canary takes, and how B's shell sweep finds each: base64 (at each of its 3 alignments),
UTF-16 (LE and BE), hex (either case), and gzip or zlib (a git loose object is zlib: `compressed.py`).

The harness knows every canary when it writes B's script, so the encoded forms go, one a line, into a file in B's
checkout that `grep -a -E -f` reads with the pattern every canary matches: one read of each file (NULs taken out of
what it prints: a UTF-16 copy then reads as the canary). Each form has its control: B's own canary in that form, in
its checkout, found by the same search; a form whose control was not found leaves every cell of the shell sweep
unproven.

A base64 or hex copy wrapped into lines (`base64` breaks at 76 columns, `xxd -p` at 60: a canary's form is often
across a break) is found by the part of its form that a break leaves whole on one line (`wrapped_forms`,
`hex_parts`).
"""

from __future__ import annotations

import base64
import gzip
import re
import zlib
from pathlib import Path

from boundary import canary
from boundary.scenarios.sweep.compressed import (
    COMPRESSED,
    GZIP,
    INFLATED,
    NO_PERL,
    ZLIB,
    inflated,
    ship_line,
    write_program,
)
from boundary.scenarios.sweep.places import SWEEP_OUTPUT

FORMS_FILE = f"{SWEEP_OUTPUT}forms"  # in B's checkout: the patterns `grep -E -f` reads
FORM = "boundary-form"  # `boundary-form PATH:MATCH`: an encoded form of a canary in PATH
BASE64, UTF16, HEX = "base64", "UTF-16", "hex"
WRAPPED, HEX_WRAPPED = f"{BASE64} wrapped", f"{HEX} wrapped"
CONTROLS = (
    *(f"{BASE64} {skip}" for skip in range(3)),
    *(WRAPPED, f"{UTF16}LE", f"{UTF16}BE", GZIP, ZLIB, HEX, HEX_WRAPPED),
)


def base64_forms(token: str) -> list[str]:
    """The token's base64 at each alignment: the whole groups its bytes make after skipping 0, 1 or 2 of them."""
    data = token.encode()
    return [base64.b64encode(data[skip:][: (len(data) - skip) // 3 * 3]).decode() for skip in range(3)]


def wrapped_forms(token: str) -> list[str]:
    """What stays whole of the token's base64 when a line end breaks it (at a 4-character group, as a wrapped
    stream does): for each alignment, the shortest end of the form that holds 9 of the token's random bytes (the
    line after a break before it holds it whole), and the shortest start that holds more random bytes than the end
    it leaves (the line before any later break holds it whole). Every line break inside the form leaves one of the
    two whole, and each names one canary: 9 random bytes are 36 bits."""
    fixed, parts = len(canary.PREFIX), []
    for skip, form in enumerate(base64_forms(token)):
        end = skip + len(form) // 4 * 3  # the form's bytes are data[skip:end]
        cuts = range(4, len(form), 4)
        random_after = {cut: end - max(skip + cut // 4 * 3, fixed) for cut in cuts}
        random_before = {cut: max(0, skip + cut // 4 * 3 - max(skip, fixed)) for cut in cuts}
        tail = max(cut for cut in cuts if random_after[cut] >= random_before[cut])
        head = min(cut for cut in cuts if random_before[cut] > random_after[cut])
        parts += [form[tail:], form[:head]]
    return parts


def hex_forms(token: str) -> list[str]:
    """The token's bytes in hex, in either case (`xxd -p`, `od`, a debugger's dump)."""
    return [token.encode().hex(), token.encode().hex().upper()]


def hex_parts(token: str) -> list[str]:
    """What stays whole of the token's hex when a line end breaks it (`xxd -p` wraps at 60 columns, and its form is
    58): its hex cut in two where each half holds half its random digits (10 of them: 40 bits, one canary), the
    first half in either case, then the second (a canary's digits are digits in hex: one case). A break before the
    cut leaves the second half whole on the next line, one at or after it the first half on its own."""
    digits, cut = token.encode().hex(), _hex_cut(token)
    return [digits[:cut], digits[:cut].upper(), digits[cut:]]


def _hex_cut(token: str) -> int:
    return 2 * (len(canary.PREFIX) + (len(token) - len(canary.PREFIX)) // 2)


def encoded(tokens: list[str]) -> dict[str, tuple[str, str]]:
    """Each encoded form of each token -> (its form's name, the token). base64url is base64 here: a canary's bytes
    (hex digits) never make base64's `+` or `/`."""
    forms = {form: (BASE64, token) for token in tokens for form in base64_forms(token)}
    forms |= {part: (BASE64, token) for token in tokens for part in wrapped_forms(token)}
    return forms | {form: (HEX, token) for token in tokens for form in [*hex_forms(token), *hex_parts(token)]}


def patterns(tokens: list[str]) -> bytes:
    """Every canary (the pattern any matches), then every encoded form of every token, one a line, for
    `grep -a -E -f`: one read of each file finds them all. `+` is the one character of base64 an ERE reads."""
    forms = [form.replace("+", "[+]").encode() for token in tokens for form in base64_forms(token)]
    forms += [part.replace("+", "[+]").encode() for token in tokens for part in wrapped_forms(token)]
    forms += [token.encode(encoding) for token in tokens for encoding in ("utf-16-le", "utf-16-be")]
    forms += [form.encode() for token in tokens for form in hex_forms(token)]
    # The second halves of `hex_parts`; the first are one pattern for every canary's (`any_canary_forms`): a
    # pattern for each token's cost grep a fifth more to compile, once for every batch of files xargs hands it.
    forms += [token.encode().hex()[_hex_cut(token) :].encode() for token in tokens]
    return b"\n".join([canary.PATTERN.encode(), *forms, *any_canary_forms()]) + b"\n"


def write_search_files(directory: Path, tokens: list[str]) -> None:
    """What B's shell search reads in its checkout (`directory`): every form of `tokens` to look for, and the
    program that reads compressed files."""
    (directory / FORMS_FILE).write_bytes(patterns(tokens))
    write_program(directory)


def any_canary_forms() -> list[bytes]:
    """Patterns that match every canary's base64 (each alignment) and UTF-16 without naming one: how B finds a
    copy of a token it must never be handed, the runner secret, whose forms its script cannot hold. The match is
    the whole form, so what B's sweep writes down holds the copy it found (of hex across a line end, the first half
    of `hex_parts`, which the harness reads as the copy it is); and every token's hex's first half."""
    prefix, size = canary.PREFIX.encode(), len(canary.new_canary())
    found = []
    for skip in range(3):
        fixed = base64.b64encode(prefix[skip:][: (len(prefix) - skip) // 3 * 3]).decode()
        found.append(f"{fixed}[A-Za-z0-9+/]{{{(size - skip) // 3 * 4 - len(fixed)}}}".encode())
    digits = size - len(prefix)
    found.append(canary.PREFIX.encode("utf-16-le") + b"([0-9a-f]\0){%d}" % digits)
    found.append(canary.PREFIX.encode("utf-16-be") + b"(\0[0-9a-f]){%d}" % digits)
    for prefix_hex in (prefix.hex(), prefix.hex().upper()):  # a hex digit's byte is 0x30-0x39 or 0x61-0x66
        found.append(f"{prefix_hex}(3[0-9]|6[1-6]){{{digits}}}".encode())
        found.append(f"{prefix_hex}(3[0-9]|6[1-6]){{{digits // 2}}}".encode())  # its first half: `hex_parts`
    return found


def search_lines(files: str) -> str:
    """B's shell over the files listed (NUL-separated) in `files`: every canary, each match of an encoded form
    marked (a canary itself ends its line; NULs are taken out after); then the compressed files, by their first
    two bytes (a grep for the magic matched after any NUL of a binary, and shipped thousands of them)."""
    return (
        f"xargs -0 -r grep -a -o -H -E -f {FORMS_FILE} 2>/dev/null < {files} "
        f"| sed -E '/:{canary.PATTERN}$/!s|^|{FORM} |' | tr -d '\\0'; {ship_line(files)}"
    )


def plant_controls(checkout: Path) -> dict[str, str]:
    """B's own canary in each form, in its checkout: form -> its canary."""
    controls = {form: canary.new_canary() for form in CONTROLS}
    for skip in range(3):  # the canary at stream offset 0, 1, 2
        data = b"\0" * skip + controls[f"{BASE64} {skip}"].encode()
        (checkout / f"own-base64-{skip}-{canary.new_canary()}.txt").write_bytes(base64.b64encode(data) + b"\n")
    for order in ("LE", "BE"):
        encoded = controls[f"{UTF16}{order}"].encode(f"utf-16-{order.lower()}")
        (checkout / f"own-utf16-{order}-{canary.new_canary()}.txt").write_bytes(encoded)
    # Wrapped as `base64` wraps, with a break inside the canary's form: its 2-skip form begins 16 characters before
    # the first line's end (43 bytes of padding: the token's third byte starts group 15, column 60 of 76).
    wrapped = base64.encodebytes(b"\0" * 43 + controls[WRAPPED].encode())
    (checkout / f"own-base64-wrapped-{canary.new_canary()}.txt").write_bytes(wrapped)
    (checkout / f"own-{canary.new_canary()}.gz").write_bytes(gzip.compress(controls[GZIP].encode() + b"\n"))
    (checkout / f"own-{canary.new_canary()}.zz").write_bytes(zlib.compress(controls[ZLIB].encode() + b"\n"))
    (checkout / f"own-hex-{canary.new_canary()}.txt").write_text(controls[HEX].encode().hex() + "\n")
    # As `xxd -p` wraps, with a break inside the form: 15 bytes of padding start it at column 30 of 60.
    wrapped_hex = xxd_lines(b"\0" * 15 + controls[HEX_WRAPPED].encode())
    (checkout / f"own-hex-wrapped-{canary.new_canary()}.txt").write_text(wrapped_hex)
    return controls


def xxd_lines(data: bytes) -> str:
    """`data` as `xxd -p` writes it: hex, 60 digits a line."""
    digits = data.hex()
    return "".join(f"{digits[at : at + 60]}\n" for at in range(0, len(digits), 60))


def decoded(found: str, tokens: list[str]) -> str:
    """The shell sweep's findings with each encoded one read: `FORM copy in PATH:CANARY`, so that every cell finds
    a copy as it finds the canary itself."""
    by_form = encoded(tokens)
    lines = []
    for line in found.splitlines():
        if line.startswith(f"{FORM} "):
            path, _, match = line[len(FORM) + 1 :].rpartition(":")
            form, token = by_form.get(match) or (UTF16, match if match in tokens else None)
            lines += [f"{form} copy in {path}:{token}"] if token else []
        elif line.startswith(f"{COMPRESSED} "):
            lines += inflated(line[len(COMPRESSED) + 1 :], tokens)
        elif line.startswith(f"{INFLATED} "):
            path, _, token = line[len(INFLATED) + 1 :].rpartition(":")
            lines.append(f"compressed copy in {path}:{token}")
        else:
            lines.append(line)
    return "\n".join(lines) + ("\n" if found.endswith("\n") else "")


def form_controls(found: str, controls: dict[str, str]) -> str | None:
    """Why the shell sweep's encoded search proves nothing: the forms whose control it did not find (None: all)."""
    copies = {form: token for form, token in controls.items() if _copy(found, form.split(" ")[0], token)}
    missed = [form for form in controls if form not in copies]
    if not missed:
        return None
    why = f" ({NO_PERL})" if NO_PERL in found else ""
    return f"control failed: shell_sweep did not find job B's own canary as {', '.join(missed)} in its checkout{why}"


def _copy(found: str, form: str, token: str) -> bool:
    label = UTF16 if form.startswith(UTF16) else form
    return re.search(rf"^{re.escape(label)} copy in .*:{re.escape(token)}$", found, re.MULTILINE) is not None
