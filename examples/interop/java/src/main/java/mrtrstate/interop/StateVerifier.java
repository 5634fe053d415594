package mrtrstate.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.jwt.proc.BadJWTException;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import java.io.IOException;
import java.text.ParseException;
import java.util.Date;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The validation procedure of the profile (spec/profile.md, section 5), steps 1 to 19, in that order.
 *
 * <p>nimbus-jose-jwt does what it does well: {@link SignedJWT#parse} and the signature (step 10, with a
 * {@code MACVerifier} or {@code Ed25519Verifier} made for the one key the token names), the required claims
 * (step 12), {@code exp} with an injected clock and the leeway as its clock skew (step 15), and the exact
 * {@code iss}, {@code sub} and {@code aud} (steps 16 to 18). Everything else is added here, because Nimbus
 * does not check it or checks it differently (see README.md): steps 1 to 9, 11, most of 12, 13, 14 and 19.
 *
 * <p>Nimbus's {@code DefaultJWTClaimsVerifier} checks {@code aud}, then the required claims, then exact
 * matches, then {@code exp}. The profile's order is {@code exp}, {@code iss}, {@code sub}, {@code aud}, so
 * each of those steps runs its own Nimbus verifier: a failure maps to exactly one reason code.
 */
final class StateVerifier {
    /** The {@code typ} of the profile, compared with the decoded header string. */
    static final String TYP = "mrtr-state+jwt";

    private static final Set<String> HEADER_PARAMETERS = Set.of("alg", "typ", "kid");
    private static final Set<String> REQUIRED_CLAIMS = Set.of("iss", "sub", "aud", "iat", "exp", "jti", "state");
    private static final Set<String> ALL_CLAIMS =
            Set.of("iss", "sub", "aud", "iat", "exp", "jti", "args_sha256", "state");
    private static final Pattern JTI = Pattern.compile("[A-Za-z0-9_-]{22,64}");
    private static final Pattern DIGEST = Pattern.compile("[A-Za-z0-9_-]{43}");

    /**
     * What the verifier is configured with: its ring, its identity, its limits, and whether a token for a tool or
     * prompt must carry {@code args_sha256} (profile, section 5).
     */
    record Options(KeyRing ring, String issuer, long maxLifetime, long leeway, long maxTokenBytes,
            boolean requireArguments) {}

    /** The request being served: its user, its target as an {@code aud} value, its arguments, and now. */
    record Request(String user, String audience, JsonNode arguments, long now) {}

    private final Options options;

    StateVerifier(Options options) {
        this.options = options;
    }

    /** Validate {@code token} (any JSON value) for {@code request}; return the state or throw a Refusal. */
    JsonNode verify(JsonNode token, Request request) throws Refusal {
        // 1. Size: in bytes of the UTF-8 encoding, before any decoding. A Java string never has more UTF-16
        // units than UTF-8 bytes, so length() alone refuses most oversized input without counting.
        if (token == null || !token.isTextual()) {
            throw new Refusal("malformed", "the token is not a string");
        }
        String text = token.textValue();
        if (text.length() > options.maxTokenBytes() || utf8Length(text) > options.maxTokenBytes()) {
            throw new Refusal("too_large", "the token is longer than the size cap");
        }

        // 2. Segments: exactly three non-empty segments of the base64url alphabet.
        // (Nimbus's JOSEObject.split trims white space and its Base64URL accepts padding: not used here.)
        String[] segments = text.split("\\.", -1);
        if (segments.length != 3) {
            throw new Refusal("malformed", "the token is not three segments joined by '.'");
        }
        for (String segment : segments) {
            if (segment.isEmpty() || !Base64Url.isAlphabet(segment)) {
                throw new Refusal("malformed", "a segment is empty or not base64url");
            }
        }

        // 3. Canonical base64url: no two texts for the same bytes.
        for (String segment : segments) {
            if (!Base64Url.isCanonical(segment)) {
                throw new Refusal("malformed", "a segment is not canonical unpadded base64url");
            }
        }

        // 4. Header JSON: strict (no duplicates, no BOM, valid UTF-8, depth <= 33, I-JSON), and an object.
        JsonNode header = StrictJson.parseSegment(Base64Url.decode(segments[0]));
        if (header == null || !header.isObject()) {
            throw new Refusal("malformed", "the header is not a strict JSON object");
        }

        // 5. Header allowlist: Nimbus keeps unknown parameters as custom parameters; the profile refuses them.
        for (Iterator<String> names = header.fieldNames(); names.hasNext(); ) {
            if (!HEADER_PARAMETERS.contains(names.next())) {
                throw new Refusal("unsupported_header", "the header has a parameter the profile forbids");
            }
        }

        // 6. Algorithm: HS256 or EdDSA only. (Nimbus's Ed25519Verifier also takes "Ed25519"; the profile
        // refuses it so that every verifier gives the same verdict.)
        String alg = header.path("alg").isTextual() ? header.get("alg").textValue() : null;
        if (!"HS256".equals(alg) && !"EdDSA".equals(alg)) {
            throw new Refusal("unsupported_header", "alg is not HS256 or EdDSA");
        }

        // 7. Type, exactly, as the decoded JSON string (an escaped '+' is the same string). Nimbus's
        // DefaultJOSEObjectTypeVerifier is not used: JOSEObjectType.equals ignores case, so it would accept
        // "MRTR-STATE+JWT".
        JsonNode typ = header.get("typ");
        if (typ == null || !typ.isTextual() || !TYP.equals(typ.textValue())) {
            throw new Refusal("wrong_type", "typ is not exactly " + TYP);
        }

        // 8. Key: kid is a string naming a key in the ring.
        JsonNode kid = header.get("kid");
        KeyRing.Key key = kid != null && kid.isTextual() ? options.ring().get(kid.textValue()) : null;
        if (key == null) {
            throw new Refusal("unknown_key", "kid names no key in the ring");
        }

        // 9. The algorithm is the key's, never the token's.
        if (!key.alg().getName().equals(alg)) {
            throw new Refusal("algorithm_mismatch", "alg is not the algorithm of the named key");
        }

        // 10. Signature (Nimbus), over the first two segments as received. MACVerifier compares in constant
        // time and refuses a MAC of another length; Tink refuses an Ed25519 signature that is not 64 bytes.
        SignedJWT jwt;
        try {
            jwt = SignedJWT.parse(text);
        } catch (ParseException e) { // not reached: steps 2 to 9 passed
            throw new Refusal("malformed", "Nimbus cannot parse the token");
        }
        try {
            if (!jwt.verify(key.verifier())) {
                throw new Refusal("bad_signature", "the signature does not verify");
            }
        } catch (JOSEException e) {
            throw new Refusal("bad_signature", "the signature does not verify");
        }

        // 11. Claims JSON: strict, like the header (duplicates, unsafe integers, escaped lone surrogates at any
        // depth, inside the state too).
        JsonNode claims = StrictJson.parseSegment(Base64Url.decode(segments[1]));
        if (claims == null || !claims.isObject()) {
            throw new Refusal("malformed", "the payload is not a strict JSON object");
        }

        // 12. Claims: closed set, required claims (Nimbus), types and integer literals.
        for (Iterator<String> names = claims.fieldNames(); names.hasNext(); ) {
            if (!ALL_CLAIMS.contains(names.next())) {
                throw new Refusal("malformed", "the payload has a claim the profile does not define");
            }
        }
        // Nimbus checks a claims set made from this strict parse, not from its own parser (shaded Gson),
        // which keeps duplicates inside the state and refuses integers of 66 digits or more.
        JWTClaimsSet claimsSet;
        try {
            @SuppressWarnings("unchecked")
            Map<String, Object> members = (Map<String, Object>) StrictJson.toJava(claims);
            claimsSet = JWTClaimsSet.parse(members);
        } catch (ParseException e) { // e.g. "exp": "1767226140", which Nimbus cannot read as a date
            throw new Refusal("malformed", "Nimbus cannot read the claims");
        }
        check(nimbus(null, null, REQUIRED_CLAIMS, null), claimsSet, "malformed");
        for (String name : new String[] {"iss", "sub", "aud"}) {
            // Nimbus would turn a numeric sub into a string and accept aud as an array.
            JsonNode value = claims.get(name);
            if (value == null || !value.isTextual() || value.textValue().isEmpty()) {
                throw new Refusal("malformed", "iss, sub and aud must be non-empty strings");
            }
        }
        long iat = time(claims.get("iat"));
        long exp = time(claims.get("exp"));
        if (exp <= iat) {
            throw new Refusal("malformed", "exp is not after iat");
        }
        JsonNode jti = claims.get("jti");
        if (jti == null || !jti.isTextual() || !JTI.matcher(jti.textValue()).matches()) {
            throw new Refusal("malformed", "jti is not 22 to 64 base64url characters");
        }
        JsonNode digest = claims.get("args_sha256");
        if (digest != null && (!digest.isTextual() || !DIGEST.matcher(digest.textValue()).matches())) {
            throw new Refusal("malformed", "args_sha256 is not 43 base64url characters");
        }

        // 13. Lifetime.
        if (exp - iat > options.maxLifetime()) {
            throw new Refusal("lifetime_too_long", "exp - iat exceeds the maximum lifetime");
        }

        // 14. Not from the future (Nimbus does not look at iat).
        if (iat > request.now() + options.leeway()) {
            throw new Refusal("issued_in_future", "iat is ahead of the clock");
        }

        // 15. Not expired (Nimbus): it refuses unless exp + skew > now, i.e. from the second exp itself
        // with a skew of 0. Its default skew is 60 s; here the skew is the profile's leeway (default 0).
        Date now = new Date(request.now() * 1000L);
        DefaultJWTClaimsVerifier<SecurityContext> clock = nimbus(null, null, null, now);
        clock.setMaxClockSkew(Math.toIntExact(options.leeway()));
        check(clock, claimsSet, "expired");

        // 16 to 18. Issuer, user, target (Nimbus, exact string comparison), one verifier per step.
        check(nimbus(null, new JWTClaimsSet.Builder().issuer(options.issuer()).build(), null, null),
                claimsSet, "wrong_issuer");
        check(nimbus(null, new JWTClaimsSet.Builder().subject(request.user()).build(), null, null),
                claimsSet, "wrong_user");
        check(nimbus(Set.of(request.audience()), null, null, null), claimsSet, "wrong_tool");

        // 19. Request binding: the digest of the retry's arguments (RFC 8785); unbindable arguments match no
        // digest. A verifier may require the binding for tools and prompts (a resource read has no arguments).
        if (digest == null && options.requireArguments() && !request.audience().startsWith("resources/read:")) {
            throw new Refusal("wrong_request", "the verifier requires args_sha256, which is absent");
        }
        if (digest != null) {
            String actual;
            try {
                actual = ArgumentDigest.digest(request.arguments());
            } catch (IOException e) {
                actual = null;
            }
            if (!digest.textValue().equals(actual)) {
                throw new Refusal("wrong_request", "args_sha256 does not match the arguments");
            }
        }
        return claims.get("state");
    }

    /**
     * The size of {@code text} in UTF-8 bytes. Not {@code getBytes(UTF_8).length}: that writes a lone surrogate
     * as one byte ({@code ?}), where Python, Go and JavaScript count the three bytes of its encoded form or of
     * U+FFFD, so a token at the cap would get another verdict.
     */
    private static long utf8Length(String text) {
        return text.codePoints().mapToLong(c -> c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4).sum();
    }

    /**
     * iat or exp: an integer literal (not 1.0, not 1e9, not a string or a boolean) within 0 .. 2^53 - 1.
     * Nimbus would read 1767226140.5 as 1767226140 and accept 2^53.
     */
    private static long time(JsonNode value) throws Refusal {
        if (value == null || !value.isIntegralNumber() || !value.canConvertToLong()
                || value.longValue() < 0 || value.longValue() > StrictJson.MAX_SAFE_INTEGER) {
            throw new Refusal("malformed", "iat and exp must be integers in 0 .. 2^53 - 1");
        }
        return value.longValue();
    }

    /**
     * A Nimbus claims verifier for one step. {@code now} null skips Nimbus's time checks; otherwise it is the
     * verifier's clock (Nimbus reads the clock through the overridable {@code currentTime()}).
     */
    private static DefaultJWTClaimsVerifier<SecurityContext> nimbus(
            Set<String> audience, JWTClaimsSet exact, Set<String> required, Date now) {
        return new DefaultJWTClaimsVerifier<>(audience, exact, required, null) {
            @Override
            protected Date currentTime() {
                return now;
            }
        };
    }

    private static void check(DefaultJWTClaimsVerifier<SecurityContext> verifier, JWTClaimsSet claims,
            String reason) throws Refusal {
        try {
            verifier.verify(claims, null);
        } catch (BadJWTException e) {
            throw new Refusal(reason, e.getMessage());
        }
    }
}
