"""A local npm registry on loopback, for the npm install rehearsal: enough of the registry protocol for
``npm publish`` and ``npm install``.

It keeps the packages published to it (``PUT /<name>`` with the document ``npm publish`` sends: the
version's manifest and the tarball as a base64 attachment) and serves them back (``GET /<name>``, the
packument, and ``GET /<name>/-/<file>.tgz``). Any other package is a redirect to the public registry, so
a project installing from here gets its other dependencies as a user would. Publishing needs the bearer
token given at start (a fixed test value, no credential), as a registry would ask for one; a version
cannot be published twice. Why not verdaccio: installing it from the npm registry took 3 min 49 s
and 58 MB (327 packages) on this project's 2 shared cores, for each CI run, against none for this file.
"""

from __future__ import annotations

import base64
import json
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from urllib.parse import unquote

UPSTREAM = "https://registry.npmjs.org"


class LocalNpmRegistry:
    """The registry, serving on ``url`` (127.0.0.1, a free port) from ``start()`` until ``stop()``."""

    def __init__(self, token: str) -> None:
        self._token = token
        self._packuments: dict[str, dict[str, object]] = {}
        self._tarballs: dict[str, bytes] = {}
        self._lock = threading.Lock()
        #: The names asked for and answered from here, not the public registry, in order.
        self.served: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The registry's URL, with the trailing slash npm expects."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/"

    def start(self) -> LocalNpmRegistry:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def __enter__(self) -> LocalNpmRegistry:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    def _publish(self, name: str, document: dict[str, object]) -> HTTPStatus:
        attachments = document.pop("_attachments", {})
        versions = document.get("versions")
        if not isinstance(attachments, dict) or not isinstance(versions, dict) or len(versions) != 1:
            return HTTPStatus.BAD_REQUEST
        with self._lock:
            packument = self._packuments.setdefault(
                name, {"_id": name, "name": name, "dist-tags": {}, "versions": {}}
            )
            known = packument["versions"]
            assert isinstance(known, dict)
            if set(versions) & set(known):
                return HTTPStatus.CONFLICT
            for filename, attachment in attachments.items():
                self._tarballs[f"{name}/-/{filename}"] = base64.b64decode(attachment["data"])
            known.update(versions)
            tags, published = packument["dist-tags"], document.get("dist-tags", {})
            assert isinstance(tags, dict)
            assert isinstance(published, dict)
            tags.update(published)
        return HTTPStatus.CREATED

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                """Quiet: pytest shows a failing command's own output."""

            def _reply(self, status: HTTPStatus, body: bytes, kind: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                path = unquote(self.path.split("?", 1)[0]).lstrip("/")
                with registry._lock:
                    tarball = registry._tarballs.get(path)
                    packument = registry._packuments.get(path)
                    if tarball is not None or packument is not None:
                        registry.served.append(path)
                if tarball is not None:
                    self._reply(HTTPStatus.OK, tarball, "application/octet-stream")
                elif packument is not None:
                    self._reply(HTTPStatus.OK, json.dumps(packument).encode())
                else:
                    self.send_response(HTTPStatus.FOUND)
                    self.send_header("Location", UPSTREAM + self.path)
                    self.send_header("Content-Length", "0")
                    self.end_headers()

            def do_PUT(self) -> None:
                if self.headers.get("Authorization") != f"Bearer {registry._token}":
                    self._reply(HTTPStatus.UNAUTHORIZED, b'{"error":"publishing needs the token"}')
                    return
                name = unquote(self.path.split("?", 1)[0]).lstrip("/")
                document = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                status = registry._publish(name, document)
                self._reply(status, json.dumps({"ok": status == HTTPStatus.CREATED}).encode())

        return Handler
