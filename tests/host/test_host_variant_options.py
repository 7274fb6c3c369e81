"""`--host-etc` and `--host-ipv6`: what they accept, and what they refuse with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from boundary.host import variant
from boundary.host.namespace_files import write_files


def test_a_file_goes_over_the_hosts_etc_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hosts = tmp_path / "hosts"
    hosts.write_text("127.0.0.1 localhost\n::1 localhost\n")
    monkeypatch.setenv(variant.ETC_ENV, f"hosts={hosts}")
    assert variant.etc_files() == {"hosts": hosts}
    workdir = tmp_path / "host"
    workdir.mkdir()
    write_files(workdir, tmp_path)
    assert (workdir / "etc-own" / "hosts").read_text() == hosts.read_text()  # init.sh copies it into the overlay


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ("hosts", "expected NAME=FILE"),
        ("/etc/hosts=x", "expected NAME=FILE"),
        ("../hosts=x", "expected NAME=FILE"),
        ("resolv.conf={file}", "writes /etc/resolv.conf itself"),
        ("hosts=/no/such/file", "is not a readable file"),
    ],
)
def test_a_malformed_or_reserved_file_is_refused_naming_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, said: str
) -> None:
    (tmp_path / "f").write_text("x\n")
    monkeypatch.setenv(variant.ETC_ENV, value.format(file=tmp_path / "f"))
    with pytest.raises(ValueError, match=said):
        variant.etc_files()


def test_ipv6_is_on_unless_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(variant.IPV6_ENV, raising=False)
    assert not variant.ipv6_off()
    monkeypatch.setenv(variant.IPV6_ENV, "off")
    assert variant.ipv6_off()
