package dev.mrtrstate.binding;

/** The kind of a target and its MCP method (profile, section 3.5). */
public enum TargetKind {
    /** A tool: {@code tools/call}. */
    TOOL("tools/call"),
    /** A prompt: {@code prompts/get}. */
    PROMPT("prompts/get"),
    /** A resource read: {@code resources/read}; it has no arguments. */
    RESOURCE("resources/read");

    private final String method;

    TargetKind(String method) {
        this.method = method;
    }

    /** {@return the MCP method, e.g. {@code tools/call}} */
    public String method() {
        return method;
    }

    /**
     * The kind of an MCP method.
     *
     * @param method {@code tools/call}, {@code prompts/get} or {@code resources/read}
     * @return its kind, or null for another method
     */
    public static TargetKind ofMethod(String method) {
        for (TargetKind kind : values()) {
            if (kind.method.equals(method)) {
                return kind;
            }
        }
        return null;
    }
}
