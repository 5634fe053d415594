package dev.mrtrstate.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.mrtrstate.InvalidRequestStateException;
import dev.mrtrstate.Keyring;
import dev.mrtrstate.StateSealer;
import dev.mrtrstate.binding.Binding;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A verify-only replica reading the published JWKS from an HTTP server on loopback that the test runs. */
class RemoteJwksTest {
    private static final String ISSUER = "https://tools.example.com";
    private static final Clock T0 = Clock.fixed(Instant.ofEpochSecond(1_767_225_600L), ZoneOffset.UTC);

    private HttpServer server;
    private final AtomicReference<String> body = new AtomicReference<>();
    private final AtomicInteger fetches = new AtomicInteger();

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/jwks.json", exchange -> {
            fetches.incrementAndGet();
            byte[] bytes = body.get().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private String url() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/jwks.json";
    }

    private RemoteJwks.Options options(Clock clock) {
        return new RemoteJwks.Options().refreshInterval(Duration.ZERO).clock(clock).timeout(Duration.ofSeconds(2));
    }

    @Test
    void followsARotationAndOpensTheNewKeysTokens() throws Exception {
        Keyring minter = Keyring.generate(KeyAlgorithm.EDDSA);
        body.set(minter.publicJwksJson());
        AtomicReference<Instant> now = new AtomicReference<>(T0.instant());
        Clock clock = new Clock() {
            @Override
            public java.time.ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return now.get();
            }
        };
        try (RemoteJwks remote = RemoteJwks.load(url(), options(clock).cooldown(Duration.ofSeconds(30)))) {
            StateSealer replica = StateSealer.builder(remote, ISSUER).clock(T0).build();
            Binding binding = Binding.tool("alice", "deploy", Map.of());
            String before = StateSealer.builder(minter, ISSUER).clock(T0).build().seal(1, binding);
            assertEquals(1, replica.open(before, binding).intValue());
            assertThrows(KeyringException.class, () -> replica.seal(1, binding)); // verify-only

            Keyring rotated = minter.rotated(Key.generate(KeyAlgorithm.EDDSA));
            body.set(rotated.publicJwksJson());
            String after = StateSealer.builder(rotated, ISSUER).clock(T0).build().seal(2, binding);
            assertEquals(2, replica.open(after, binding).intValue()); // fetched for the unknown kid
            assertEquals(2, fetches.get());

            // A random kid makes it fetch at most once per cooldown.
            String forged = "eyJhbGciOiJFZERTQSIsInR5cCI6Im1ydHItc3RhdGUrand0Iiwia2lkIjoibm9wZSJ9.e30.AA";
            assertEquals(InvalidRequestStateException.Reason.UNKNOWN_KEY,
                    assertThrows(InvalidRequestStateException.class, () -> replica.open(forged, binding)).reason());
            assertThrows(InvalidRequestStateException.class, () -> replica.open(forged, binding));
            assertEquals(2, fetches.get());
            now.set(T0.instant().plusSeconds(31));
            assertThrows(InvalidRequestStateException.class, () -> replica.open(forged, binding));
            assertEquals(3, fetches.get());
        }
    }

    @Test
    void aFailedFetchKeepsTheLastGoodKeys() {
        Keyring minter = Keyring.generate(KeyAlgorithm.EDDSA);
        body.set(minter.publicJwksJson());
        try (RemoteJwks remote = RemoteJwks.load(url(), options(T0))) {
            body.set("{\"keys\": [");
            assertFalse(remote.refresh());
            assertNotNull(remote.lastError());
            assertNotNull(remote.get(minter.keys().get(0).kid()));
            body.set(minter.publicJwksJson());
            assertTrue(remote.refresh());
            assertNull(remote.lastError());
        }
    }

    @Test
    void onlyPublicEd25519KeysWithinTheSizeCap() {
        Keyring minter = Keyring.generate(KeyAlgorithm.EDDSA);
        body.set(minter.privateJwksJson());
        KeyringException privateKey = assertThrows(KeyringException.class, () -> RemoteJwks.load(url(), options(T0)));
        assertFalse(privateKey.getMessage().contains(minter.keys().get(0).privateJwk().get("d")));
        body.set(Keyring.generate(KeyAlgorithm.HS256).privateJwksJson());
        assertThrows(KeyringException.class, () -> RemoteJwks.load(url(), options(T0)));
        body.set(minter.publicJwksJson());
        assertThrows(KeyringException.class, () -> RemoteJwks.load(url(), options(T0).maxBytes(10)));
    }

    @Test
    void onlyHttpsOrLoopbackWithoutCredentials() {
        assertThrows(KeyringException.class, () -> RemoteJwks.checkUrl("http://example.com/jwks.json"));
        assertThrows(KeyringException.class, () -> RemoteJwks.checkUrl("http://localhost/jwks.json"));
        assertThrows(KeyringException.class, () -> RemoteJwks.checkUrl("https://user:pw@example.com/jwks.json"));
        assertThrows(KeyringException.class, () -> RemoteJwks.checkUrl("ftp://example.com/jwks.json"));
        RemoteJwks.checkUrl("https://example.com/jwks.json");
        RemoteJwks.checkUrl("http://[::1]:8080/jwks.json");
    }
}
