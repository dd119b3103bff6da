"""HTTPS for `zen serve` beyond loopback (issue 35): a phone on the same network logs in over TLS.

A server that answers on an address other than loopback must use TLS: the login link and the
session cookie would otherwise cross the network in clear. `--tls` makes a self-signed
certificate once, under control/tls/ (the key 0600 in a 0700 directory), with `openssl`
(the `cryptography` package is not one of zen's dependencies), and reuses it afterwards;
`--cert FILE --key FILE` brings one's own. The browser asks once to trust the self-signed one.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import socket
import subprocess
from pathlib import Path

from zen.errors import UsageError, ZenError
from zen.store.home import Home

TLS_DIR = "tls"
CERT = "cert.pem"
KEY = "key.pem"
WILDCARDS = ("0.0.0.0", "::", "")
DAYS = 825   # the longest validity browsers accept for a certificate


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False   # a name: it may resolve to anything


def primary_address() -> str | None:
    """The address other machines reach this one at (the route to the outside; nothing is sent)."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))   # TEST-NET-1: connect() on UDP only picks the route
        addr = str(s.getsockname()[0])
        return None if addr.startswith("0.") else addr
    return None


def local_names(host: str) -> set[str]:
    """The names and addresses a browser elsewhere may use for this server bound to `host`."""
    if host not in WILDCARDS:
        return {host}
    names: set[str] = set()
    with contextlib.suppress(OSError):
        hostname = socket.gethostname()
        names.add(hostname)
        for info in socket.getaddrinfo(hostname, None):
            names.add(str(info[4][0]))
    addr = primary_address()
    if addr:
        names.add(addr)
    return {n if ":" not in n else f"[{n}]" for n in names if not n.startswith("127.") and n != "::1"}


def cert_paths(home: Home) -> tuple[Path, Path]:
    d = home.control / TLS_DIR
    return d / CERT, d / KEY


def ensure_cert(home: Home, host: str) -> tuple[Path, Path]:
    """control/tls/cert.pem and key.pem, made once (self-signed) and reused."""
    cert, key = cert_paths(home)
    if cert.exists() and key.exists():
        return cert, key
    openssl = shutil.which("openssl")
    if openssl is None:
        raise ZenError("zen serve --tls makes its certificate with openssl, which is not installed "
                       "(install it, or give your own with --cert FILE --key FILE)")
    cert.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(cert.parent, 0o700)
    alt = ["DNS:localhost", "IP:127.0.0.1"]
    for name in sorted(local_names(host)):
        bare = name.strip("[]")
        try:
            ipaddress.ip_address(bare)
            alt.append(f"IP:{bare}")
        except ValueError:
            alt.append(f"DNS:{bare}")
    tmp_key = key.with_suffix(".tmp")
    argv = [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", str(tmp_key), "-out", str(cert), "-days", str(DAYS), "-subj", "/CN=zen serve",
            "-addext", "subjectAltName=" + ",".join(alt)]
    old = os.umask(0o077)
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    finally:
        os.umask(old)
    if r.returncode != 0 or not tmp_key.exists():
        tmp_key.unlink(missing_ok=True)
        last = (r.stderr.strip().splitlines() or ["no output"])[-1]
        raise ZenError(f"openssl could not make the certificate for zen serve --tls: {last}")
    os.chmod(tmp_key, 0o600)
    os.replace(tmp_key, key)
    return cert, key


def choose(home: Home, host: str, tls: bool, cert: Path | None, key: Path | None) -> tuple[Path, Path] | None:
    """The certificate and key to serve with, or None for plain HTTP on loopback; refuses plain
    HTTP beyond loopback."""
    if (cert is None) != (key is None):
        raise UsageError("give --cert and --key together (the certificate and its private key)")
    if cert is not None and key is not None:
        for what, path in (("certificate", cert), ("key", key)):
            if not path.is_file():
                raise UsageError(f"the {what} {path} does not exist")
        return cert.resolve(), key.resolve()
    if tls:
        return ensure_cert(home, host)
    if not is_loopback(host):
        raise UsageError(f"zen serve --host {host} answers beyond this machine, so it needs --tls (a self-signed "
                         "certificate kept in control/tls/) or --cert and --key: the login link and the session "
                         "cookie must not cross the network in clear")
    return None


__all__ = ["cert_paths", "choose", "ensure_cert", "is_loopback", "local_names", "primary_address"]
