package dev.mrtrstate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mrtrstate.InvalidRequestStateException.Reason;
import dev.mrtrstate.binding.ArgumentDigest;
import dev.mrtrstate.binding.Binding;
import dev.mrtrstate.keys.Key;
import dev.mrtrstate.keys.KeyAlgorithm;
import dev.mrtrstate.keys.KeyringException;
import dev.mrtrstate.replay.MemoryReplayStore;
import dev.mrtrstate.replay.ReplayStoreException;
import dev.mrtrstate.token.Base64Url;
import dev.mrtrstate.token.StrictJson;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class StateSealerTest {
    private static final String ISSUER = "https://mcp.example.com";
    private static final Clock T0 = Clock.fixed(Instant.ofEpochSecond(1_767_225_600L), ZoneOffset.UTC);

    private static Clock at(long offset) {
        return Clock.offset(T0, java.time.Duration.ofSeconds(offset));
    }

    private static Reason refusal(StateSealer sealer, String token, Binding binding) {
        return assertThrows(InvalidRequestStateException.class, () -> sealer.open(token, binding)).reason();
    }

    @ParameterizedTest
    @EnumSource(KeyAlgorithm.class)
    void sealsAndOpensEachForm(KeyAlgorithm alg) throws Exception {
        StateSealer sealer = StateSealer.builder(Keyring.generate(alg), ISSUER).clock(T0).build();
        Map<String, Object> state = Map.of("step", 2, "branch", "release-1.2", "pi", 3.25);
        Binding binding = Binding.tool("alice", "deploy", Map.of("env", "staging"));
        String token = sealer.seal(state, binding);
        assertEquals(alg == KeyAlgorithm.A256GCM ? 4 : 2, token.chars().filter(c -> c == '.').count());
        JsonNode back = sealer.open(token, binding);
        assertEquals(ArgumentDigest.canonicalize(StrictJson.toTree(state)), ArgumentDigest.canonicalize(back));
        assertEquals(Reason.WRONG_REQUEST, refusal(sealer, token, Binding.tool("alice", "deploy", Map.of("env", "prod"))));
        assertEquals(Reason.WRONG_USER, refusal(sealer, token, Binding.tool("bob", "deploy", Map.of("env", "staging"))));
        assertEquals(Reason.WRONG_TOOL, refusal(sealer, token, Binding.prompt("alice", "deploy", Map.of("env", "staging"))));
    }

    @Test
    void theInjectedClockDecidesExpiry() throws Exception {
        Keyring ring = Keyring.generate(KeyAlgorithm.HS256);
        String token = StateSealer.builder(ring, ISSUER).clock(T0).ttl(60).build()
                .seal("s", Binding.resource("alice", "file:///a"));
        Binding binding = Binding.resource("alice", "file:///a");
        assertEquals("s", StateSealer.builder(ring, ISSUER).clock(at(59)).build().open(token, binding).textValue());
        assertEquals(Reason.EXPIRED, refusal(StateSealer.builder(ring, ISSUER).clock(at(60)).build(), token, binding));
        assertEquals(Reason.ISSUED_IN_FUTURE,
                refusal(StateSealer.builder(ring, ISSUER).clock(at(-1)).build(), token, binding));
        assertEquals("s", StateSealer.builder(ring, ISSUER).clock(at(-1)).leeway(1).build().open(token, binding)
                .textValue());
    }

    @Test
    void rotationKeepsOldTokensOpenUntilTheKeyIsRemoved() throws Exception {
        Keyring old = Keyring.generate(KeyAlgorithm.EDDSA);
        Binding binding = Binding.tool("alice", "deploy", Map.of());
        String before = StateSealer.builder(old, ISSUER).clock(T0).build().seal(1, binding);
        Keyring rotated = old.rotated(Key.generate(KeyAlgorithm.A256GCM));
        StateSealer sealer = StateSealer.builder(rotated, ISSUER).clock(T0).build();
        String after = sealer.seal(2, binding);
        assertEquals(5, after.split("\\.", -1).length); // the new first key is an encryption key
        assertEquals(1, sealer.open(before, binding).intValue());
        assertEquals(2, sealer.open(after, binding).intValue());
        StateSealer removed = StateSealer.builder(rotated.without(old.keys().get(0).kid()), ISSUER).clock(T0).build();
        assertEquals(Reason.UNKNOWN_KEY, refusal(removed, before, binding));
    }

    @Test
    void publicJwksOpensButCannotSeal() throws Exception {
        Keyring ring = Keyring.of(Key.generate(KeyAlgorithm.EDDSA), Key.generate(KeyAlgorithm.HS256));
        String published = ring.publicJwksJson();
        assertFalse(published.contains("\"d\""));
        assertFalse(published.contains("\"k\""));
        Keyring replica = Keyring.fromJwks(published);
        assertEquals(1, replica.keys().size());
        Binding binding = Binding.tool("alice", "deploy", Map.of());
        String token = StateSealer.builder(ring, ISSUER).clock(T0).build().seal("x", binding);
        StateSealer verifier = StateSealer.builder(replica, ISSUER).clock(T0).build();
        assertEquals("x", verifier.open(token, binding).textValue());
        assertThrows(KeyringException.class, () -> verifier.seal("x", binding));
    }

    @Test
    void keysFromTheEnvironmentAndAFile(@TempDir Path dir) throws Exception {
        byte[] secret = new byte[32];
        new java.security.SecureRandom().nextBytes(secret);
        String base64 = java.util.Base64.getEncoder().encodeToString(secret);
        Keyring fromSecret = Keyring.fromEnv("K", Map.of("K", base64));
        assertEquals(KeyAlgorithm.HS256, fromSecret.keys().get(0).algorithm());
        Keyring ring = Keyring.generate(KeyAlgorithm.EDDSA);
        Keyring fromJwks = Keyring.fromEnv("K", Map.of("K", ring.privateJwksJson()));
        assertEquals(ring.keys().get(0).kid(), fromJwks.keys().get(0).kid());
        Path file = dir.resolve("keys.json");
        Files.writeString(file, ring.privateJwksJson());
        assertEquals(ring.keys().get(0).kid(), Keyring.fromFile(file).keys().get(0).kid());
        KeyringException unset = assertThrows(KeyringException.class, () -> Keyring.fromEnv("K", Map.of()));
        assertTrue(unset.getMessage().contains("not set"));
        KeyringException weak = assertThrows(KeyringException.class,
                () -> Keyring.fromEnv("K", Map.of("K", "a".repeat(48))));
        assertFalse(weak.getMessage().contains("aaaa"));
    }

    /** Decision D5: one rule for every oct secret, in every form. */
    @Test
    void weakSecretsAreRefusedInEveryForm() {
        byte[] zeros = new byte[32];
        byte[] pattern = new byte[32];
        for (int i = 0; i < 32; i++) {
            pattern[i] = (byte) (i % 8);
        }
        byte[] nineBytePattern = new byte[36];
        for (int i = 0; i < 36; i++) {
            nineBytePattern[i] = (byte) (i % 9);
        }
        for (byte[] weak : List.of(zeros, pattern)) {
            assertThrows(KeyringException.class, () -> Key.hs256(weak, null));
            assertThrows(KeyringException.class, () -> Key.a256gcm(weak, null));
            String k = Base64Url.encode(weak);
            assertThrows(KeyringException.class, () -> Key.fromJwk("{\"kty\":\"oct\",\"k\":\"" + k + "\"}"));
            assertThrows(KeyringException.class,
                    () -> Key.fromJwk("{\"kty\":\"oct\",\"alg\":\"A256GCM\",\"k\":\"" + k + "\"}"));
            assertThrows(KeyringException.class,
                    () -> Keyring.fromJwks("{\"keys\":[{\"kty\":\"oct\",\"k\":\"" + k + "\"}]}"));
        }
        Key.hs256(nineBytePattern, null); // a period of 9 is not refused by the rule
    }

    /** Decision D3: an explicit kid is 1 to 128 characters of U+0021..U+007E. */
    @Test
    void kidsAreCheckedWhenTheKeyIsLoaded() {
        byte[] secret = Base64Url.decode(Key.generate(KeyAlgorithm.HS256).privateJwk().get("k"));
        for (String bad : List.of("", "a b", "é", "x".repeat(129), "tab\t")) {
            assertThrows(KeyringException.class, () -> Key.hs256(secret, bad), bad);
        }
        assertThrows(KeyringException.class, () -> Key.fromJwk(
                "{\"kty\":\"oct\",\"kid\":7,\"k\":\"" + Base64Url.encode(secret) + "\"}"));
        assertEquals("~".repeat(128), Key.hs256(secret, "~".repeat(128)).kid());
    }

    /** Decision D4: an encryption key never shares its secret with another key, whatever the kids. */
    @Test
    void oneSecretIsNotUsedTwice() {
        byte[] secret = Base64Url.decode(Key.generate(KeyAlgorithm.A256GCM).privateJwk().get("k"));
        assertThrows(KeyringException.class, () -> Keyring.of(Key.a256gcm(secret, "enc"), Key.hs256(secret, "mac")));
        assertThrows(KeyringException.class, () -> Keyring.of(Key.a256gcm(secret, "a"), Key.a256gcm(secret, "b")));
        String k = Base64Url.encode(secret);
        assertThrows(KeyringException.class, () -> Keyring.fromJwks("{\"keys\":[{\"kty\":\"oct\",\"alg\":\"A256GCM\","
                + "\"kid\":\"e\",\"k\":\"" + k + "\"},{\"kty\":\"oct\",\"kid\":\"s\",\"k\":\"" + k + "\"}]}"));
    }

    /** Decision D6: the IV is never the entropy hook's. */
    @Test
    void theIvComesFromTheSystemNotTheHook() {
        StateSealer sealer = StateSealer.builder(Keyring.generate(KeyAlgorithm.A256GCM), ISSUER).clock(T0)
                .entropy(n -> new byte[n]).build();
        Binding binding = Binding.tool("alice", "deploy", Map.of());
        String a = sealer.seal(1, binding);
        String b = sealer.seal(1, binding);
        assertNotEquals(a.split("\\.")[2], b.split("\\.")[2]);
        assertFalse(Arrays.equals(new byte[12], Base64Url.decode(a.split("\\.", -1)[2])));
    }

    /** Decision D2: arguments that are present but not an object are unbindable. */
    @Test
    void argumentsThatAreNotAnObjectAreUnbindable() throws Exception {
        StateSealer sealer = StateSealer.builder(Keyring.generate(KeyAlgorithm.HS256), ISSUER).clock(T0).build();
        for (Object notAnObject : Arrays.asList(List.of(1), "x", 1, true)) {
            assertThrows(IllegalArgumentException.class,
                    () -> sealer.seal(1, Binding.tool("alice", "deploy", notAnObject)));
        }
        String token = sealer.seal(1, Binding.tool("alice", "deploy", Map.of()));
        assertEquals(Reason.WRONG_REQUEST, refusal(sealer, token, Binding.tool("alice", "deploy", List.of())));
        assertEquals(Reason.WRONG_REQUEST, refusal(sealer, token,
                Binding.tool("alice", "deploy", com.fasterxml.jackson.databind.node.NullNode.instance)));
    }

    @Test
    void unbindableArgumentsAreNotSealedAndMatchNoDigest() throws Exception {
        StateSealer sealer = StateSealer.builder(Keyring.generate(KeyAlgorithm.HS256), ISSUER).clock(T0).build();
        IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
                () -> sealer.seal(1, Binding.tool("alice", "deploy", Map.of("id", 9007199254740992L))));
        assertTrue(error.getMessage().contains("strings"));
        JsonNode halfAboveMax = StrictJson.parseExact("{\"id\": 9007199254740991.5}"); // D1: reads as 2^53
        assertThrows(IllegalArgumentException.class, () -> sealer.seal(1, Binding.tool("alice", "deploy", halfAboveMax)));
        sealer.seal(1, Binding.tool("alice", "deploy", Map.of("id", 9007199254740991L)));
    }

    @Test
    void requireArguments() throws Exception {
        Keyring ring = Keyring.generate(KeyAlgorithm.HS256);
        String unbound = StateSealer.builder(ring, ISSUER).clock(T0).build().seal(1, Binding.tool("alice", "t", null));
        StateSealer strict = StateSealer.builder(ring, ISSUER).clock(T0).requireArguments(true).build();
        assertEquals(Reason.WRONG_REQUEST, refusal(strict, unbound, Binding.tool("alice", "t", Map.of())));
        assertEquals(1, strict.open(unbound, Binding.tool("alice", "t", Map.of()), false, false).intValue());
        assertThrows(IllegalArgumentException.class, () -> strict.seal(1, Binding.tool("alice", "t", null)));
        String resource = strict.seal(1, Binding.resource("alice", "file:///r"));
        assertEquals(1, strict.open(resource, Binding.resource("alice", "file:///r")).intValue());
    }

    @Test
    void theStateMustBeIJsonWithinDepthAndSize() {
        StateSealer sealer = StateSealer.builder(Keyring.generate(KeyAlgorithm.HS256), ISSUER).clock(T0).build();
        Binding binding = Binding.tool("alice", "t", Map.of());
        assertThrows(IllegalArgumentException.class, () -> sealer.seal(Map.of("n", 1L << 60), binding));
        assertThrows(IllegalArgumentException.class, () -> sealer.seal(Double.NaN, binding));
        assertThrows(IllegalArgumentException.class, () -> sealer.seal("\ud800", binding));
        Object deep = 0;
        for (int i = 0; i < 32; i++) {
            deep = List.of(deep);
        }
        sealer.seal(deep, binding);
        Object deeper = List.of(deep);
        assertThrows(IllegalArgumentException.class, () -> sealer.seal(deeper, binding));
        assertThrows(IllegalArgumentException.class, () -> sealer.seal("x".repeat(9000), binding));
    }

    @Test
    void singleUseWithTheMemoryStore() throws Exception {
        MemoryReplayStore store = new MemoryReplayStore(2, T0);
        StateSealer sealer = StateSealer.builder(Keyring.generate(KeyAlgorithm.HS256), ISSUER).clock(T0)
                .replayStore(store).build();
        Binding binding = Binding.tool("alice", "t", Map.of());
        String token = sealer.seal(1, binding);
        assertEquals(1, sealer.open(token, binding, true, null).intValue());
        assertEquals(Reason.REPLAYED, assertThrows(InvalidRequestStateException.class,
                () -> sealer.open(token, binding, true, null)).reason());
        assertEquals(1, sealer.open(token, binding).intValue()); // not consuming: no store involved
        // A refused token never costs a store write.
        assertEquals(Reason.WRONG_USER, assertThrows(InvalidRequestStateException.class,
                () -> sealer.open(sealer.seal(1, binding), Binding.tool("bob", "t", Map.of()), true, null)).reason());
        assertEquals(1, store.size());
        sealer.open(sealer.seal(1, binding), binding, true, null);
        assertEquals(Reason.STORE_UNAVAILABLE, assertThrows(InvalidRequestStateException.class,
                () -> sealer.open(sealer.seal(1, binding), binding, true, null)).reason()); // full
        StateSealer failing = StateSealer.builder(sealer.ring(), ISSUER).clock(T0).replayStore((key, exp) -> {
            throw new ReplayStoreException("unreachable");
        }).build();
        assertEquals(Reason.STORE_UNAVAILABLE, assertThrows(InvalidRequestStateException.class,
                () -> failing.open(failing.seal(1, binding), binding, true, null)).reason());
        assertThrows(IllegalStateException.class, () -> StateSealer.builder(sealer.ring(), ISSUER).build()
                .open("x", binding, true, null));
    }

    @Test
    void noSecretInAnyToStringOrMessage() throws Exception {
        for (KeyAlgorithm alg : KeyAlgorithm.values()) {
            Keyring ring = Keyring.generate(alg);
            Key key = ring.keys().get(0);
            String secret = key.privateJwk().getOrDefault("k", key.privateJwk().get("d"));
            StateSealer sealer = StateSealer.builder(ring, ISSUER).clock(T0).build();
            Binding binding = Binding.tool("alice", "t", Map.of("password", "hunter2"));
            String token = sealer.seal(Map.of("secret-state", "s3cr3t"), binding);
            InvalidRequestStateException refusal = assertThrows(InvalidRequestStateException.class,
                    () -> sealer.open(token, Binding.tool("bob", "t", Map.of())));
            for (String text : List.of(key.toString(), ring.toString(), sealer.toString(), binding.toString(),
                    refusal.toString(), refusal.getMessage(), refusal.detail())) {
                assertFalse(text.contains(secret), text);
                assertFalse(text.contains(token), text);
                assertFalse(text.contains("s3cr3t") || text.contains("hunter2") || text.contains("alice"), text);
            }
        }
    }

    @Test
    void badInputIsRefusedNeverThrownOtherwise() {
        StateSealer sealer = StateSealer.builder(Keyring.generate(KeyAlgorithm.EDDSA), ISSUER).clock(T0).build();
        Binding binding = Binding.tool("alice", "t", Map.of());
        for (String junk : List.of("", ".", "..", "....", "a.b.c", "a..b.c.d", "\ud800", "é.é.é", "x".repeat(9000))) {
            assertThrows(InvalidRequestStateException.class, () -> sealer.open(junk, binding), junk);
        }
        assertEquals(Reason.MALFORMED, refusal(sealer, null, binding));
        byte[] header = "{\"alg\":\"EdDSA\",\"typ\":\"mrtr-state+jwt\",\"kid\":\"nope\"}".getBytes(StandardCharsets.UTF_8);
        assertEquals(Reason.UNKNOWN_KEY, refusal(sealer, Base64Url.encode(header) + ".e30.AA", binding));
    }
}
