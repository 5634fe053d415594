"""A verify-only replica follows the minting server's key rotation over loopback HTTP, without a restart.

Two example server processes: the minting one reads its keys from a file it rereads
(``MRTR_STATE_KEYS_FILE``) and publishes its public JWKS; the replica is started with
``--jwks-url`` and only opens states. The key file is rotated with the command line
while both run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import anyio
from server.jwks import JWKS_PATH
from test_mcp_http import answer, ask, branch

from conftest import EXAMPLES, YES, example_server
from mrtr_state import Keyring, decode_unverified


def keygen(*args: str) -> None:
    subprocess.run(
        [sys.executable, "-m", "mrtr_state", "keygen", "--alg", "EdDSA", *args],
        check=True,
        capture_output=True,
        timeout=60,
    )


def get_jwks(url: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310  (loopback)
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


def first_kid(path: Path) -> str:
    return str(json.loads(path.read_text())["keys"][0]["kid"])


def wait_until(condition: Any, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def deleted(url: str, name: str, state: str) -> str:
    async def scenario() -> Any:
        return await answer(url, "alice", "delete_branch", branch(name), state, YES)

    result = anyio.run(scenario)
    assert not getattr(result, "is_error", True), result
    return str(result.content[0].text)


def asked(url: str, name: str) -> str:
    async def scenario() -> Any:
        return await ask(url, "alice", "delete_branch", branch(name))

    return str(anyio.run(scenario).request_state)


def test_a_verify_only_replica_follows_a_rotation_on_the_minting_server_without_a_restart(
    tmp_path: Path,
) -> None:
    ring_file = tmp_path / "ring.json"
    keygen("-o", str(ring_file))
    old_kid = first_kid(ring_file)
    env = {"MRTR_STATE_KEYS_FILE": str(ring_file), "MRTR_STATE_KEYS": ""}
    with example_server(env=env) as minting:
        jwks_url = minting.url.removesuffix("/mcp") + JWKS_PATH
        status, published = get_jwks(jwks_url)
        assert status == 200
        assert [key["kid"] for key in published["keys"]] == [old_kid]
        assert all("d" not in key for key in published["keys"])
        with example_server("--jwks-url", jwks_url, "--jwks-refresh", "1") as replica:
            # Before the rotation: minted on one replica, completed on the other.
            state = asked(minting.url, "old-feature")
            assert deleted(replica.url, "old-feature", state).startswith("Deleted branch 'old-feature'")
            older = asked(minting.url, "spike/cache")  # signed by the old key, completed later

            # Rotate while both run: the new key signs at once (keygen --add), the old one still verifies.
            keygen("--add", str(ring_file), "--force")
            new_kid = first_kid(ring_file)
            wait_until(
                lambda: get_jwks(jwks_url)[1]["keys"][0]["kid"] == new_kid, "the minting server's reload"
            )
            assert [key["kid"] for key in get_jwks(jwks_url)[1]["keys"]] == [new_kid, old_kid]
            time.sleep(1.1)  # the replica's cooldown (min(30, --jwks-refresh 1) s) since its last fetch

            state = asked(minting.url, "release-1.0")
            assert decode_unverified(state)[0]["kid"] == new_kid
            assert deleted(replica.url, "release-1.0", state).startswith("Deleted branch 'release-1.0'")
            assert deleted(replica.url, "spike/cache", older).startswith("Deleted branch 'spike/cache'")
            assert replica.process.poll() is None  # the same process throughout
            assert "could not fetch" not in replica.log()
        secrets = [key["d"] for key in json.loads(ring_file.read_text())["keys"]]
        for secret in secrets:
            assert secret not in minting.log()


def test_a_server_with_hs256_secrets_publishes_no_jwks() -> None:
    ring = Keyring.generate("HS256")
    with example_server(env={"MRTR_STATE_KEYS": json.dumps(ring.private_jwks())}) as running:
        status, body = get_jwks(running.url.removesuffix("/mcp") + JWKS_PATH)
    assert status == 404
    assert "never published" in body["error"]
    assert ring.private_jwks()["keys"][0]["k"] not in json.dumps(body)


def test_a_replica_whose_jwks_url_answers_nothing_does_not_start() -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "server"), "--jwks-url", "http://127.0.0.1:9/.well-known/jwks.json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2
    assert "could not fetch the JWKS from http://127.0.0.1:9/" in result.stderr
    assert "listening" not in result.stdout
