package dev.mrtrstate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mrtrstate.InvalidRequestStateException.Reason;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The reason codes and sentences against spec/reasons.json, the table every language's tests read: the
 * same codes in the same order, each sentence word for word, and the exception's message is that sentence.
 */
class ReasonsContractTest {
    private static JsonNode contract() throws IOException {
        Path spec = Path.of(System.getProperty("mrtrstate.vectors", "../spec/vectors")).getParent();
        return new ObjectMapper().readTree(spec.resolve("reasons.json").toFile()).get("reasons");
    }

    @Test
    void theEnumIsTheContractCodeForCodeInOrderWordForWord() throws IOException {
        JsonNode reasons = contract();
        Reason[] values = Reason.values();
        assertEquals(reasons.size(), values.length);
        for (int i = 0; i < values.length; i++) {
            JsonNode entry = reasons.get(i);
            assertEquals(entry.get("code").asText(), values[i].code());
            assertEquals(entry.get("sentence").asText(), values[i].sentence(), values[i].code());
            assertEquals(values[i], Reason.fromCode(entry.get("code").asText()));
        }
    }

    @Test
    void aRefusalsMessageIsItsCodesSentence() throws IOException {
        for (JsonNode entry : contract()) {
            InvalidRequestStateException refusal =
                    new InvalidRequestStateException(Reason.fromCode(entry.get("code").asText()), "a rule");
            assertEquals(entry.get("sentence").asText(), refusal.getMessage());
        }
    }
}
