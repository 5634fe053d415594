package mrtrstate.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.io.IOException;
import java.security.SecureRandom;
import java.util.Date;
import java.util.regex.Pattern;

/**
 * Minting (profile, section 4) with Nimbus's signing API: {@code JWSHeader}, {@code JWTClaimsSet},
 * {@code SignedJWT.sign} with {@code MACSigner} or {@code Ed25519Signer}.
 *
 * <p>Header: exactly {@code alg}, {@code typ}, {@code kid}. Claims: exactly iss, sub, aud, iat, exp, jti,
 * args_sha256 (when the request has arguments) and state. Nimbus drops claims whose value is null unless told
 * otherwise ({@code serializeNullClaims}): a state of {@code null} would silently vanish and the token would
 * lack a required claim.
 */
final class StateMinter {
    private static final Pattern JTI = Pattern.compile("[A-Za-z0-9_-]{22,64}");
    private static final int MAX_STATE_DEPTH = 32;
    /** The verifiers' default size cap; a token is ASCII, so its length is its size in bytes. */
    private static final long MAX_TOKEN_BYTES = 8192;
    private static final SecureRandom RANDOM = new SecureRandom();

    private StateMinter() {}

    /** What to mint: the request, the clock, the lifetime, the state, and optionally a fixed jti. */
    record Claims(String issuer, String user, String audience, JsonNode arguments, long now, long ttl,
            JsonNode state, String jti) {}

    /** Mint a token for {@code claims} signed by {@code key}; BadJob for anything the profile forbids. */
    static String mint(KeyRing.Key key, Claims claims) throws BadJob {
        if (claims.ttl() < 1 || claims.now() < 0 || claims.now() + claims.ttl() > StrictJson.MAX_SAFE_INTEGER) {
            throw new BadJob("now and ttl must give 0 <= iat < exp <= 2^53 - 1");
        }
        String jti = claims.jti() != null ? claims.jti() : randomJti();
        if (!JTI.matcher(jti).matches()) {
            throw new BadJob("jti must be 22 to 64 base64url characters");
        }
        JWTClaimsSet.Builder builder = new JWTClaimsSet.Builder()
                .issuer(claims.issuer())
                .subject(claims.user())
                .audience(claims.audience()) // one audience: Nimbus writes it as a string, not an array
                .issueTime(new Date(claims.now() * 1000L))
                .expirationTime(new Date((claims.now() + claims.ttl()) * 1000L))
                .jwtID(jti);
        if (claims.arguments() != null) {
            try {
                builder.claim("args_sha256", ArgumentDigest.digest(claims.arguments()));
            } catch (IOException e) {
                throw new BadJob("the arguments cannot be bound (pass integers beyond 2^53 - 1 as strings): "
                        + e.getMessage());
            }
        }
        // The verifier's own I-JSON rules, so that nothing is minted that a verifier would refuse.
        if (!StrictJson.isIJson(claims.state())) {
            throw new BadJob("the state is not I-JSON (RFC 7493): it holds an integer outside +/-(2^53 - 1), "
                    + "a number beyond the range of a double, or a lone surrogate");
        }
        checkDepth(claims.state(), 0);
        builder.claim("state", StrictJson.toJava(claims.state())).serializeNullClaims(true);

        JWSHeader header = new JWSHeader.Builder(key.alg())
                .type(new JOSEObjectType(StateVerifier.TYP))
                .keyID(key.kid())
                .build();
        SignedJWT jwt = new SignedJWT(header, builder.build());
        try {
            jwt.sign(key.signer());
        } catch (JOSEException e) {
            throw new BadJob("cannot sign: " + e.getMessage());
        }
        String token = jwt.serialize();
        if (token.length() > MAX_TOKEN_BYTES) {
            throw new BadJob("the token would exceed the size cap of " + MAX_TOKEN_BYTES + " bytes");
        }
        return token;
    }

    private static String randomJti() {
        byte[] bytes = new byte[16];
        RANDOM.nextBytes(bytes);
        return Base64Url.encode(bytes);
    }

    /** Refuse a state nested deeper than 32 levels (section 3.3). */
    private static void checkDepth(JsonNode value, int depth) throws BadJob {
        if (value.isContainerNode()) {
            if (depth == MAX_STATE_DEPTH) {
                throw new BadJob("the state nests deeper than " + MAX_STATE_DEPTH + " levels");
            }
            for (JsonNode item : value) { // the members' values of an object, the items of an array
                checkDepth(item, depth + 1);
            }
        }
    }
}
