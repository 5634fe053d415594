package mrtrstate.interop;

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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Strict JSON for token segments (profile, section 5, steps 4 and 11), and the JSON of jobs.
 *
 * <p>A segment is valid UTF-8 without a byte order mark, one JSON value, with no duplicate member names at any
 * depth, no {@code NaN}/{@code Infinity}, no number beyond the range of a double, no integer literal beyond
 * +/-(2^53 - 1), no escaped lone surrogate, and nesting of at most 33 levels. Jackson gives the syntax, the
 * duplicates and the depth; {@link #isIJson} adds the I-JSON rules (RFC 7493): Jackson reads any integer
 * exactly and keeps an escaped lone surrogate of a string value in the Java string. Numbers are read
 * exactly (integers as long or BigInteger, fractions as BigDecimal) so that the type of a literal
 * ({@code 1767226140} against {@code 1767226140.0} or {@code 1.76722614e9}) stays visible and the state is
 * handed back with exactly the value it was minted with.
 */
final class StrictJson {
    /** The claims object plus 32 levels of state (profile, sections 3.3 and 5). */
    static final int MAX_DEPTH = 33;
    /** 2^53 - 1, the largest integer every JSON implementation reads exactly. */
    static final long MAX_SAFE_INTEGER = 9007199254740991L;

    private static final ObjectMapper SEGMENTS = mapper(MAX_DEPTH);
    /** Jobs nest the state a few levels deeper than a token does; their bound is only a guard. */
    private static final ObjectMapper JOBS = mapper(256);
    /** Output: ASCII only, so any string (even one holding a lone surrogate) is written without error. */
    private static final ObjectMapper OUTPUT = JsonMapper.builder()
            .enable(JsonWriteFeature.ESCAPE_NON_ASCII)
            .build();
    /** Compact text with strings as they are: the input of the RFC 8785 canonicalizer. */
    private static final ObjectMapper PLAIN = JsonMapper.builder().build();

    private StrictJson() {}

    private static ObjectMapper mapper(int maxDepth) {
        JsonFactory factory = JsonFactory.builder()
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(maxDepth)
                        // Jackson's default (1000 characters) would refuse 0.000...1 written out at length,
                        // which is a valid double. The size cap already bounds a token.
                        .maxNumberLength(Integer.MAX_VALUE)
                        .build())
                .build();
        return JsonMapper.builder(factory)
                .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
                .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES) // 1.50 stays 1.50
                .build();
    }

    /**
     * Parse one decoded token segment. Returns null when the bytes are not strict JSON; the caller turns
     * that into {@code malformed}.
     */
    static JsonNode parseSegment(byte[] raw) {
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
        try {
            JsonNode value = SEGMENTS.readTree(text);
            return value != null && !value.isMissingNode() && isIJson(value) ? value : null;
        } catch (JsonProcessingException | IllegalArgumentException e) {
            // Jackson throws NumberFormatException (unchecked) for a literal such as 1e99999999999.
            return null;
        }
    }

    /** Parse the JSON text of a job (stdin, a vectors file): the same strictness, with a looser depth. */
    static JsonNode parseJob(String text, String what) throws BadJob {
        try {
            JsonNode value = JOBS.readTree(text);
            if (value == null || value.isMissingNode()) {
                throw new BadJob(what + " is empty");
            }
            if (!checkNumbers(value)) {
                throw new BadJob(what + " holds a number beyond the range of a double");
            }
            return value;
        } catch (JsonProcessingException e) {
            throw new BadJob(what + " is not valid JSON: " + e.getOriginalMessage());
        } catch (IllegalArgumentException e) { // a number literal Jackson cannot hold, e.g. 1e99999999999
            throw new BadJob(what + " holds a number beyond the range of a double");
        }
    }

    /**
     * Whether {@code value} keeps the I-JSON rules (RFC 7493) of a token segment and of a state: every integer
     * literal (no fraction, no exponent: Jackson's integral nodes) within +/-(2^53 - 1), every other number
     * within the range of a double, and every string and member name valid Unicode. The text was valid UTF-8,
     * so a lone surrogate can only have come from a <code>&#92;u</code> escape.
     */
    static boolean isIJson(JsonNode value) {
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
        for (Map.Entry<String, JsonNode> member : value.properties()) { // an object's members
            if (!isValidUnicode(member.getKey()) || !isIJson(member.getValue())) {
                return false;
            }
        }
        if (value.isArray()) {
            for (JsonNode item : value) {
                if (!isIJson(item)) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Whether {@code text} has no lone surrogate ({@code codePoints()} yields one as a code point of its own). */
    static boolean isValidUnicode(String text) {
        return text.codePoints().noneMatch(c -> c >= Character.MIN_SURROGATE && c <= Character.MAX_SURROGATE);
    }

    /** Whether every number in {@code value} lies within the range of an IEEE 754 double (jobs, not I-JSON). */
    static boolean checkNumbers(JsonNode value) {
        if (value.isNumber()) {
            return Double.isFinite(value.doubleValue());
        }
        for (JsonNode item : value) { // the members of an object or the items of an array
            if (!checkNumbers(item)) {
                return false;
            }
        }
        return true;
    }

    /**
     * The Java values Nimbus works with: Map, List, String, Boolean, null, Long (or BigInteger beyond a long)
     * and BigDecimal for fractions, so a value is written back exactly as it was read.
     */
    static Object toJava(JsonNode value) {
        if (value.isObject()) {
            Map<String, Object> map = new LinkedHashMap<>();
            for (Map.Entry<String, JsonNode> member : value.properties()) {
                map.put(member.getKey(), toJava(member.getValue()));
            }
            return map;
        }
        if (value.isArray()) {
            List<Object> list = new ArrayList<>();
            for (JsonNode item : value) {
                list.add(toJava(item));
            }
            return list;
        }
        if (value.isIntegralNumber()) {
            return value.canConvertToLong() ? (Object) value.longValue() : value.bigIntegerValue();
        }
        if (value.isNumber()) {
            return value.decimalValue();
        }
        if (value.isTextual()) {
            return value.textValue();
        }
        if (value.isBoolean()) {
            return value.booleanValue();
        }
        return null;
    }

    /** Compact JSON with every non-ASCII character escaped (stdout). */
    static String write(Object value) {
        try {
            return OUTPUT.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }

    /** Compact JSON with strings as they are (the canonicalizer's input). */
    static String writePlain(JsonNode value) {
        try {
            return PLAIN.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON", e);
        }
    }

    static ObjectMapper output() {
        return OUTPUT;
    }
}
