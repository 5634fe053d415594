package dev.mrtrstate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mrtrstate.binding.ArgumentDigest;
import dev.mrtrstate.keys.Key;
import dev.mrtrstate.keys.KeyringException;
import dev.mrtrstate.token.StrictJson;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/** Every vector file of spec/vectors, one dynamic test per vector. */
class VectorsTest {
    private static final JsonNode KEYS = Vectors.read("keys.json");

    @TestFactory
    List<DynamicTest> tokens() {
        return tokenTests("tokens.json", Keyring.fromJwks(KEYS.get("verifier_jwks")));
    }

    @TestFactory
    List<DynamicTest> encrypted() {
        return tokenTests("encrypted.json", Keyring.fromJwks(KEYS.get("encrypted_verifier_jwks")));
    }

    private static List<DynamicTest> tokenTests(String file, Keyring ring) {
        JsonNode document = Vectors.read(file);
        JsonNode defaults = document.get("defaults");
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode vector : document.get("vectors")) {
            tests.add(DynamicTest.dynamicTest(file + " " + vector.get("id").textValue(), () -> {
                StateSealer sealer = Vectors.sealer(ring, defaults, vector);
                JsonNode token = vector.get("token");
                JsonNode expected = vector.get("expected");
                try {
                    JsonNode state = sealer.open(token.isTextual() ? token.textValue() : null,
                            Vectors.binding(vector));
                    if (!expected.get("valid").booleanValue()) {
                        fail("accepted; expected " + expected.get("reason").textValue());
                    }
                    assertEquals(ArgumentDigest.canonicalize(expected.get("state")), ArgumentDigest.canonicalize(state));
                } catch (InvalidRequestStateException refusal) {
                    if (expected.get("valid").booleanValue()) {
                        fail("refused " + refusal.reason() + " (" + refusal.detail() + "); expected valid");
                    }
                    assertEquals(expected.get("reason").textValue(), refusal.reason().code(), refusal.detail());
                }
            }));
        }
        return tests;
    }

    @TestFactory
    List<DynamicTest> arguments() {
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode vector : Vectors.read("arguments.json").get("vectors")) {
            tests.add(DynamicTest.dynamicTest("arguments.json " + vector.get("id").textValue(), () -> {
                // A vector with arguments_text is read from its text, as a request is: the last member of a
                // repeated name wins (profile 3.4 and 12.3; issue 32, D2).
                JsonNode arguments = vector.has("arguments_text")
                        ? StrictJson.parseExact(vector.get("arguments_text").textValue()) : vector.get("arguments");
                if (vector.has("arguments_text")) {
                    assertEquals(vector.get("arguments"), arguments);
                }
                if (vector.path("unbindable").asBoolean()) {
                    assertEquals(null, ArgumentDigest.digest(arguments));
                    assertEquals(null, ArgumentDigest.canonicalArguments(arguments));
                } else {
                    assertEquals(vector.get("canonical").textValue(), ArgumentDigest.canonicalArguments(arguments));
                    assertEquals(vector.get("digest").textValue(), ArgumentDigest.digest(arguments));
                }
            }));
        }
        return tests;
    }

    @TestFactory
    List<DynamicTest> invalidKeys() {
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode vector : Vectors.read("invalid-keys.json").get("vectors")) {
            String id = vector.get("id").textValue();
            if (vector.has("jwks")) {
                // A whole ring (D4): each key is valid alone, so the refusal comes from the rule between them.
                tests.add(DynamicTest.dynamicTest("invalid-keys.json " + id, () -> {
                    for (JsonNode member : vector.get("jwks").get("keys")) {
                        Key.fromJwk(member);
                    }
                    KeyringException refused = assertThrows(KeyringException.class,
                            () -> Keyring.fromJwks(vector.get("jwks")));
                    // The empty ring (issue 32, D1) breaks the rule of 7.3; every other ring, one secret one use.
                    String rule = vector.get("jwks").get("keys").isEmpty() ? "at least one key" : "one secret, one use";
                    assertTrue(refused.getMessage().contains(rule), refused.getMessage());
                }));
            } else {
                tests.add(DynamicTest.dynamicTest("invalid-keys.json " + id,
                        () -> assertThrows(KeyringException.class, () -> Key.fromJwk(vector.get("jwk")))));
            }
        }
        return tests;
    }

    /** Every valid key of keys.json loads (the runner sends them to load_key too). */
    @TestFactory
    List<DynamicTest> validKeys() {
        List<DynamicTest> tests = new ArrayList<>();
        KEYS.properties().forEach(entry -> {
            JsonNode value = entry.getValue();
            if (value.isObject() && value.has("kty")) {
                tests.add(DynamicTest.dynamicTest("keys.json " + entry.getKey(), () -> {
                    Key key = Key.fromJwk(value);
                    assertEquals(value.get("kid").textValue(), key.kid());
                    assertEquals(value.get("kid").textValue(), key.thumbprint());
                }));
            } else if (value.isObject() && value.has("keys")) {
                tests.add(DynamicTest.dynamicTest("keys.json " + entry.getKey(),
                        () -> assertTrue(Keyring.fromJwks(value).keys().size() >= 1)));
            }
        });
        return tests;
    }
}
