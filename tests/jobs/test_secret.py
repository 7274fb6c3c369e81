"""The runner secret's oracle: found in any form anywhere a job could have it, it is LEAKED, naming where."""

from __future__ import annotations

import base64
import gzip
import io
import lzma
import subprocess
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from boundary import unpack
from boundary.jobs.secret import RunnerSecret
from boundary.layout import JobPaths
from boundary.runners.contract import Job


def job(tmp_path: Path, env: dict[str, str] | None = None) -> Job:
    paths = JobPaths("job-b", tmp_path / "checkout", tmp_path / "data", scratch=tmp_path / "tmp")
    for directory in (paths.checkout, paths.data, paths.tmp):
        directory.mkdir(parents=True)
    return Job("job-b", paths, ["/bin/agent", "run"], env or {"HOME": str(tmp_path)})


def test_a_secret_in_the_jobs_environment_is_leaked_naming_the_variable(tmp_path):
    secret = RunnerSecret()
    secret.check_launch(job(tmp_path, {"API_KEY": secret.token}))
    finding = secret.finding(jobs_ran=1)
    assert finding.verdict == "LEAKED" and "$API_KEY" in finding.detail


def test_a_base64_copy_in_a_file_the_job_wrote_is_leaked(tmp_path):
    secret, launched = RunnerSecret(), job(tmp_path)
    (launched.checkout / "out.txt").write_bytes(b"noise:" + base64.b64encode(b"k=" + secret.token.encode()))
    secret.check_files(launched)
    assert secret.finding(jobs_ran=1).verdict == "LEAKED" and "out.txt" in secret.found[0]


def test_a_request_that_carries_it_is_leaked(tmp_path):
    secret = RunnerSecret()
    secret.check_requests("x.job-b", [b'{"messages": []}', f'{{"tool": "{secret.token}"}}'.encode()])
    assert secret.found == ["request 2 job x.job-b sent the model"]


def test_nowhere_is_denied_only_when_a_job_ran(tmp_path):
    secret, launched = RunnerSecret(), job(tmp_path)
    secret.check_launch(launched)
    secret.check_files(launched)
    assert secret.finding(jobs_ran=1).verdict == "DENIED"
    assert secret.finding(jobs_ran=0).verdict == "INCONCLUSIVE"


def test_where_the_secret_lies_is_found_not_declared(tmp_path):
    """Issue 28: a key the runner wrote at setup into a file it does not name (an auth.json), or one the job's env
    names outside STATE, is found from outside, whatever its age, and becomes a target of job B's channels."""
    secret = RunnerSecret()
    state, elsewhere = tmp_path / "state", tmp_path / "etc"
    (state / "accounts" / "a").mkdir(parents=True)
    elsewhere.mkdir()
    auth = state / "accounts" / "a" / "auth.json"
    auth.write_text(f'{{"key": "{secret.token}"}}')
    (state / "accounts" / "a" / "other.json").write_text("{}")
    named = elsewhere / "key"
    named.write_bytes(base64.b64encode(b"k=" + secret.token.encode()))
    launched = job(tmp_path / "job", {"KEY_FILE": str(named), "HOME": str(tmp_path)})
    assert secret.homes(state, launched) == [auth, named]
    finding = secret.finding(jobs_ran=1)
    assert finding.verdict == "DENIED" and f"it lies in {auth}, {named}" in finding.detail


def _wrapped(data: bytes) -> bytes:
    encoded = base64.encodebytes(data)  # MIME: 76 columns a line
    assert encoded.count(b"\n") > 1
    return encoded


def _zip(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("job-a/output.txt", data)
    return buffer.getvalue()


def _zstd(data: bytes) -> bytes:
    return subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True, check=True).stdout


FORMS: dict[str, Callable[[bytes], bytes]] = {
    "base64url": lambda data: base64.urlsafe_b64encode(data),
    "hex": lambda data: data.hex().encode(),
    "HEX": lambda data: data.hex().upper().encode(),
    "base64 at 76 columns": _wrapped,
    "gzip": gzip.compress,
    "zlib": zlib.compress,
    "xz": lzma.compress,
    "zstd": _zstd,
    "zip": _zip,
    "a zip inside an xz": lambda data: lzma.compress(_zip(data)),
}


@pytest.mark.parametrize("form", FORMS)
def test_each_form_of_a_copy_in_a_jobs_file_is_leaked(tmp_path: Path, form: str) -> None:
    """Issue 42: base64url, hex, wrapped base64 and archives were "nothing there" to the harness's own search."""
    secret, launched = RunnerSecret(), job(tmp_path)
    padding = b"x" * 200  # a long line before: base64 wrapped at 76 columns breaks the token in two
    (launched.data_dir / "archive.bin").write_bytes(FORMS[form](b"token=" + padding + secret.token.encode()))
    secret.check_files(launched)
    finding = secret.finding(jobs_ran=1)
    assert finding.verdict == "LEAKED" and "archive.bin" in finding.detail, (form, finding)


@pytest.mark.parametrize("form", ["gzip", "zip"])
def test_a_file_in_a_form_without_the_secret_is_denied(tmp_path: Path, form: str) -> None:
    secret, launched = RunnerSecret(), job(tmp_path)
    (launched.data_dir / "archive.bin").write_bytes(FORMS[form](b"nothing of the runner's here " * 100))
    secret.check_files(launched)
    assert secret.finding(jobs_ran=1).verdict == "DENIED"


def test_a_file_it_could_not_read_to_the_end_is_inconclusive_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An archive that unpacks beyond the cap (and a zstd archive with no zstd to unpack it) is not "nothing there"."""
    secret, launched = RunnerSecret(), job(tmp_path)
    (launched.data_dir / "bomb.gz").write_bytes(gzip.compress(b"\0" * 4096))
    (launched.checkout / "cache.zst").write_bytes(_zstd(b"data"))
    monkeypatch.setattr(unpack, "UNPACKED_MAX", 1024)
    monkeypatch.setattr(unpack.shutil, "which", lambda name: None)
    secret.check_files(launched)
    finding = secret.finding(jobs_ran=1)
    assert finding.verdict == "INCONCLUSIVE", finding
    assert "bomb.gz: unpacks to over" in finding.detail and "cache.zst: a zstd archive" in finding.detail
    assert "apt-get install zstd" in finding.detail


def test_a_file_larger_than_a_chunk_is_searched_to_its_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The search read 8 MiB of each file; a copy past that was "nothing there". Chunks overlap, so a copy that
    straddles two chunks is found too."""
    monkeypatch.setattr(unpack, "CHUNK", 1000)
    secret, launched = RunnerSecret(), job(tmp_path)
    (launched.data_dir / "log").write_bytes(b"." * 1990 + secret.token.encode() + b"." * 5000)
    secret.check_files(launched)
    assert secret.finding(jobs_ran=1).verdict == "LEAKED"
