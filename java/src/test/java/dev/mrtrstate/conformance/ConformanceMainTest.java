package dev.mrtrstate.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The adapter answers every line, a line it cannot run with an error, and keeps its request's id. */
class ConformanceMainTest {
    @Test
    void everyLineGetsAnAnswerWithItsId() {
        assertEquals("{\"id\":\"1\",\"digest\":\"RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o\"}",
                ConformanceMain.answer("{\"id\":\"1\",\"op\":\"digest\",\"arguments\":{}}").toString());
        for (String notObject : List.of("[1]", "null", "{\"id\":")) {
            ObjectNode reply = ConformanceMain.answer(notObject);
            assertTrue(reply.has("error") && reply.get("id").isNull(), notObject);
        }
        assertEquals("{\"id\":7,\"unbindable\":true}",
                ConformanceMain.answer("{\"id\":7,\"op\":\"digest\",\"arguments\":[1]}").toString()); // D2
        // D2: absent arguments are {}; present null is not {} but unbindable.
        assertEquals("{\"id\":9,\"digest\":\"RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o\"}",
                ConformanceMain.answer("{\"id\":9,\"op\":\"digest\"}").toString());
        assertEquals("{\"id\":10,\"unbindable\":true}",
                ConformanceMain.answer("{\"id\":10,\"op\":\"digest\",\"arguments\":null}").toString());
        // D1: the rule is on the nearest double, sent as the literal is written.
        assertEquals("{\"id\":11,\"unbindable\":true}", ConformanceMain.answer(
                "{\"id\":11,\"op\":\"digest\",\"arguments\":{\"n\":9007199254740991.5}}").toString());
        assertEquals("{\"id\":8,\"unsupported\":true}", ConformanceMain.answer("{\"id\":8,\"op\":\"sign\"}").toString());
        for (String broken : List.of("{\"id\":2,\"op\":\"verify\",\"keys\":5}",
                "{\"id\":2,\"op\":\"verify\",\"keys\":{\"keys\":[{\"kty\":\"oct\",\"k\":\"x\"}]}}",
                "{\"id\":2,\"op\":\"verify\",\"keys\":{\"keys\":[]},\"issuer\":\"i\",\"user\":\"u\",\"tool\":\"t\",\"now\":\"x\"}",
                "{\"id\":2,\"op\":\"load_key\"}")) {
            ObjectNode reply = ConformanceMain.answer(broken);
            assertEquals(2, reply.get("id").intValue(), broken);
            assertTrue(reply.has("error") || reply.has("loaded"), broken);
        }
    }

    /** Issue 32, D2: a member name repeated in the arguments is read last-wins, as the reference reads it. */
    @Test
    void aRepeatedMemberNameInTheArgumentsGetsTheLastMembersDigest() {
        String last = ConformanceMain.answer("{\"id\":1,\"op\":\"digest\",\"arguments\":{\"env\":\"prod\"}}")
                .get("digest").textValue();
        assertEquals("{\"id\":2,\"digest\":\"" + last + "\"}", ConformanceMain.answer(
                "{\"id\":2,\"op\":\"digest\",\"arguments\":{\"env\":\"staging\",\"env\":\"prod\"}}").toString());
    }

    /** Issue 32, D3 and item 6: arguments nest at most 256 levels, and a deeper line keeps its own id. */
    @Test
    void argumentsNestedDeeperThan256LevelsAreUnbindableAndTheAnswerKeepsItsId() {
        for (int depth : new int[] {256, 257, 999}) {
            // The arguments object is level 1, then depth - 1 arrays.
            String arguments = "{\"n\":" + "[".repeat(depth - 1) + "0" + "]".repeat(depth - 1) + "}";
            ObjectNode reply = ConformanceMain.answer("{\"id\":\"d" + depth + "\",\"op\":\"digest\",\"arguments\":"
                    + arguments + "}");
            assertEquals("d" + depth, reply.get("id").textValue(), reply.toString());
            assertEquals(depth > 256, reply.has("unbindable"), reply.toString());
            assertEquals(depth <= 256, reply.has("digest"), reply.toString());
        }
        ObjectNode tooDeep = ConformanceMain.answer("[".repeat(100_000) + "]".repeat(100_000));
        assertTrue(tooDeep.has("error") && tooDeep.get("id").isNull(), "a line nested 100,000 deep");
    }

    private static final String SECRET = "3sCuzrHwoaTSxAPvhcyyD8R68RIny7TY8zMvFtQ8fx4";
    private static final String OTHER = "xwnWbEArxCWWiyGfYOmXGrBOm_tiL0VhBuvQQgxgCE8";

    private static String ring(String firstSecret, String secondSecret) {
        return "{\"keys\":[{\"kty\":\"oct\",\"alg\":\"A256GCM\",\"kid\":\"enc\",\"k\":\"" + firstSecret
                + "\"},{\"kty\":\"oct\",\"alg\":\"HS256\",\"kid\":\"sig\",\"k\":\"" + secondSecret + "\"}]}";
    }

    /** load_key takes a ring under jwks and applies the rules between its keys (D4), not only each key's. */
    @Test
    void loadKeyTakesARing() {
        assertEquals("{\"id\":1,\"loaded\":true}",
                ConformanceMain.answer("{\"id\":1,\"op\":\"load_key\",\"jwks\":" + ring(SECRET, OTHER) + "}")
                        .toString());
        assertEquals("{\"id\":2,\"loaded\":false}",
                ConformanceMain.answer("{\"id\":2,\"op\":\"load_key\",\"jwks\":" + ring(SECRET, SECRET) + "}")
                        .toString());
        assertEquals("{\"id\":3,\"loaded\":false}", ConformanceMain.answer(
                "{\"id\":3,\"op\":\"load_key\",\"jwk\":{\"kty\":\"oct\",\"kid\":null,\"k\":\"" + OTHER + "\"}}")
                .toString()); // D3: a present kid is checked, null included
        ObjectNode reply = ConformanceMain.answer("{\"id\":4,\"op\":\"verify\",\"keys\":" + ring(SECRET, SECRET)
                + ",\"token\":\"x\",\"issuer\":\"i\",\"user\":\"u\",\"tool\":\"t\",\"now\":0}");
        assertTrue(reply.path("error").asText().startsWith("the verifier's ring does not load: "), reply.toString());
        assertTrue(!reply.toString().contains(SECRET), "no secret in an error");
    }
}
