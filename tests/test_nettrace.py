"""The network trace fails closed: a trace that cannot show the model's connection proves nothing."""

from __future__ import annotations

from pathlib import Path

from boundary.jobs.nettrace import MODEL, read_trace

MODEL_CONNECT = (
    '26 connect(20, {sa_family=AF_INET, sin_port=htons(4010), sin_addr=inet_addr("127.0.0.1")}, 16) = -1 EINPROGRESS\n'
)
UNIX_ONLY = '13 connect(20, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT\n'


def test_the_model_alone_is_clean(tmp_path: Path) -> None:
    (tmp_path / "t").write_text(MODEL_CONNECT + UNIX_ONLY)
    use = read_trace(tmp_path / "t")
    assert use.clean and use.inet == {MODEL} and use.problem is None
    assert "scripted model only" in use.explain()


def test_a_trace_without_the_model_is_not_clean(tmp_path: Path) -> None:
    """Every job talks to the scripted model: a trace that does not show it saw nothing at all."""
    (tmp_path / "t").write_text(UNIX_ONLY)
    use = read_trace(tmp_path / "t")
    assert not use.clean and use.foreign == []
    assert use.explain().startswith("INCONCLUSIVE: the trace shows no connection to the scripted model")


def test_an_empty_trace_is_not_clean(tmp_path: Path) -> None:
    (tmp_path / "t").write_text("")
    use = read_trace(tmp_path / "t")
    assert not use.clean and "INCONCLUSIVE" in use.explain() and "empty" in use.explain()


def test_a_missing_trace_is_not_clean_and_does_not_crash(tmp_path: Path) -> None:
    use = read_trace(tmp_path / "absent")
    assert not use.clean and use.inet == frozenset() and use.unix == frozenset()
    assert use.problem is not None and "absent" in use.problem
    assert use.explain().startswith("INCONCLUSIVE:")


def test_a_foreign_peer_is_named_even_without_the_model(tmp_path: Path) -> None:
    dns = '13 connect(20, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.0.0.53")}, 16) = -1\n'
    (tmp_path / "t").write_text(dns)
    use = read_trace(tmp_path / "t")
    assert not use.clean and "10.0.0.53:53" in use.explain()


def test_a_foreign_peer_is_named_with_the_program_that_reached_for_it(tmp_path: Path) -> None:
    execve = '31 execve("/usr/bin/socat", ["socat", "TCP:127.0.0.1:41845"], 0x7ffc /* 9 vars */) = 0\n'
    reach = '31 connect(5, {sa_family=AF_INET, sin_port=htons(41845), sin_addr=inet_addr("127.0.0.1")}, 16) = 0\n'
    (tmp_path / "t").write_text(MODEL_CONNECT + execve + reach)
    use = read_trace(tmp_path / "t")
    assert not use.clean and "127.0.0.1:41845 (by pid 31, /usr/bin/socat)" in use.explain()
