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
        for (String notObject : List.of("[1]", "null", "{\"id\":", "{\"a\":1,\"a\":2}")) {
            ObjectNode reply = ConformanceMain.answer(notObject);
            assertTrue(reply.has("error") && reply.get("id").isNull(), notObject);
        }
        assertEquals("{\"id\":7,\"unbindable\":true}",
                ConformanceMain.answer("{\"id\":7,\"op\":\"digest\",\"arguments\":[1]}").toString()); // D2
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
}
