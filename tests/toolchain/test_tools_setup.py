"""Set-up fails fast and says why: an unreachable registry or an untrusted certificate in one line, within a minute."""

from __future__ import annotations

import time

import pytest

from boundary.toolchain import tools


def test_an_untrusted_certificate_names_node_extra_ca_certs():
    said = "npm error code SELF_SIGNED_CERT_IN_CHAIN\nnpm error errno SELF_SIGNED_CERT_IN_CHAIN\nrequest failed"
    assert "NODE_EXTRA_CA_CERTS" in tools.npm_failure(said)


def test_an_unreachable_registry_names_the_proxy_and_the_mirror():
    assert "npm_config_registry" in tools.npm_failure("npm error code ECONNREFUSED")


def test_anything_else_shows_what_npm_said():
    assert tools.npm_failure("npm error 418 teapot").endswith("npm error 418 teapot")


def test_a_registry_that_refuses_fails_the_set_up_in_seconds(monkeypatch):
    """A registry nobody answers on: the ping says so at once, not after npm's minutes of retries."""
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:9/")
    started = time.monotonic()
    with pytest.raises(tools.ToolsError) as raised:
        tools.registry_reachable()
    assert time.monotonic() - started < 60
    assert "http://127.0.0.1:9/" in str(raised.value) and "cannot be reached" in str(raised.value)


@pytest.fixture
def self_signed_registry(tmp_path):
    """An HTTPS registry on loopback whose certificate nobody trusts, as behind a TLS-intercepting proxy."""
    import http.server
    import ssl
    import subprocess
    import threading

    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "1",
            "-subj",
            "/CN=127.0.0.1",
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"https://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_an_untrusted_registry_certificate_fails_the_set_up_in_seconds(monkeypatch, self_signed_registry):
    monkeypatch.setenv("npm_config_registry", self_signed_registry)
    monkeypatch.delenv("NODE_EXTRA_CA_CERTS", raising=False)
    started = time.monotonic()
    with pytest.raises(tools.ToolsError, match="NODE_EXTRA_CA_CERTS"):
        tools.registry_reachable()
    assert time.monotonic() - started < 60
