package dev.mrtrstate.bench;

import com.google.crypto.tink.subtle.Ed25519Sign;
import com.google.crypto.tink.subtle.Ed25519Verify;
import dev.mrtrstate.Keyring;
import dev.mrtrstate.StateSealer;
import dev.mrtrstate.binding.Binding;
import dev.mrtrstate.keys.Key;
import dev.mrtrstate.keys.KeyAlgorithm;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.Signature;
import java.security.spec.EdECPoint;
import java.security.spec.EdECPrivateKeySpec;
import java.security.spec.EdECPublicKeySpec;
import java.security.spec.NamedParameterSpec;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.bouncycastle.crypto.params.Ed25519PrivateKeyParameters;
import org.bouncycastle.crypto.params.Ed25519PublicKeyParameters;
import org.bouncycastle.crypto.signers.Ed25519Signer;
import org.bouncycastle.math.ec.rfc8032.Ed25519;
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
 * The Java Ed25519 implementations a server could sign and verify with, over the very bytes an EdDSA
 * {@code seal} signs (the header and claims segments of a token of {@code size} bytes of state): the JDK's
 * {@code Signature("Ed25519")} (SunEC), BouncyCastle's lightweight API (the static
 * {@code org.bouncycastle.math.ec.rfc8032.Ed25519} with the public point decoded once, as the library uses
 * it, and the {@code Ed25519Signer} object), and Tink's {@code subtle.Ed25519Sign}/{@code Ed25519Verify}.
 * Every candidate's signature is checked to verify under the others before anything is timed.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(1)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class Ed25519Benchmark {
    /** The state's size in bytes of compact JSON. */
    @Param({"200", "5779"})
    public int size;

    private byte[] message;
    private byte[] signature;
    private byte[] d;
    private byte[] x;
    private Signature jdkSigner;
    private Signature jdkVerifier;
    private Ed25519.PublicPoint bcPoint;
    private Ed25519Signer bcSigner;
    private Ed25519Signer bcVerifier;
    private Ed25519Sign tinkSigner;
    private Ed25519Verify tinkVerifier;

    /**
     * A key, a token's signing input, and every candidate initialized and cross-checked.
     *
     * @throws Exception never, for a benchmark that can run
     */
    @Setup
    public void setup() throws Exception {
        Keyring ring = Keyring.generate(KeyAlgorithm.EDDSA);
        Key key = ring.keys().get(0);
        StateSealer sealer = StateSealer.builder(ring, "https://tools.example.com")
                .clock(Clock.fixed(Instant.ofEpochSecond(1_767_225_600L), ZoneOffset.UTC)).build();
        String token = sealer.seal(SealOpenBenchmark.makeState(size),
                Binding.tool("alice", "deploy", Map.of("env", "prod", "branch", "release-1.2")));
        message = token.substring(0, token.lastIndexOf('.')).getBytes(StandardCharsets.US_ASCII);
        signature = Base64.getUrlDecoder().decode(token.substring(token.lastIndexOf('.') + 1));
        Base64.Decoder b64 = Base64.getUrlDecoder();
        d = b64.decode(key.privateJwk().get("d"));
        x = b64.decode(key.privateJwk().get("x"));

        KeyFactory factory = KeyFactory.getInstance("Ed25519");
        jdkSigner = Signature.getInstance("Ed25519");
        jdkSigner.initSign(factory.generatePrivate(new EdECPrivateKeySpec(NamedParameterSpec.ED25519, d)));
        byte[] bigEndian = new byte[32];
        for (int i = 0; i < 32; i++) {
            bigEndian[i] = x[31 - i];
        }
        boolean odd = (bigEndian[0] & 0x80) != 0;
        bigEndian[0] &= 0x7f;
        jdkVerifier = Signature.getInstance("Ed25519");
        jdkVerifier.initVerify(factory.generatePublic(new EdECPublicKeySpec(NamedParameterSpec.ED25519,
                new EdECPoint(odd, new BigInteger(1, bigEndian)))));

        bcPoint = Ed25519.validatePublicKeyPartialExport(x, 0);
        bcSigner = new Ed25519Signer();
        bcSigner.init(true, new Ed25519PrivateKeyParameters(d, 0));
        bcVerifier = new Ed25519Signer();
        bcVerifier.init(false, new Ed25519PublicKeyParameters(x, 0));
        tinkSigner = new Ed25519Sign(d);
        tinkVerifier = new Ed25519Verify(x);

        // Ed25519 is deterministic: every signer gives the token's signature, and every verifier takes it.
        for (byte[] produced : new byte[][] {jdkSign(), bcSign(), bcSignerSign(), tinkSign()}) {
            if (!Arrays.equals(produced, signature)) {
                throw new IllegalStateException("a candidate's signature differs from the library's");
            }
        }
        if (!jdkVerify() || !bcVerify() || !bcSignerVerify() || !tinkVerify()) {
            throw new IllegalStateException("a candidate does not verify the library's signature");
        }
    }

    /**
     * The JDK: {@code Signature("Ed25519")} initialized once.
     *
     * @return the signature
     * @throws GeneralSecurityException never
     */
    @Benchmark
    public byte[] jdkSign() throws GeneralSecurityException {
        jdkSigner.update(message);
        return jdkSigner.sign();
    }

    /**
     * The JDK: {@code Signature("Ed25519")} initialized once.
     *
     * @return whether it verified
     * @throws GeneralSecurityException never
     */
    @Benchmark
    public boolean jdkVerify() throws GeneralSecurityException {
        jdkVerifier.update(message);
        return jdkVerifier.verify(signature);
    }

    /**
     * BouncyCastle's static RFC 8032 code, with the public key given (no derivation per call).
     *
     * @return the signature
     */
    @Benchmark
    public byte[] bcSign() {
        byte[] out = new byte[64];
        Ed25519.sign(d, 0, x, 0, message, 0, message.length, out, 0);
        return out;
    }

    /**
     * BouncyCastle's static RFC 8032 code, with the public point decoded once.
     *
     * @return whether it verified
     */
    @Benchmark
    public boolean bcVerify() {
        return Ed25519.verify(signature, 0, bcPoint, message, 0, message.length);
    }

    /**
     * BouncyCastle's {@code Ed25519Signer} object (it buffers the message).
     *
     * @return the signature
     */
    @Benchmark
    public byte[] bcSignerSign() {
        bcSigner.update(message, 0, message.length);
        return bcSigner.generateSignature();
    }

    /**
     * BouncyCastle's {@code Ed25519Signer} object.
     *
     * @return whether it verified
     */
    @Benchmark
    public boolean bcSignerVerify() {
        bcVerifier.update(message, 0, message.length);
        return bcVerifier.verifySignature(signature);
    }

    /**
     * Tink's {@code subtle.Ed25519Sign}.
     *
     * @return the signature
     * @throws GeneralSecurityException never
     */
    @Benchmark
    public byte[] tinkSign() throws GeneralSecurityException {
        return tinkSigner.sign(message);
    }

    /**
     * Tink's {@code subtle.Ed25519Verify}.
     *
     * @return whether it verified
     */
    @Benchmark
    public boolean tinkVerify() {
        try {
            tinkVerifier.verify(signature, message);
            return true;
        } catch (GeneralSecurityException e) {
            return false;
        }
    }
}
