"""A real HTTP server on loopback that serves a JWKS the test changes as it runs."""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from mrtr_state import Keyring


@dataclass
class Behaviour:
    """What the server answers; the test changes it between requests."""

    body: bytes = b'{"keys": []}'
    content_type: str = "application/jwk-set+json"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    # Wait this long for `release` before answering (a slow server); 0: answer at once.
    stall: float = 0.0
    # Send the body one byte at a time, `trickle` seconds apart (a server that never finishes).
    trickle: float = 0.0
    # Leave out Content-Length (the client must count the bytes itself).
    no_length: bool = False
    # Send the status line and the headers one byte at a time, this many seconds
    # apart (with 400 bytes of padding headers: a minute at 0.15); 0: at once.
    trickle_headers: float = 0.0

    def serve(self, ring: Keyring) -> None:
        self.body = json.dumps(ring.public_jwks()).encode()


class JWKSServer:
    """``ThreadingHTTPServer`` on 127.0.0.1, port 0; ``requests`` counts the GETs."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.behaviour = Behaviour()
        self.scheme = "https" if tls is not None else "http"
        self.requests = 0
        self.release = threading.Event()
        # Set when a client hung up on an answer being trickled.
        self.hung_up = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                b = server.behaviour
                server.requests += 1
                if b.stall:
                    server.release.wait(b.stall)
                if b.trickle_headers:
                    self.trickle_headers(b)
                    return
                self.send_response(b.status)
                self.send_header("Content-Type", b.content_type)
                for name, value in b.headers.items():
                    self.send_header(name, value)
                if not b.no_length:
                    self.send_header("Content-Length", str(len(b.body)))
                self.end_headers()
                if b.trickle:
                    for byte in b.body:
                        if server.release.wait(b.trickle):
                            return
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                else:
                    with contextlib.suppress(OSError):
                        self.wfile.write(b.body)

            def trickle_headers(self, b: Behaviour) -> None:
                head = f"HTTP/1.1 200 OK\r\nContent-Type: {b.content_type}\r\n"
                head += "".join(f"X-Padding-{n}: {'x' * 30}\r\n" for n in range(10))
                head += f"Content-Length: {len(b.body)}\r\n\r\n"
                try:
                    for byte in head.encode() + b.body:
                        if server.release.wait(b.trickle_headers):
                            return
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                except OSError:  # the client hung up
                    server.hung_up.set()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.running = False

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/.well-known/mrtr-state-jwks.json"

    def start(self) -> None:
        self.thread.start()
        self.running = True

    def stop(self) -> None:
        """Stop answering and close the socket: a server that died."""
        self.release.set()
        if self.running:
            self.httpd.shutdown()
            self.running = False
        self.httpd.server_close()


@contextlib.contextmanager
def jwks_server(tls: ssl.SSLContext | None = None) -> Iterator[JWKSServer]:
    server = JWKSServer(tls)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def self_signed(directory: Path, dns_name: str | None = None) -> tuple[ssl.SSLContext, Path]:
    """A TLS server context with a new self-signed certificate, and that certificate's file.

    The certificate names 127.0.0.1 (an IP address entry), or only ``dns_name`` (a DNS name
    entry) when it is given: the client must then check the name it was given, not the address.
    """
    key = ec.generate_private_key(ec.SECP256R1())
    subject = dns_name or "127.0.0.1"
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    alt_name: x509.GeneralName = (
        x509.DNSName(dns_name) if dns_name else x509.IPAddress(ipaddress.ip_address("127.0.0.1"))
    )
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([alt_name]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    cert_file = directory / "cert.pem"
    key_file = directory / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return context, cert_file
