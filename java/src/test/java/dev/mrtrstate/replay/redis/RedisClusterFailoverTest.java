package dev.mrtrstate.replay.redis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mrtrstate.replay.ReplayStoreException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Redis Cluster of three primaries and three replicas on loopback, one primary killed (SIGKILL) under the store:
 * the store serves again once the replica is promoted, without the dead node's return. About 10 s on a quiet
 * machine (start 3 s, failover 2 to 3 s); the whole test is bounded at 120 s.
 */
class RedisClusterFailoverTest {
    private static final Clock NOW = Clock.fixed(Instant.ofEpochSecond(1_767_225_600L), ZoneOffset.UTC);
    private static final long EXP = 1_767_225_600L + 600;
    /** A hash tag: every key of this store is in one slot, so one primary holds them all. */
    private static final String PREFIX = "{failover}mrtr-state:jti:";
    private static final int NODE_TIMEOUT_MS = 1000;
    /**
     * The bound on the outage as this store sees it, from the kill to the first accepted redemption: the cluster's
     * own failover (about twice cluster-node-timeout) plus one refresh of the slot map (at most a second after a
     * failure). Measured 2.5 to 3.5 s in five runs on two shared cores; the bound leaves room for a loaded CI
     * machine.
     */
    private static final Duration RECOVERY_BOUND = Duration.ofSeconds(15);

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aClusterStoreFollowsAFailoverWithoutTheDeadNodesReturnAndRefusesNoFirstRedemptionAsReplayed(
            @TempDir Path dir) throws Exception {
        List<RedisProcess> nodes = new ArrayList<>();
        Records logged = new Records();
        Logger logger = Logger.getLogger("dev.mrtrstate.replay.redis");
        logger.addHandler(logged);
        try {
            for (int i = 0; i < 6; i++) {
                nodes.add(RedisProcess.clusterNode(dir, NODE_TIMEOUT_MS));
            }
            create(nodes);
            waitHealthy(nodes, 3);
            String seed = "redis://127.0.0.1:" + nodes.get(0).port;
            try (RedisReplayStore store = RedisReplayStore.fromCluster(seed, options());
                    RedisReplayStore durable = RedisReplayStore.fromCluster(seed,
                            options().waitReplicas(1, Duration.ofSeconds(2)))) {
                store.connect();
                durable.connect();
                // WAIT on a cluster: each accepted redemption is on the replica before the primary dies.
                List<String> before = new ArrayList<>();
                for (int i = 0; i < 20; i++) {
                    String key = "https://i#before-" + i;
                    assertTrue(durable.redeem(key, EXP), "a first redemption before the failover");
                    before.add(key);
                }
                RedisProcess owner = ownerOf(nodes, store.redisKey(before.get(0)));
                owner.kill();
                long killed = System.nanoTime();

                // Fresh tokens, one after the other, until one is accepted: none may come back "replayed".
                int unavailable = 0;
                java.util.Set<String> reasons = new java.util.TreeSet<>();
                int n = 0;
                long recovered = -1;
                while (System.nanoTime() - killed < TimeUnit.SECONDS.toNanos(60)) {
                    String key = "https://i#during-" + n++;
                    try {
                        assertTrue(store.redeem(key, EXP), "a valid first redemption refused as replayed: " + key);
                        recovered = System.nanoTime();
                        break;
                    } catch (ReplayStoreException outage) {
                        unavailable++;
                        reasons.add(outage.getMessage());
                        Thread.sleep(50);
                    }
                }
                assertNotEquals(-1, recovered, "the store did not serve again within 60 s of the kill: " + reasons
                        + "\n" + nodes.get(owner == nodes.get(0) ? 1 : 0).cli("CLUSTER", "NODES"));
                Duration outage = Duration.ofNanos(recovered - killed);
                System.out.println("cluster failover: the store served again " + outage.toMillis() + " ms after"
                        + " the kill (" + unavailable + " redemptions refused store_unavailable meanwhile: "
                        + reasons + ")");
                assertTrue(outage.compareTo(RECOVERY_BOUND) < 0, "recovered after " + outage.toMillis() + " ms");
                assertFalse(owner.alive(), "the killed primary stays dead");

                // What was redeemed before the kill (with WAIT) survived on the promoted replica.
                for (String key : before) {
                    assertFalse(store.redeem(key, EXP), "a token redeemed before the failover was accepted again");
                }
                for (int i = 0; i < 20; i++) {
                    assertTrue(store.redeem("https://i#after-" + i, EXP));
                }
                // The outage was logged once when it began and once when it ended, with no store key in it.
                long warnings = logged.records.stream().filter(r -> r.getLevel() == Level.WARNING).count();
                assertEquals(1, warnings, "warnings: " + logged.messages());
                assertTrue(logged.messages().contains("answers again"), logged.messages());
                for (String key : before) {
                    assertFalse(logged.messages().contains(store.redisKey(key).substring(PREFIX.length())));
                }
                // The promoted replica has no replica of its own: WAIT 1 fails closed there, never an acceptance
                // (this store learns of the failover from its own first failure), and the write it could not
                // confirm makes the token's next presentation a replay.
                String unconfirmed = null;
                for (int i = 0; unconfirmed == null && i < 100; i++) {
                    String key = "https://i#orphan-" + i;
                    ReplayStoreException refused = assertThrows(ReplayStoreException.class,
                            () -> durable.redeem(key, EXP));
                    if (refused.getMessage().contains("did not confirm")) {
                        unconfirmed = key;
                    } else {
                        Thread.sleep(100);
                    }
                }
                assertNotEquals(null, unconfirmed, "the WAIT store never reached the promoted replica");
                assertFalse(durable.redeem(unconfirmed, EXP));
            }
        } finally {
            logger.removeHandler(logged);
            for (RedisProcess node : nodes) {
                node.close();
            }
        }
    }

    private static RedisReplayStore.Options options() {
        return new RedisReplayStore.Options().clock(NOW).prefix(PREFIX).timeout(Duration.ofMillis(500))
                .connectTimeout(Duration.ofSeconds(5));
    }

    /** {@code redis-cli --cluster create}: three primaries, one replica each. */
    private static void create(List<RedisProcess> nodes) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
        for (RedisProcess node : nodes) {
            command.add("127.0.0.1:" + node.port);
        }
        command.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
        Process cli = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(cli.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(cli.waitFor(60, TimeUnit.SECONDS), "redis-cli --cluster create did not finish");
        assertEquals(0, cli.exitValue(), out);
    }

    /** Until every node says cluster_state:ok and each of the primaries has its replica online. */
    private static void waitHealthy(List<RedisProcess> nodes, int primaries) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            boolean ok = true;
            int synced = 0;
            for (RedisProcess node : nodes) {
                ok &= node.cli("CLUSTER", "INFO").contains("cluster_state:ok");
                String replication = node.cli("INFO", "replication");
                if (replication.contains("role:master") && replication.contains("state=online")) {
                    synced++;
                }
            }
            if (ok && synced == primaries) {
                return;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("the Redis Cluster was not healthy within 30 s");
    }

    /** The node that holds {@code redisKey} now. */
    private static RedisProcess ownerOf(List<RedisProcess> nodes, String redisKey) throws Exception {
        String slot = nodes.get(0).cli("CLUSTER", "KEYSLOT", redisKey).strip();
        for (RedisProcess node : nodes) {
            String count = node.cli("CLUSTER", "COUNTKEYSINSLOT", slot).strip();
            if (node.cli("ROLE").startsWith("master") && !count.equals("0")) {
                return node;
            }
        }
        throw new AssertionError("no primary holds slot " + slot);
    }

    /** The records of the store's logger. */
    private static final class Records extends Handler {
        final List<LogRecord> records = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Override
        public void publish(LogRecord record) {
            records.add(record);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}

        String messages() {
            StringBuilder out = new StringBuilder();
            for (LogRecord record : records) {
                out.append(record.getLevel()).append(": ").append(record.getMessage()).append('\n');
            }
            return out.toString();
        }
    }
}
