package dev.mrtrstate.binding;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mrtrstate.token.StrictJson;
import java.util.Objects;

/**
 * One request a {@code requestState} is sealed for or opened on: the user ({@code sub}), the target
 * ({@code aud}, profile section 3.5) and, for a request whose arguments are bound, the arguments
 * ({@code args_sha256}, section 3.4).
 *
 * <p>The argument digest is computed once, when first needed, and kept. Instances are immutable and thread-safe.
 */
public final class Binding {
    private final String user;
    private final TargetKind kind;
    private final String name;
    private final JsonNode arguments;
    private final String aud;
    private volatile String digest;
    private volatile boolean digested;

    private Binding(String user, TargetKind kind, String name, JsonNode arguments) {
        this.user = requireNonEmpty(user, "user");
        this.kind = Objects.requireNonNull(kind, "kind");
        this.name = requireNonEmpty(name, kind.name().toLowerCase(java.util.Locale.ROOT));
        this.arguments = arguments;
        this.aud = kind.method() + ":" + name;
    }

    private static String requireNonEmpty(String value, String what) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException(what + " must be a non-empty string");
        }
        return value;
    }

    /**
     * A binding.
     *
     * @param user the authenticated user
     * @param kind the target's kind
     * @param name the tool or prompt name, or the resource URI
     * @param arguments the request's arguments (a JsonNode, a Map, or null for none)
     * @return the binding
     * @throws IllegalArgumentException for an empty user or name, or arguments that are not JSON
     */
    public static Binding of(String user, TargetKind kind, String name, Object arguments) {
        return new Binding(user, kind, name, arguments == null ? null : StrictJson.toTree(arguments));
    }

    /**
     * A tool call.
     *
     * @param user the authenticated user
     * @param tool the tool name
     * @param arguments the call's arguments (a JsonNode, a Map, or null for none)
     * @return the binding
     */
    public static Binding tool(String user, String tool, Object arguments) {
        return of(user, TargetKind.TOOL, tool, arguments);
    }

    /**
     * A prompt get.
     *
     * @param user the authenticated user
     * @param prompt the prompt name
     * @param arguments the request's arguments (a JsonNode, a Map, or null for none)
     * @return the binding
     */
    public static Binding prompt(String user, String prompt, Object arguments) {
        return of(user, TargetKind.PROMPT, prompt, arguments);
    }

    /**
     * A resource read (no arguments).
     *
     * @param user the authenticated user
     * @param uri the resource URI, as the request carries it
     * @return the binding
     */
    public static Binding resource(String user, String uri) {
        return of(user, TargetKind.RESOURCE, uri, null);
    }

    /** {@return the user, the token's {@code sub}} */
    public String user() {
        return user;
    }

    /** {@return the target's kind} */
    public TargetKind kind() {
        return kind;
    }

    /** {@return the tool or prompt name or the resource URI} */
    public String name() {
        return name;
    }

    /** {@return the arguments, or null when the request has none bound} */
    public JsonNode arguments() {
        return arguments;
    }

    /** {@return the target as the token's {@code aud}: {@code <method>:<name>}} */
    public String aud() {
        return aud;
    }

    /**
     * The argument digest, computed once.
     *
     * @return the digest; null when the binding has no arguments or they are unbindable (see {@link #bindable()})
     */
    public String digest() {
        if (!digested) {
            digest = arguments == null ? null : ArgumentDigest.digest(arguments);
            digested = true;
        }
        return digest;
    }

    /** {@return whether the arguments are absent or bindable (section 3.4)} */
    public boolean bindable() {
        return arguments == null || digest() != null;
    }

    @Override
    public String toString() {
        return "Binding(" + aud + ")"; // neither the user nor the arguments: they may be personal data
    }
}
