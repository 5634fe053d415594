package dev.mrtrstate.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.Ed25519Signer;
import com.nimbusds.jose.crypto.Ed25519Verifier;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import dev.mrtrstate.Keyring;
import dev.mrtrstate.StateSealer;
import dev.mrtrstate.binding.ArgumentDigest;
import dev.mrtrstate.binding.Binding;
import dev.mrtrstate.keys.Key;
import dev.mrtrstate.keys.KeyAlgorithm;
import dev.mrtrstate.token.StrictJson;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Date;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code seal} and {@code open} of the library, and nimbus-jose-jwt minting and verifying the same token (the
 * same header, claims and argument digest, the digest computed outside Nimbus's timing since Nimbus has none),
 * at the three state sizes of docs/benchmarks.md. Nimbus verifies as a typical server does: parse, signature,
 * exact iss/sub/aud and exp, with none of the profile's other steps.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class SealOpenBenchmark {
    private static final String ISSUER = "https://tools.example.com";
    private static final Instant NOW = Instant.ofEpochSecond(1_767_225_600L);
    private static final Map<String, Object> ARGUMENTS = Map.of("env", "prod", "branch", "release-1.2");

    /** The state's size in bytes of compact JSON. */
    @Param({"200", "2048", "5779"})
    public int size;

    /** The signing algorithm. */
    @Param({"HS256", "EdDSA"})
    public String alg;

    private StateSealer sealer;
    private Binding binding;
    private JsonNode state;
    private String token;
    private JWSSigner nimbusSigner;
    private JWSVerifier nimbusVerifier;
    private JWSHeader nimbusHeader;
    private JWTClaimsSet nimbusClaims;
    private String nimbusToken;
    private DefaultJWTClaimsVerifier<SecurityContext> nimbusClaimsVerifier;
    private byte[] signingInput;
    private byte[] signature;
    private java.security.Signature jdkSigner;
    private java.security.Signature jdkVerifier;
    private com.google.crypto.tink.subtle.Ed25519Sign tinkSigner;
    private com.google.crypto.tink.subtle.Ed25519Verify tinkVerifier;

    /** The state of {@code size} bytes that benchmarks/_harness.py's make_state writes. */
    static JsonNode makeState(int size) {
        JsonNodeFactory nodes = JsonNodeFactory.instance;
        ObjectNode state = nodes.objectNode();
        state.put("step", 2);
        ObjectNode plan = state.putObject("plan");
        plan.put("env", "prod").put("branch", "release-1.2").put("replicas", 3).put("dry_run", false);
        state.putArray("asked").add("confirm");
        ArrayNode items = state.putArray("items");
        state.put("note", "");
        while (true) {
            int i = items.size();
            ObjectNode item = nodes.objectNode();
            item.put("id", i).put("path", String.format("/srv/app/releases/file-%04d.tar.gz", i))
                    .put("bytes", 1200 + 37 * i).put("ok", true);
            items.add(item);
            if (StrictJson.writeBytes(state).length > size) {
                items.remove(items.size() - 1);
                break;
            }
        }
        state.put("note", "n".repeat(size - StrictJson.writeBytes(state).length));
        return state;
    }

    /**
     * Keys, the state, and a token of each kind to open.
     *
     * @throws Exception never, for a benchmark that can run
     */
    @Setup
    public void setup() throws Exception {
        Keyring ring = Keyring.generate(alg.equals("HS256") ? KeyAlgorithm.HS256 : KeyAlgorithm.EDDSA);
        Key key = ring.keys().get(0);
        sealer = StateSealer.builder(ring, ISSUER).clock(Clock.fixed(NOW, ZoneOffset.UTC)).build();
        binding = Binding.tool("alice", "deploy", ARGUMENTS);
        state = makeState(size);
        if (StrictJson.writeBytes(state).length != size) {
            throw new IllegalStateException("the state is not " + size + " bytes");
        }
        token = sealer.seal(state, binding);

        JWK jwk = JWK.parse(StrictJson.writeAscii(key.privateJwk()));
        if (jwk instanceof OctetSequenceKey secret) {
            nimbusSigner = new MACSigner(secret);
            nimbusVerifier = new MACVerifier(secret);
        } else {
            nimbusSigner = new Ed25519Signer((OctetKeyPair) jwk);
            nimbusVerifier = new Ed25519Verifier(((OctetKeyPair) jwk).toPublicJWK());
        }
        nimbusHeader = new JWSHeader.Builder(alg.equals("HS256") ? JWSAlgorithm.HS256 : JWSAlgorithm.EdDSA)
                .type(new JOSEObjectType("mrtr-state+jwt")).keyID(key.kid()).build();
        nimbusClaims = new JWTClaimsSet.Builder().issuer(ISSUER).subject("alice").audience("tools/call:deploy")
                .issueTime(Date.from(NOW)).expirationTime(Date.from(NOW.plusSeconds(600))).jwtID("AAAAAAAAAAAAAAAAAAAAAA")
                .claim("args_sha256", ArgumentDigest.digest(StrictJson.toTree(ARGUMENTS)))
                .claim("state", new com.fasterxml.jackson.databind.ObjectMapper().convertValue(state, Map.class))
                .build();
        nimbusToken = nimbusMint();
        Date now = Date.from(NOW);
        nimbusClaimsVerifier = new DefaultJWTClaimsVerifier<>("tools/call:deploy",
                new JWTClaimsSet.Builder().issuer(ISSUER).subject("alice").build(), Set.of("exp")) {
            @Override
            protected Date currentTime() {
                return now;
            }
        };
        nimbusClaimsVerifier.setMaxClockSkew(0);

        // The floors: the bare signature primitives over this token's signing input.
        signingInput = token.substring(0, token.lastIndexOf('.')).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        signature = java.util.Base64.getUrlDecoder().decode(token.substring(token.lastIndexOf('.') + 1));
        if (jwk instanceof OctetKeyPair pair) {
            java.security.KeyFactory factory = java.security.KeyFactory.getInstance("Ed25519");
            jdkSigner = java.security.Signature.getInstance("Ed25519");
            jdkSigner.initSign(factory.generatePrivate(new java.security.spec.EdECPrivateKeySpec(
                    java.security.spec.NamedParameterSpec.ED25519, pair.getDecodedD())));
            jdkVerifier = java.security.Signature.getInstance("Ed25519");
            byte[] x = pair.getDecodedX();
            byte[] bigEndian = new byte[32];
            for (int i = 0; i < 32; i++) {
                bigEndian[i] = x[31 - i];
            }
            boolean odd = (bigEndian[0] & 0x80) != 0;
            bigEndian[0] &= 0x7f;
            jdkVerifier.initVerify(factory.generatePublic(new java.security.spec.EdECPublicKeySpec(
                    java.security.spec.NamedParameterSpec.ED25519,
                    new java.security.spec.EdECPoint(odd, new java.math.BigInteger(1, bigEndian)))));
            tinkSigner = new com.google.crypto.tink.subtle.Ed25519Sign(pair.getDecodedD());
            tinkVerifier = new com.google.crypto.tink.subtle.Ed25519Verify(x);
        }
    }

    /**
     * Floor: the JDK's Ed25519 signature (a Signature already initialized), as the library signs.
     *
     * @return the signature
     * @throws Exception never
     */
    @Benchmark
    public byte[] floorJdkEd25519Sign() throws Exception {
        if (jdkSigner == null) {
            return null;
        }
        jdkSigner.update(signingInput);
        return jdkSigner.sign();
    }

    /**
     * Floor: the JDK's Ed25519 verification, as the library verifies.
     *
     * @return whether it verified
     * @throws Exception never
     */
    @Benchmark
    public boolean floorJdkEd25519Verify() throws Exception {
        if (jdkVerifier == null) {
            return false;
        }
        jdkVerifier.update(signingInput);
        return jdkVerifier.verify(signature);
    }

    /**
     * Floor: Tink's Ed25519 signature, as Nimbus signs.
     *
     * @return the signature
     * @throws Exception never
     */
    @Benchmark
    public byte[] floorTinkEd25519Sign() throws Exception {
        return tinkSigner == null ? null : tinkSigner.sign(signingInput);
    }

    /**
     * Floor: Tink's Ed25519 verification, as Nimbus verifies.
     *
     * @return whether it verified
     */
    @Benchmark
    public boolean floorTinkEd25519Verify() {
        if (tinkVerifier == null) {
            return false;
        }
        try {
            tinkVerifier.verify(signature, signingInput);
            return true;
        } catch (java.security.GeneralSecurityException e) {
            return false;
        }
    }

    /**
     * mrtr-state: seal the state, bound to user, tool and arguments.
     *
     * @return the token
     */
    @Benchmark
    public String mrtrStateSeal() {
        return sealer.seal(state, Binding.tool("alice", "deploy", ARGUMENTS));
    }

    /**
     * mrtr-state: open the token (every step of section 5, the argument digest included).
     *
     * @return the state
     * @throws Exception never for this token
     */
    @Benchmark
    public JsonNode mrtrStateOpen() throws Exception {
        return sealer.open(token, Binding.tool("alice", "deploy", ARGUMENTS));
    }

    /**
     * Nimbus: mint the same token (the digest given, not computed).
     *
     * @return the token
     * @throws Exception never
     */
    @Benchmark
    public String nimbusMint() throws Exception {
        SignedJWT jwt = new SignedJWT(nimbusHeader, nimbusClaims);
        jwt.sign(nimbusSigner);
        return jwt.serialize();
    }

    /**
     * Nimbus: parse, verify the signature, check iss, sub, aud and exp.
     *
     * @return the claims
     * @throws Exception never for this token
     */
    @Benchmark
    public JWTClaimsSet nimbusVerify() throws Exception {
        SignedJWT jwt = SignedJWT.parse(nimbusToken);
        if (!jwt.verify(nimbusVerifier)) {
            throw new IllegalStateException("bad signature");
        }
        JWTClaimsSet claims = jwt.getJWTClaimsSet();
        nimbusClaimsVerifier.verify(claims, null);
        return claims;
    }
}
