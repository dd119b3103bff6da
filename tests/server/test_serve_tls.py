"""zen serve for a phone (issue 35): HTTPS with a certificate made once under control/tls/ (or the
user's own), plain HTTP refused beyond loopback, and the login link as a QR code."""

from __future__ import annotations

import io
import json
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import segno

from tests.helpers import REPO_ROOT, wait_until
from tests.server.served import Served


class TlsServed(Served):
    """A served home whose `zen serve` runs with --tls on loopback."""

    def start_server(self) -> None:
        out = (self.root / "server.out").open("ab")
        self.server = subprocess.Popen([sys.executable, "-m", "zen", "serve", "--port", "0", "--tls"], cwd=REPO_ROOT,
                                       env=self.env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.procs.append(self.server)
        info = self.home / "control" / "server.json"
        wait_until(info.exists, timeout=30, message="zen serve --tls to write control/server.json")
        self.port = int(json.loads(info.read_text())["port"])
        wait_until(lambda: self.https().get("/api/v1/agent/status").status_code == 200, timeout=20,
                   message="zen serve --tls to answer")

    @property
    def cert(self) -> Path:
        return self.home / "control" / "tls" / "cert.pem"

    def https(self, **kw: object) -> httpx.Client:
        return httpx.Client(base_url=f"https://127.0.0.1:{self.port}", headers=self.headers(), verify=self.trust(),
                            timeout=10, **kw)  # type: ignore[arg-type]

    def trust(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cert))


def test_serving_beyond_loopback_without_tls_is_refused_in_one_sentence(tmp_path: Path) -> None:
    s = Served(tmp_path / "s", supervise=False)
    s.zen_ok("init", str(s.home))
    r = s.zen("serve", "--host", "0.0.0.0", "--port", "0", timeout=30)
    assert r.returncode == 2
    assert "needs --tls" in r.stderr and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (s.home / "control" / "server.json").exists()
    r = s.zen("serve", "--cert", str(tmp_path / "c.pem"), timeout=30)
    assert r.returncode == 2 and "--cert and --key together" in r.stderr


def test_the_login_link_prints_as_a_qr_code_of_that_same_link(tmp_path: Path) -> None:
    s = Served(tmp_path / "s", supervise=False)
    s.zen_ok("init", str(s.home))
    r = s.zen("serve", "--url", "--qr", timeout=30)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    link = lines[0]
    assert link.startswith("http://127.0.0.1:") and "/agent?token=" in link
    want = io.StringIO()
    segno.make(link, error="l").terminal(out=want, compact=True)
    assert "\n".join(lines[1:]).strip("\n") == want.getvalue().strip("\n")
    assert len(lines) > 15 and "█" in r.stdout


@pytest.fixture
def tls_served(tmp_path: Path) -> object:
    s = TlsServed(tmp_path / "s", supervise=False).start()
    try:
        yield s
    finally:
        s.stop()


def test_tls_serves_https_with_a_certificate_made_once_and_a_secure_cookie(tls_served: TlsServed) -> None:
    s = tls_served
    key = s.home / "control" / "tls" / "key.pem"
    assert s.cert.exists() and key.stat().st_mode & 0o777 == 0o600
    assert (s.home / "control" / "tls").stat().st_mode & 0o777 == 0o700
    assert json.loads((s.home / "control" / "server.json").read_text())["tls"] is True
    with s.https() as c:
        assert c.get("/api/v1/agent/status").status_code == 200
    with pytest.raises(httpx.HTTPError), httpx.Client(timeout=5) as plain:
        plain.get(f"http://127.0.0.1:{s.port}/api/v1/agent/status", headers=s.headers())
    link = s.zen_ok("serve", "--url")
    assert link.startswith(f"https://127.0.0.1:{s.port}/agent?token=")
    with httpx.Client(verify=s.trust(), timeout=10) as browser:
        r = browser.get(link, follow_redirects=False)
    assert r.status_code == 303 and "; Secure" in r.headers["set-cookie"]
    # the certificate is made once: a restart serves the same one
    before = s.cert.read_bytes()
    assert s.server is not None
    s.server.terminate()
    s.server.wait(timeout=15)
    s.start_server()
    assert s.cert.read_bytes() == before
