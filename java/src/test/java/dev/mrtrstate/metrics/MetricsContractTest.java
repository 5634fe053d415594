package dev.mrtrstate.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.mrtrstate.InvalidRequestStateException;
import dev.mrtrstate.InvalidRequestStateException.Reason;
import dev.mrtrstate.Keyring;
import dev.mrtrstate.StateSealer;
import dev.mrtrstate.binding.Binding;
import dev.mrtrstate.keys.KeyAlgorithm;
import dev.mrtrstate.keys.KeyringException;
import dev.mrtrstate.keys.RemoteJwks;
import dev.mrtrstate.replay.MemoryReplayStore;
import dev.mrtrstate.replay.ReplayStoreException;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.data.LongPointData;
import io.opentelemetry.sdk.metrics.data.MetricData;
import io.opentelemetry.sdk.testing.exporter.InMemoryMetricReader;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The counters against spec/metrics.json, the one contract every language checks: names, units, descriptions,
 * attributes and their allowed values, read back with OpenTelemetry's InMemoryMetricReader. No network but one
 * loopback HTTP server; 6 s measured here, most of it loading the SDK.
 */
class MetricsContractTest {
    private static final Clock NOW = Clock.fixed(Instant.ofEpochSecond(1_767_225_600L), ZoneOffset.UTC);
    private static final String ISSUER = "https://tools.example.com";
    private static final String USER = "alice-secret-user";
    private static final String TOOL = "deploy-secret-tool";

    private static JsonNode contract() throws IOException {
        Path spec = Path.of(System.getProperty("mrtrstate.vectors", "../spec/vectors")).getParent();
        return new ObjectMapper().readTree(spec.resolve("metrics.json").toFile());
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(item -> out.add(item.asText()));
        return out;
    }

    @Test
    void theInstrumentTableIsTheContractsEventForEvent() throws IOException {
        JsonNode contract = contract();
        assertEquals(contract.get("scope").asText(), OpenTelemetryMetrics.SCOPE);
        JsonNode events = contract.get("events");
        List<String> names = new ArrayList<>();
        events.fieldNames().forEachRemaining(names::add);
        assertEquals(names, new ArrayList<>(StateMetrics.INSTRUMENTS.keySet()));
        for (String event : names) {
            JsonNode spec = events.get(event);
            StateMetrics.Instrument instrument = StateMetrics.INSTRUMENTS.get(event);
            assertEquals(spec.get("instrument").asText(), instrument.name(), event);
            assertEquals(spec.get("unit").asText(), instrument.unit(), event);
            assertEquals(spec.get("description").asText(), instrument.description(), event);
            List<String> attributes = new ArrayList<>();
            spec.get("attributes").fieldNames().forEachRemaining(attributes::add);
            assertEquals(attributes, instrument.attributes(), event);
        }
    }

    /** Every event a sealer and a remote JWKS report, read back from the SDK and checked against the contract. */
    @Test
    void theCountsReadBackFromOpenTelemetryMatchTheContractAndHoldNoValueFromATokenOrRequest() throws Exception {
        InMemoryMetricReader reader = InMemoryMetricReader.create();
        SdkMeterProvider provider = SdkMeterProvider.builder().registerMetricReader(reader).build();
        OpenTelemetryMetrics metrics = new OpenTelemetryMetrics(
                OpenTelemetrySdk.builder().setMeterProvider(provider).build());
        Keyring ring = Keyring.generate(KeyAlgorithm.EDDSA);
        StateSealer sealer = StateSealer.builder(ring, ISSUER).clock(NOW).metrics(metrics)
                .replayStore(new MemoryReplayStore(100, NOW)).build();
        StateSealer outage = StateSealer.builder(ring, ISSUER).clock(NOW).metrics(metrics)
                .replayStore((key, expiresAt) -> {
                    throw new ReplayStoreException("down");
                }).build();
        Binding tool = Binding.tool(USER, TOOL, Map.of("n", 1));
        Binding prompt = Binding.prompt(USER, "p", Map.of());
        Binding resource = Binding.resource(USER, "file:///x");

        String once = sealer.seal(1, tool);
        sealer.open(once, tool, true, null);
        assertEquals(Reason.REPLAYED, refused(() -> sealer.open(once, tool, true, null)));
        assertEquals(Reason.WRONG_USER, refused(() -> sealer.open(once, Binding.tool("bob", TOOL, Map.of("n", 1)))));
        assertEquals(Reason.MALFORMED, refused(() -> sealer.open("not.a.token!", tool)));
        assertEquals(Reason.STORE_UNAVAILABLE, refused(() -> outage.open(sealer.seal(2, tool), tool, true, null)));
        sealer.open(sealer.seal(3, prompt), prompt);
        sealer.open(sealer.seal(4, resource), resource);

        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        AtomicReference<String> body = new AtomicReference<>(ring.publicJwksJson());
        server.createContext("/jwks.json", exchange -> {
            byte[] bytes = body.get().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
        try (RemoteJwks jwks = RemoteJwks.load("http://127.0.0.1:" + server.getAddress().getPort() + "/jwks.json",
                new RemoteJwks.Options().refreshInterval(Duration.ZERO).metrics(metrics))) {
            assertTrue(jwks.refresh()); // unchanged
            body.set("<html>");
            assertFalse(jwks.refresh()); // failed, the last good keys kept
        } finally {
            server.stop(0);
        }

        Collection<MetricData> collected = reader.collectAllMetrics();
        JsonNode contract = contract();
        Map<String, Map<Map<String, String>, Long>> counts = new HashMap<>();
        for (MetricData data : collected) {
            String event = eventOf(contract, data.getName());
            JsonNode spec = contract.get("events").get(event);
            assertEquals(spec.get("unit").asText(), data.getUnit(), data.getName());
            assertEquals(spec.get("description").asText(), data.getDescription(), data.getName());
            assertEquals(OpenTelemetryMetrics.SCOPE, data.getInstrumentationScopeInfo().getName());
            for (LongPointData point : data.getLongSumData().getPoints()) {
                Map<String, String> attributes = new HashMap<>();
                point.getAttributes().forEach((key, value) -> attributes.put(key.getKey(), String.valueOf(value)));
                Set<String> expected = new HashSet<>();
                spec.get("attributes").fieldNames().forEachRemaining(expected::add);
                assertEquals(expected, attributes.keySet(), data.getName());
                for (Map.Entry<String, JsonNode> attribute : spec.get("attributes").properties()) {
                    List<String> allowed = strings(contract.get("attributes").get(attribute.getValue().asText()));
                    String value = attributes.get(attribute.getKey());
                    assertTrue(allowed.contains(value), data.getName() + " " + attribute.getKey() + "=" + value);
                }
                assertFalse(attributes.containsValue(USER) || attributes.containsValue(TOOL)
                        || attributes.containsValue(ring.keys().get(0).kid()));
                counts.computeIfAbsent(event, e -> new HashMap<>()).put(attributes, point.getValue());
            }
        }
        assertEquals(Map.of(Map.of("method", "tools/call"), 2L, Map.of("method", "prompts/get"), 1L,
                Map.of("method", "resources/read"), 1L), counts.get("seal"));
        assertEquals(Map.of(Map.of("method", "tools/call", "outcome", "accepted"), 1L,
                Map.of("method", "tools/call", "outcome", "refused"), 4L,
                Map.of("method", "prompts/get", "outcome", "accepted"), 1L,
                Map.of("method", "resources/read", "outcome", "accepted"), 1L), counts.get("open"));
        assertEquals(Map.of(Map.of("method", "tools/call", "reason", "replayed"), 1L,
                Map.of("method", "tools/call", "reason", "wrong_user"), 1L,
                Map.of("method", "tools/call", "reason", "malformed"), 1L,
                Map.of("method", "tools/call", "reason", "store_unavailable"), 1L), counts.get("refusal"));
        assertEquals(Map.of(Map.of("method", "tools/call"), 1L), counts.get("redemption"));
        assertEquals(Map.of(Map.of("method", "tools/call"), 1L), counts.get("store_outage"));
        assertEquals(Map.of(Map.of("source", "remote_jwks", "outcome", "updated"), 1L,
                Map.of("source", "remote_jwks", "outcome", "unchanged"), 1L,
                Map.of("source", "remote_jwks", "outcome", "failed"), 1L), counts.get("key_refresh"));
        assertEquals(6, counts.size());
    }

    private static String eventOf(JsonNode contract, String instrument) {
        for (Map.Entry<String, JsonNode> event : contract.get("events").properties()) {
            if (event.getValue().get("instrument").asText().equals(instrument)) {
                return event.getKey();
            }
        }
        throw new AssertionError("an instrument spec/metrics.json does not list: " + instrument);
    }

    private interface Call {
        void run() throws InvalidRequestStateException;
    }

    private static Reason refused(Call call) {
        return assertThrows(InvalidRequestStateException.class, call::run).reason();
    }

    /** The plain callback gets the same events, with attribute names from the contract only. */
    @Test
    void aPlainCallbackReceivesEachEventWithItsAttributes() throws Exception {
        List<String> seen = new ArrayList<>();
        StateSealer sealer = StateSealer.builder(Keyring.generate(KeyAlgorithm.HS256), ISSUER).clock(NOW)
                .metrics((event, attributes) -> seen.add(event + " " + new java.util.TreeMap<>(attributes)))
                .build();
        Binding tool = Binding.tool(USER, TOOL, Map.of());
        sealer.open(sealer.seal(1, tool), tool);
        refused(() -> sealer.open("x", tool));
        assertEquals(List.of("seal {method=tools/call}", "open {method=tools/call, outcome=accepted}",
                "open {method=tools/call, outcome=refused}", "refusal {method=tools/call, reason=malformed}"), seen);
    }

    /** A callback that throws loses its counts and never breaks a seal or an open, nor turns a refusal into another. */
    @Test
    void aThrowingCallbackNeverBreaksASealOrAnOpen() throws Exception {
        StateSealer sealer = StateSealer.builder(Keyring.generate(KeyAlgorithm.HS256), ISSUER).clock(NOW)
                .metrics((event, attributes) -> {
                    throw new IllegalStateException("exporter down");
                }).build();
        Binding tool = Binding.tool(USER, TOOL, Map.of());
        assertEquals(7, sealer.open(sealer.seal(7, tool), tool).intValue());
        assertEquals(Reason.MALFORMED, refused(() -> sealer.open("x", tool)));
    }

    /** Without an SDK, OpenTelemetry's global meter is a no-op: counting costs nothing and fails nothing. */
    @Test
    void theGlobalMetricsWithoutAnSdkAreANoOp() throws Exception {
        OpenTelemetryMetrics metrics = OpenTelemetryMetrics.global();
        StateSealer sealer = StateSealer.builder(Keyring.generate(KeyAlgorithm.HS256), ISSUER).clock(NOW)
                .metrics(metrics).build();
        Binding tool = Binding.tool(USER, TOOL, Map.of());
        assertEquals(1, sealer.open(sealer.seal(1, tool), tool).intValue());
        assertThrows(IllegalArgumentException.class, () -> metrics.record("not_an_event", Map.of()));
        assertEquals("OpenTelemetryMetrics()", metrics.toString());
        assertThrows(KeyringException.class, () -> RemoteJwks.load("http://127.0.0.1:1/jwks.json",
                new RemoteJwks.Options().refreshInterval(Duration.ZERO).timeout(Duration.ofSeconds(1))
                        .metrics(metrics)));
    }
}
