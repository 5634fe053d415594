package dev.mrtrstate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.mrtrstate.binding.Binding;
import dev.mrtrstate.keys.KeyAlgorithm;
import dev.mrtrstate.token.StrictJson;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Bytes allocated per {@code seal} and per {@code open}, counted by the JVM for this thread
 * ({@code com.sun.management.ThreadMXBean.getThreadAllocatedBytes}) after a warm-up long enough for the JIT,
 * against the committed baseline {@code java/allocation-baseline.json}: unlike a time, the count does not move
 * with the machine's load, so it can fail a check. HS256, EdDSA and A256GCM, each with the argument digest, at
 * the three state sizes of docs/benchmarks.md. A change that makes an operation allocate more updates the
 * baseline in the same commit:
 *
 * <pre>MRTR_UPDATE_ALLOCS=1 mvn -q test -Dtest=AllocationBaselineTest -Dsurefire.failIfNoSpecifiedTests=false</pre>
 */
class AllocationBaselineTest {
    /**
     * How far above its baseline an operation may go: seven runs on the loaded two-core machine spread by 0.6%
     * at most on every row but one, which spread by 4.1% once (the JIT's timing moves what escape analysis
     * removes).
     */
    static final double TOLERANCE = 0.06;
    private static final int WARM_UP = 800;
    private static final int RUNS = 100;
    private static final Path BASELINE = Path.of(System.getProperty("mrtrstate.vectors", "../spec/vectors"))
            .resolve("../../java/allocation-baseline.json").normalize();
    private static final Map<String, Object> ARGUMENTS = Map.of("env", "prod", "branch", "release-1.2");
    private static final Instant NOW = Instant.ofEpochSecond(1_767_225_600L);

    @Test
    void sealAndOpenAllocateNoMoreThanTheBaseline() throws Exception {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        assertTrue(threads.isThreadAllocatedMemorySupported(), "this JVM cannot count a thread's allocations");
        threads.setThreadAllocatedMemoryEnabled(true);
        Map<String, Long> measured = new TreeMap<>();
        for (KeyAlgorithm alg : List.of(KeyAlgorithm.HS256, KeyAlgorithm.EDDSA, KeyAlgorithm.A256GCM)) {
            StateSealer sealer = StateSealer.builder(Keyring.generate(alg), "https://tools.example.com")
                    .clock(Clock.fixed(NOW, ZoneOffset.UTC)).build();
            for (int size : new int[] {200, 2048, 5779}) {
                JsonNode state = makeState(size);
                String token = sealer.seal(state, Binding.tool("alice", "deploy", ARGUMENTS));
                assertEquals(StrictJson.toTree(state), sealer.open(token, Binding.tool("alice", "deploy", ARGUMENTS)));
                String name = alg.jose() + "/" + size;
                measured.put("seal/" + name, perCall(threads, alg == KeyAlgorithm.EDDSA, () -> sealer.seal(state,
                        Binding.tool("alice", "deploy", ARGUMENTS))));
                measured.put("open/" + name, perCall(threads, alg == KeyAlgorithm.EDDSA, () -> sealer.open(token,
                        Binding.tool("alice", "deploy", ARGUMENTS))));
            }
        }
        if ("1".equals(System.getenv("MRTR_UPDATE_ALLOCS"))) {
            ObjectNode out = JsonNodeFactory.instance.objectNode();
            measured.forEach(out::put);
            Files.writeString(BASELINE, out.toPrettyString() + "\n", StandardCharsets.UTF_8);
            System.out.println("wrote " + BASELINE);
            return;
        }
        JsonNode baseline = StrictJson.parseDocument(Files.readString(BASELINE, StandardCharsets.UTF_8));
        List<String> rises = new ArrayList<>();
        StringBuilder table = new StringBuilder("bytes allocated per call (baseline " + BASELINE.getFileName() + "):\n");
        for (Map.Entry<String, Long> entry : measured.entrySet()) {
            JsonNode was = baseline.get(entry.getKey());
            table.append(String.format("  %-16s %8d  (baseline %s)%n", entry.getKey(), entry.getValue(),
                    was == null ? "none" : was.asText()));
            if (was == null) {
                rises.add(entry.getKey() + ": not in the baseline");
            } else if (entry.getValue() > was.asLong() * (1 + TOLERANCE)) {
                rises.add(entry.getKey() + ": " + entry.getValue() + " bytes per call, baseline " + was.asLong());
            }
        }
        System.out.print(table);
        if (!rises.isEmpty()) {
            fail(String.join("; ", rises) + ". A change that allocates more updates " + BASELINE.getFileName()
                    + " in the same commit (MRTR_UPDATE_ALLOCS=1, see this test's comment).");
        }
    }

    /** One operation, which may throw (open). */
    interface Call {
        Object run() throws Exception;
    }

    /** Bytes this thread allocates per call, averaged over RUNS calls after WARM_UP calls (a quarter for EdDSA). */
    private static long perCall(com.sun.management.ThreadMXBean threads, boolean slow, Call call) throws Exception {
        long id = Thread.currentThread().getId();
        Object sink = null;
        int warmUp = slow ? WARM_UP / 4 : WARM_UP;
        for (int i = 0; i < warmUp; i++) {
            sink = call.run();
        }
        long before = threads.getThreadAllocatedBytes(id);
        for (int i = 0; i < RUNS; i++) {
            sink = call.run();
        }
        long after = threads.getThreadAllocatedBytes(id);
        assertTrue(sink != null);
        return Math.round((after - before) / (double) RUNS);
    }

    /** The state of {@code size} bytes that benchmarks/_harness.py's make_state writes. */
    static JsonNode makeState(int size) {
        JsonNodeFactory nodes = JsonNodeFactory.instance;
        ObjectNode state = nodes.objectNode();
        state.put("step", 2);
        ObjectNode plan = state.putObject("plan");
        plan.put("env", "prod").put("branch", "release-1.2").put("replicas", 3).put("dry_run", false);
        state.putArray("asked").add("confirm");
        ArrayNode items = state.putArray("items");
        state.put("note", "");
        while (true) {
            int i = items.size();
            ObjectNode item = nodes.objectNode();
            item.put("id", i).put("path", String.format("/srv/app/releases/file-%04d.tar.gz", i))
                    .put("bytes", 1200 + 37 * i).put("ok", true);
            items.add(item);
            if (StrictJson.writeBytes(state).length > size) {
                items.remove(items.size() - 1);
                break;
            }
        }
        state.put("note", "n".repeat(size - StrictJson.writeBytes(state).length));
        assertEquals(size, StrictJson.writeBytes(state).length);
        return state;
    }
}
