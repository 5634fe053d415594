package dev.mrtrstate.token;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Strict JSON (profile, section 5, steps 4 and 11; section 3.3 for the state).
 *
 * <p>A segment is valid UTF-8 without a byte order mark, one JSON value, with no duplicate member names at any
 * depth, no {@code NaN}/{@code Infinity}, no number beyond the range of a double, no integer literal beyond
 * +/-(2^53 - 1), no escaped lone surrogate, and nesting of at most 33 levels. Jackson gives the syntax, the
 * duplicates and the depth; {@link #isIJson} adds the I-JSON rules (RFC 7493). Numbers are read exactly
 * (integers as long or BigInteger, fractions as BigDecimal) so that an integer literal stays apart from
 * {@code 1.0} or {@code 1e9}, and a state is handed back with exactly the value it was minted with.
 */
public final class StrictJson {
    /** The claims object plus 32 levels of state (profile, sections 3.3 and 5). */
    public static final int MAX_DEPTH = 33;
    /** The deepest a state nests (profile, section 3.3). */
    public static final int MAX_STATE_DEPTH = 32;
    /** 2^53 - 1, the largest integer every JSON implementation reads exactly. */
    public static final long MAX_SAFE_INTEGER = 9007199254740991L;
    /** How deep {@link #parseExact} reads: a guard against text nested without end, not a rule of the profile. */
    public static final int REQUEST_MAX_DEPTH = 1000;

    private static final ObjectMapper SEGMENTS = mapper(MAX_DEPTH);
    /** Configuration (JWKS documents, key files): the same strictness, a looser depth as a guard only. */
    private static final ObjectMapper DOCUMENTS = mapper(256);
    /**
     * Requests (a request's arguments, a conformance request line): the last member of a repeated name wins
     * (profile 3.4, issue 32 D2), numbers exact, and a depth guard well beyond the 256 levels arguments bind to,
     * so that arguments nested deeper are read and found unbindable rather than refused as text.
     */
    private static final ObjectMapper REQUESTS = mapper(REQUEST_MAX_DEPTH, false);
    /** Output: compact, UTF-8. */
    private static final ObjectMapper OUTPUT = JsonMapper.builder().build();
    /** Output with every non-ASCII character escaped. */
    private static final ObjectMapper ASCII = JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

    private StrictJson() {}

    private static ObjectMapper mapper(int maxDepth) {
        return mapper(maxDepth, true);
    }

    private static ObjectMapper mapper(int maxDepth, boolean refuseDuplicates) {
        JsonFactory factory = JsonFactory.builder()
                .configure(StreamReadFeature.STRICT_DUPLICATE_DETECTION, refuseDuplicates)
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(maxDepth)
                        // Jackson's default (1000 characters) would refuse 0.000...1 written out at length, a
                        // valid double. The size cap already bounds a token.
                        .maxNumberLength(Integer.MAX_VALUE)
                        .build())
                .build();
        return JsonMapper.builder(factory)
                .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .configure(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY, refuseDuplicates)
                .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES) // 1.50 stays 1.50
                .build();
    }

    /**
     * Parse one decoded token segment (a header or a claims set).
     *
     * @param raw the decoded bytes
     * @return the value, or null when the bytes are not strict JSON (the caller refuses {@code malformed})
     */
    public static JsonNode parseSegment(byte[] raw) {
        String text;
        try {
            // The JDK's decoder with REPORT refuses every invalid sequence (overlong forms, surrogates).
            text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(raw))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
        if (text.startsWith("\uFEFF")) {
            return null; // a byte order mark is not JSON (RFC 8259, section 8.1)
        }
        JsonNode value = read(SEGMENTS, text);
        return value != null && isIJson(value) ? value : null;
    }

    /**
     * Parse a JSON document of configuration (a JWK, a JWKS, a key file) with the same strictness.
     *
     * @param text the JSON text
     * @return the value, or null when it is not strict I-JSON
     */
    public static JsonNode parseDocument(String text) {
        JsonNode value = read(DOCUMENTS, text);
        return value != null && isIJson(value) ? value : null;
    }

    /**
     * Parse JSON text that need not be I-JSON (a request's arguments may hold any number): strict syntax, numbers
     * read exactly, the last member of a repeated name wins (profile 3.4, issue 32 D2: how arguments are read),
     * nesting to {@link #REQUEST_MAX_DEPTH} levels (a guard; arguments bind to 256 levels).
     *
     * @param text the JSON text
     * @return the value, or null when it is not valid JSON
     */
    public static JsonNode parseExact(String text) {
        return read(REQUESTS, text);
    }

    /** One JSON value read by a strict mapper, or null for no value or text that is not strict JSON. */
    private static JsonNode read(ObjectMapper mapper, String text) {
        try {
            JsonNode value = mapper.readTree(text);
            return value != null && !value.isMissingNode() ? value : null;
        } catch (JsonProcessingException | IllegalArgumentException e) {
            // Jackson throws NumberFormatException (unchecked) for a literal such as 1e99999999999.
            return null;
        }
    }

    /**
     * Whether {@code value} keeps the I-JSON rules (RFC 7493): every integer literal within +/-(2^53 - 1), every
     * other number within the range of a double, every string and member name valid Unicode.
     *
     * @param value a JSON value
     * @return true when it is I-JSON
     */
    public static boolean isIJson(JsonNode value) {
        if (value.isIntegralNumber()) {
            return value.canConvertToLong()
                    && value.longValue() >= -MAX_SAFE_INTEGER && value.longValue() <= MAX_SAFE_INTEGER;
        }
        if (value.isNumber()) {
            return Double.isFinite(value.doubleValue());
        }
        if (value.isTextual()) {
            return isValidUnicode(value.textValue());
        }
        if (value.isObject()) {
            for (Map.Entry<String, JsonNode> member : value.properties()) {
                if (!isValidUnicode(member.getKey()) || !isIJson(member.getValue())) {
                    return false;
                }
            }
        } else if (value.isArray()) {
            for (JsonNode item : value) {
                if (!isIJson(item)) {
                    return false;
                }
            }
        } else if (!value.isBoolean() && !value.isNull()) {
            return false; // a POJO or binary node: not JSON
        }
        return true;
    }

    /**
     * How deep {@code value} nests: a scalar 0, {@code []} and {@code {}} 1 (profile, section 3.3).
     *
     * @param value a JSON value
     * @param limit the depth beyond which the count stops
     * @return the depth, or {@code limit + 1} when deeper than {@code limit}
     */
    public static int depth(JsonNode value, int limit) {
        if (!value.isContainerNode()) {
            return 0;
        }
        if (limit == 0) {
            return 1;
        }
        int deepest = 0;
        for (JsonNode item : value) {
            deepest = Math.max(deepest, depth(item, limit - 1));
            if (deepest >= limit) {
                return limit + 1;
            }
        }
        return deepest + 1;
    }

    /**
     * Whether {@code text} has no lone surrogate.
     *
     * @param text the text
     * @return true when it is valid Unicode
     */
    public static boolean isValidUnicode(String text) {
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(i + 1))) {
                    return false;
                }
                i++;
            } else if (Character.isLowSurrogate(c)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Compact UTF-8 JSON of a value already known to be I-JSON.
     *
     * @param value the value
     * @return its bytes
     */
    public static byte[] writeBytes(JsonNode value) {
        try {
            return OUTPUT.writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }

    /**
     * Compact JSON text, strings as they are.
     *
     * @param value the value
     * @return the text
     */
    public static String write(JsonNode value) {
        try {
            return OUTPUT.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }

    /**
     * Compact JSON text with every non-ASCII character escaped (any string, even one with a lone surrogate).
     *
     * @param value the value
     * @return the text
     */
    public static String writeAscii(Object value) {
        try {
            return ASCII.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }

    /**
     * The JSON tree of a Java value (Map, List, String, Number, Boolean, null, or a JsonNode as it is).
     *
     * @param value the value
     * @return its tree
     * @throws IllegalArgumentException when the value is not JSON
     */
    public static JsonNode toTree(Object value) {
        if (value instanceof JsonNode node) {
            return node;
        }
        return value == null ? com.fasterxml.jackson.databind.node.NullNode.getInstance() : OUTPUT.valueToTree(value);
    }
}
