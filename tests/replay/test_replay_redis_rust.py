"""The Rust crate's Sentinel store follows a failover and shares redemptions with Python's (issue 34).

One test, on the harness's Sentinel deployment (a primary, a replica, three Sentinels, 1.5 s
``down-after-milliseconds``) and one long-lived Rust store with ``WAIT 1`` (``mrtr-state-redeem-lines
--sentinel``): a key redeemed by Python's store is refused as replayed by Rust's and the other way round;
the primary is killed (SIGKILL, never restarted); every key accepted before the kill stays redeemed (WAIT 1
had the replica acknowledge it) and none is accepted again; and the Rust store reaches the primary the
Sentinels promoted within ``BOUND_S`` of the failover, without a restart: its SET lands there (with no
replica left, WAIT 1 cannot be met, so the redemption is refused ``store_unavailable``, fail closed, but
the key is on the new primary). The Rust store's Cluster failover is in the mixed-fleet test
(test_replay_mixed_fleet_failover.py). About 7 to 15 s, most of it the deployment's start and the
failover; the redeemer's build is a no-op after scripts/check-rust.
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.replay.line_redeemer import LineRedeemer
from tests.replay.redis_harness import SERVICE, SentinelDeployment, require_redis_client
from tests.replay.rust_redeemer import rust_redeemer_command

require_redis_client()

import redis  # noqa: E402

from mrtr_state.replay import replay_key  # noqa: E402
from mrtr_state.replay.replay_redis import RedisReplayStore  # noqa: E402

ISSUER = "https://mcp.example.com"
#: The most the Rust store may take, once the Sentinels name the promoted replica, to write there.
BOUND_S = 10.0


def test_the_rust_sentinel_store_shares_redemptions_and_follows_a_failover(
    redis_sentinel: SentinelDeployment, tmp_path: Path
) -> None:
    sentinels = ",".join(f"redis://{host}:{port}" for host, port in redis_sentinel.sentinel_addresses)
    rust = LineRedeemer(
        [*rust_redeemer_command(), "--sentinel", sentinels, "--master", SERVICE,
         "--timeout-ms", "1000", "--wait", "1", "--wait-timeout-ms", "200"],
        tmp_path / "rust.log",
    )  # fmt: skip
    python = RedisReplayStore.from_sentinel(redis_sentinel.sentinel_addresses, SERVICE, timeout=1.0)
    try:
        later = int(time.time()) + 600
        python_first = replay_key(ISSUER, "python-first")
        assert python.redeem(python_first, expires_at=later) is True
        assert rust.redeem(python_first) == {"first": False}
        accepted = [replay_key(ISSUER, f"rust-{i}") for i in range(5)]
        assert [rust.redeem(key) for key in accepted] == [{"first": True}] * 5
        assert [python.redeem(key, expires_at=later) for key in accepted] == [False] * 5

        old = redis_sentinel.primary()
        old.kill()
        new = redis_sentinel.wait_failover(old, timeout=30)
        promoted = time.monotonic()

        # The keys WAIT 1 confirmed are on the promoted replica: none is accepted again.
        again = [rust.redeem(key) for key in accepted]
        assert {"first": True} not in again, again

        # The store reaches the promoted primary: a probe's SET lands there (WAIT 1 then refuses it).
        reached = None
        n = 0
        while reached is None and time.monotonic() - promoted < BOUND_S:
            probe = replay_key(ISSUER, f"probe-{n}")
            n += 1
            answer = rust.redeem(probe)
            assert answer.get("first") is not True, "WAIT 1 with no replica left cannot confirm"
            with redis.Redis(host="127.0.0.1", port=new.port, socket_timeout=1) as admin:
                if admin.exists(python.redis_key(probe)):
                    reached = (time.monotonic() - promoted, answer)
            if reached is None:
                time.sleep(0.1)
        assert reached is not None, f"the Rust store did not write to the promoted primary in {BOUND_S} s"
        assert "did not confirm the redemption on 1 replica" in reached[1].get("error", ""), reached
        print(f"\nthe Rust store wrote to the promoted primary {reached[0]:.1f} s after the failover")
    finally:
        rust.close()
        python.close()
