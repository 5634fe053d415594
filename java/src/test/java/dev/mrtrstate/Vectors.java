package dev.mrtrstate;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mrtrstate.binding.Binding;
import dev.mrtrstate.binding.TargetKind;
import dev.mrtrstate.token.StrictJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

/** Reads spec/vectors and turns a token vector into a sealer and a binding. */
final class Vectors {
    private Vectors() {}

    static Path dir() {
        String configured = System.getProperty("mrtrstate.vectors");
        return Path.of(configured != null ? configured : "../spec/vectors");
    }

    static JsonNode read(String name) {
        try {
            JsonNode value = StrictJson.parseExact(Files.readString(dir().resolve(name), StandardCharsets.UTF_8));
            if (value == null) {
                throw new IllegalStateException(name + " is not JSON");
            }
            return value;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static JsonNode setting(JsonNode defaults, JsonNode vector, String name) {
        return vector.has(name) ? vector.get(name) : defaults.get(name);
    }

    static StateSealer sealer(Keyring ring, JsonNode defaults, JsonNode vector) {
        StateSealer.Builder builder = StateSealer.builder(ring, setting(defaults, vector, "issuer").textValue())
                .clock(Clock.fixed(Instant.ofEpochSecond(vector.get("now").longValue()), ZoneOffset.UTC));
        JsonNode value;
        if ((value = setting(defaults, vector, "max_lifetime")) != null) {
            builder.maxLifetime(value.longValue());
        }
        if ((value = setting(defaults, vector, "leeway")) != null) {
            builder.leeway(value.longValue());
        }
        if ((value = setting(defaults, vector, "max_token_bytes")) != null) {
            builder.maxTokenBytes(value.longValue());
        }
        if ((value = setting(defaults, vector, "require_arguments")) != null) {
            builder.requireArguments(value.booleanValue());
        }
        return builder.build();
    }

    static Binding binding(JsonNode vector) {
        String user = vector.get("user").textValue();
        JsonNode arguments = vector.has("arguments") ? vector.get("arguments")
                : com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();
        if (vector.has("tool")) {
            return Binding.of(user, TargetKind.TOOL, vector.get("tool").textValue(), arguments);
        }
        if (vector.has("prompt")) {
            return Binding.of(user, TargetKind.PROMPT, vector.get("prompt").textValue(), arguments);
        }
        return Binding.of(user, TargetKind.RESOURCE, vector.get("resource").textValue(), arguments);
    }
}
