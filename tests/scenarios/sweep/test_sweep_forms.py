"""B's shell sweep finds a copy of a canary in the forms a copy takes: base64 (each alignment), UTF-16 (LE, BE),
gzip and zlib (a git loose object); each form's control is B's own canary in it, and a form whose control was not
found leaves the shell sweep's cells unproven."""

from __future__ import annotations

import base64
import gzip
import os
import random
import shutil
import subprocess
import zlib
from pathlib import Path
from types import SimpleNamespace

from boundary.scenarios.sweep.compressed import COMPRESSED_MAX, INFLATED_MAX, unsearched
from boundary.scenarios.sweep.forms import (
    FORMS_FILE,
    WRAPPED,
    base64_forms,
    decoded,
    form_controls,
    plant_controls,
    search_lines,
    write_search_files,
)
from boundary.scenarios.sweep.judge import ENVIRONMENT, Evidence, judge_cell
from boundary.scenarios.sweep.places import SWEEP_OUTPUT, Place
from boundary.scenarios.sweep.search import SWEEP_END
from boundary.verdict import Verdict

TOKEN = "BOUNDARY-0123456789abcdef0123"


def _search(directory: Path, tokens: list[str]) -> str:
    """B's encoded search over every file of `directory`, its findings read as the harness reads them."""
    write_search_files(directory, tokens)
    files = sorted(p for p in directory.iterdir() if not p.name.startswith(SWEEP_OUTPUT))
    (directory / "list").write_bytes(b"".join(str(p).encode() + b"\0" for p in files))
    ran = subprocess.run(["bash", "-c", search_lines("list")], capture_output=True, text=True, cwd=directory)
    return decoded(ran.stdout, tokens)


def _copies(found: str) -> dict[str, str]:
    """file name -> the form it was found in."""
    return {
        line.split(" copy in ")[1].split(":")[0].rsplit("/", 1)[1]: line.split(" copy")[0]
        for line in found.splitlines()
    }


def test_each_form_of_a_copy_is_found_and_named(tmp_path: Path) -> None:
    data = TOKEN.encode()
    for skip in range(3):
        (tmp_path / f"b64-{skip}").write_bytes(b"header " + base64.b64encode(b"x" * skip + data + b" tail"))
    (tmp_path / "le").write_bytes(b"\xff\xfe" + TOKEN.encode("utf-16-le"))
    (tmp_path / "be").write_bytes(b"\xfe\xff" + TOKEN.encode("utf-16-be"))
    (tmp_path / "gz").write_bytes(gzip.compress(b"log " + data))
    blob = b"blob %d\0" % (len(data) + 1) + data + b"\n"
    (tmp_path / "git-object").write_bytes(zlib.compress(blob))  # as git writes a loose object
    (tmp_path / "hex").write_bytes(b"dump " + data.hex().encode())  # as `xxd -p` writes it
    (tmp_path / "HEX").write_bytes(data.hex().upper().encode() + b"\n")
    (tmp_path / "plain").write_bytes(b"nothing of it here")
    copies = _copies(_search(tmp_path, [TOKEN]))
    assert copies == {
        "b64-0": "base64",
        "b64-1": "base64",
        "b64-2": "base64",
        "le": "UTF-16",
        "be": "UTF-16",
        "gz": "gzip",
        "git-object": "zlib",
        "hex": "hex",
        "HEX": "hex",
    }


def test_a_cut_short_compressed_file_still_shows_what_it_holds(tmp_path: Path) -> None:
    whole = zlib.compress(TOKEN.encode() + b"\n" + bytes(range(256)) * 50)
    (tmp_path / "cut").write_bytes(whole[: len(whole) // 2])
    assert "zlib copy in" in _search(tmp_path, [TOKEN])


def test_bs_own_canary_in_every_form_is_each_forms_control(tmp_path: Path) -> None:
    controls = plant_controls(tmp_path)
    found = _search(tmp_path, list(controls.values()))
    assert form_controls(found, controls) is None
    without_gzip = "\n".join(line for line in found.splitlines() if not line.startswith("gzip"))
    missed = form_controls(without_gzip, controls)
    assert missed is not None and "gzip" in missed and "zlib" not in missed


def test_an_encoded_copy_is_leaked_with_its_form_named() -> None:
    runner = SimpleNamespace(
        agent=SimpleNamespace(lacks=frozenset(), procfs_blind=frozenset(), search_incomplete=()), denials={}
    )
    place = Place("tmp", "f", TOKEN, "/tmp", held=True)
    found = decoded(
        f"boundary-form /var/log/x:{base64.b64encode(TOKEN.encode()).decode()[:36]}\n{SWEEP_END}\n", [TOKEN]
    )
    evidence = _evidence({"shell_sweep": found}, place)
    finding = judge_cell(runner, ("tmp", "shell_sweep"), [place], evidence)
    assert finding.verdict == Verdict.LEAKED and "base64 copy in /var/log/x" in finding.detail


def test_a_form_whose_control_failed_leaves_the_shell_sweep_unproven() -> None:
    runner = SimpleNamespace(
        agent=SimpleNamespace(lacks=frozenset(), procfs_blind=frozenset(), search_incomplete=()), denials={}
    )
    place = Place("tmp", "f", TOKEN, "/tmp", held=True)
    own = Place("tmp", "g", "BOUNDARY-own", "/tmp", held=True)
    evidence = _evidence({"shell_sweep": f"/tmp/g:BOUNDARY-own\n{SWEEP_END}\n"}, own)
    assert judge_cell(runner, ("tmp", "shell_sweep"), [place], evidence).verdict == Verdict.DENIED
    evidence.controls["shell_sweep:forms"] = "control failed: shell_sweep did not find job B's own canary as gzip"
    for cell in (("tmp", "shell_sweep"), (ENVIRONMENT, "shell_sweep")):
        finding = judge_cell(runner, cell, [place], evidence)
        assert finding.verdict == Verdict.INCONCLUSIVE and "as gzip" in finding.detail


def _evidence(found: dict[str, str], own: Place) -> Evidence:
    controls: dict[str, str | None] = dict.fromkeys(("shell_sweep", "grep_tool", "proc_sweep"))
    return Evidence({"grep_tool": "", "proc_sweep": SWEEP_END, **found}, controls, [own], "BOUNDARY-secret", True, [])


def test_without_perl_the_compressed_forms_fail_their_controls_and_say_why(tmp_path: Path) -> None:
    """The compressed files are read by perl (their first two bytes, then the small ones whole): a job's view with
    no perl finds none, and the gzip and zlib controls' failure names the fix."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("xargs", "grep", "sed", "tr"):
        (bin_dir / tool).symlink_to(shutil.which(tool) or tool)
    work = tmp_path / "work"
    work.mkdir()
    controls = plant_controls(work)
    write_search_files(work, list(controls.values()))
    files = sorted(p for p in work.iterdir() if not p.name.startswith(SWEEP_OUTPUT))
    (work / "list").write_bytes(b"".join(str(p).encode() + b"\0" for p in files))
    bash = shutil.which("bash") or "bash"
    ran = subprocess.run(
        [bash, "-c", search_lines("list")], capture_output=True, text=True, cwd=work, env={"PATH": str(bin_dir)}
    )
    missed = form_controls(decoded(ran.stdout, list(controls.values())), controls)
    assert missed is not None and "gzip, zlib in its checkout" in missed and "install perl" in missed


def test_only_a_file_that_starts_with_the_magic_is_shipped(tmp_path: Path) -> None:
    """A binary with zlib's magic after a NUL (as any .so or .pyc may have) cannot be inflated from its start: it
    is not shipped back (a grep for the magic after every NUL shipped thousands of them whole)."""
    (tmp_path / "binary").write_bytes(b"\x7fELF\x02\x01" + b"\0x\x9c" + bytes(range(256)) * 4)
    (tmp_path / "stream.zz").write_bytes(zlib.compress(TOKEN.encode()))
    write_search_files(tmp_path, [TOKEN])
    (tmp_path / "list").write_bytes(b"".join(str(tmp_path / name).encode() + b"\0" for name in ("binary", "stream.zz")))
    ran = subprocess.run(["bash", "-c", search_lines("list")], capture_output=True, text=True, cwd=tmp_path)
    shipped = [line.split(" ")[1] for line in ran.stdout.splitlines() if line.startswith("boundary-compressed ")]
    assert shipped == [str(tmp_path / "stream.zz")]


def test_a_token_b_is_never_handed_is_found_in_every_form_without_naming_it(tmp_path: Path) -> None:
    """The runner secret: its forms cannot be in B's script, so patterns that match every canary's forms find its
    copy, and what B's sweep writes down holds the copy (the secret's own oracle reads it there)."""
    from boundary.jobs.secret import encodings

    secret = "BOUNDARY-fedcba9876543210fedc"
    for skip in range(3):
        (tmp_path / f"b64-{skip}").write_bytes(base64.b64encode(b"x" * skip + secret.encode() + b"\n"))
    (tmp_path / "le").write_bytes(secret.encode("utf-16-le"))
    (tmp_path / "be").write_bytes(b"\0\0\0" + secret.encode("utf-16-be"))
    (tmp_path / "hex").write_bytes(secret.encode().hex().encode())
    (tmp_path / "HEX").write_bytes(b"key=" + secret.encode().hex().upper().encode())
    write_search_files(tmp_path, [TOKEN])  # B's script knows other canaries, never the secret
    assert secret.encode() not in (tmp_path / FORMS_FILE).read_bytes()
    assert not any(form in (tmp_path / FORMS_FILE).read_bytes() for form in encodings(secret))
    files = sorted(p for p in tmp_path.iterdir() if not p.name.startswith(SWEEP_OUTPUT))
    (tmp_path / "list").write_bytes(b"".join(str(p).encode() + b"\0" for p in files))
    ran = subprocess.run(["bash", "-c", search_lines("list")], capture_output=True, cwd=tmp_path)
    written = {line.split(b":", 1)[0].rsplit(b"/", 1)[1]: line for line in ran.stdout.splitlines()}
    assert set(written) == {f.name.encode() for f in files if f.name != "list"}
    assert all(any(form in line for form in encodings(secret)) for line in written.values()), written
    found = decoded(ran.stdout.decode(errors="replace"), [secret])  # the harness reads them as copies too
    assert len([line for line in found.splitlines() if line.endswith(f":{secret}")]) == len(written)


def test_a_base64_copy_wrapped_with_a_break_inside_the_canary_is_found(tmp_path: Path) -> None:
    """`base64` wraps at 76 columns, and one canary in two then has a line end inside its form: every break a
    wrapped stream can put in it is found, CRLF lines too; B's own wrapped canary is its control."""
    data = TOKEN.encode()
    for pad in range(57 - len(data), 57):  # the token across the first line's end, at each offset
        (tmp_path / f"wrapped-{pad}").write_bytes(base64.encodebytes(b"x" * pad + data))
    (tmp_path / "crlf").write_bytes(base64.encodebytes(b"x" * 40 + data).replace(b"\n", b"\r\n"))
    copies = _copies(_search(tmp_path, [TOKEN]))
    assert copies == {f"wrapped-{pad}": "base64" for pad in range(57 - len(data), 57)} | {"crlf": "base64"}
    own = tmp_path / "own"
    own.mkdir()
    controls = plant_controls(own)  # the wrapped control has its break inside the canary's form, not beside it
    wrapped = next(p for p in own.iterdir() if p.name.startswith("own-base64-wrapped-")).read_text()
    assert not any(form in wrapped for form in base64_forms(controls[WRAPPED]))
    assert form_controls(_search(own, list(controls.values())), controls) is None


def test_a_large_compressed_file_is_inflated_in_the_job(tmp_path: Path) -> None:
    """Over the size shipped out whole, a gzip or zlib file is inflated by the job's perl as it streams: a canary
    past the first MiB, or across two chunks, is found."""
    noise = random.Random(7).randbytes(COMPRESSED_MAX + 4096)  # incompressible: the file is over the cap
    (tmp_path / "big.gz").write_bytes(gzip.compress(noise + b"log line\n" * 99 + TOKEN.encode() + b"\n"))
    (tmp_path / "big.zz").write_bytes(zlib.compress(noise[: (1 << 16) - 10] + TOKEN.encode() + noise))
    assert (tmp_path / "big.gz").stat().st_size > COMPRESSED_MAX
    found = _search(tmp_path, [TOKEN])
    assert all(f"compressed copy in {tmp_path / name}:{TOKEN}" in found for name in ("big.gz", "big.zz")), found


def test_a_large_compressed_file_the_job_cannot_inflate_is_named_and_proves_nothing(tmp_path: Path) -> None:
    """Where perl's zlib does not load in the job's view, a large compressed file is named and the shell sweep's
    cells are INCONCLUSIVE: not found there is not searched there."""
    shadow = tmp_path / "perl5" / "Compress" / "Raw"
    shadow.mkdir(parents=True)
    (shadow / "Zlib.pm").write_text('die "not in this view\\n";\n')  # PERL5LIB comes first: `require` fails
    work = tmp_path / "work"
    work.mkdir()
    noise = random.Random(7).randbytes(COMPRESSED_MAX + 4096)
    (work / "big.gz").write_bytes(gzip.compress(noise + TOKEN.encode()))
    write_search_files(work, [TOKEN])
    (work / "list").write_bytes(str(work / "big.gz").encode() + b"\0")
    env = {**os.environ, "PERL5LIB": str(tmp_path / "perl5")}
    ran = subprocess.run(["bash", "-c", search_lines("list")], capture_output=True, text=True, cwd=work, env=env)
    why = unsearched(decoded(ran.stdout, [TOKEN]))
    assert why is not None and str(work / "big.gz") in why and "Compress::Raw::Zlib" in why


def test_a_small_file_that_inflates_past_the_cap_is_named() -> None:
    bomb = zlib.compress(b"\0" * (INFLATED_MAX + 1) + TOKEN.encode())
    found = decoded(f"boundary-compressed /tmp/bomb {base64.b64encode(bomb).decode()}\n", [TOKEN])
    why = unsearched(found)
    assert why is not None and "/tmp/bomb (inflates past 64 MiB)" in why


def _xxd_p(data: bytes) -> str:
    """`data` as `xxd -p` writes it: hex, 60 digits a line."""
    digits = data.hex()
    return "".join(f"{digits[at : at + 60]}\n" for at in range(0, len(digits), 60))


def test_a_hex_copy_wrapped_by_xxd_with_a_break_inside_the_canary_is_found(tmp_path: Path) -> None:
    """`xxd -p` wraps at 60 columns and a canary's hex is 58 long: at 28 of its 30 offsets a line end is inside it.
    Each offset is found, upper case too (`xxd -p -u`)."""
    data = TOKEN.encode()
    if shutil.which("xxd"):  # the wrapping written here is xxd's
        assert _xxd_p(data * 3) == subprocess.run(["xxd", "-p"], input=data * 3, capture_output=True).stdout.decode()
    for pad in range(30):
        (tmp_path / f"xxd-{pad}").write_text(_xxd_p(b"x" * pad + data))
    (tmp_path / "XXD").write_text(_xxd_p(b"x" * 7 + data).upper())
    copies = _copies(_search(tmp_path, [TOKEN]))
    assert copies == {f"xxd-{pad}": "hex" for pad in range(30)} | {"XXD": "hex"}
