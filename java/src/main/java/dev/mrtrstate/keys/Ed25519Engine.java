package dev.mrtrstate.keys;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Who computes Ed25519 for {@link Ed25519Key}: BouncyCastle's lightweight RFC 8032 code when {@code bcprov}
 * is on the class path (an optional dependency, detected once, when the first Ed25519 key is loaded), the
 * JDK's {@code Signature("Ed25519")} otherwise. Both give the same signatures (Ed25519 is deterministic) and
 * the same verdicts (cofactorless verification, a canonical R and an S below L required); the key checks of
 * section 7.2 are made by {@link Ed25519Point} before either sees a key.
 *
 * <p>The system property {@value #PROPERTY} set to {@code jdk} keeps the JDK's even with BouncyCastle present.
 */
abstract class Ed25519Engine {
    /** The system property that chooses: {@code jdk}, or {@code auto} (the default). */
    static final String PROPERTY = "dev.mrtrstate.ed25519";

    private static final Logger LOG = Logger.getLogger("dev.mrtrstate.keys.ed25519");

    /** The engine every Ed25519 key uses, chosen once. */
    static final Ed25519Engine DEFAULT = choose(System.getProperty(PROPERTY, "auto"));

    /** {@return the implementation's name, as {@link Ed25519Key#implementation()} gives it} */
    abstract String name();

    /**
     * The verifying half of a key whose encoding {@link Ed25519Point#problem} accepted.
     *
     * @throws KeyringException when the engine cannot load it
     */
    abstract Verifier verifier(byte[] x);

    /**
     * The signing half of a private key.
     *
     * @param d the 32-byte private key
     * @param x its public key, as loaded
     * @param verifier {@code x}'s verifier from this engine
     * @throws KeyringException when x is not the public key of d, or d is unusable
     */
    abstract Signer signer(byte[] d, byte[] x, Verifier verifier);

    /** Verifies signatures under one public key; safe to share between threads. */
    interface Verifier {
        /** Whether the 64-byte {@code signature} is valid for {@code message}. */
        boolean verify(byte[] message, byte[] signature);
    }

    /** Signs with one private key; safe to share between threads. */
    interface Signer {
        /** The 64-byte signature of {@code message}. */
        byte[] sign(byte[] message);
    }

    static Ed25519Engine choose(String setting) {
        if (!"jdk".equals(setting) && !"auto".equals(setting)) {
            LOG.warning(() -> PROPERTY + " is neither 'jdk' nor 'auto': choosing as for 'auto'");
        }
        if (!"jdk".equals(setting)) {
            Ed25519Engine bouncyCastle = bouncyCastle();
            if (bouncyCastle != null) {
                LOG.fine(() -> "Ed25519 signs and verifies with BouncyCastle "
                        + BouncyCastleEd25519.version() + " (bcprov is on the class path)");
                return bouncyCastle;
            }
        }
        LOG.fine(() -> "Ed25519 signs and verifies with the JDK's Signature(\"Ed25519\")"
                + ("jdk".equals(setting) ? " (" + PROPERTY + "=jdk)" : " (no usable bcprov on the class path)"));
        return new JdkEd25519();
    }

    /** BouncyCastle's engine when its classes load and give RFC 8032's first test vector, else null. */
    static Ed25519Engine bouncyCastle() {
        try {
            Class.forName("org.bouncycastle.math.ec.rfc8032.Ed25519", false, Ed25519Engine.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return null;
        }
        try {
            Ed25519Engine engine = new BouncyCastleEd25519();
            return engine.passesSelfTest() ? engine : null;
        } catch (LinkageError | RuntimeException e) {
            // An old bcprov without the methods used here: the JDK's, and why, at debug level.
            LOG.log(Level.FINE, "bcprov is on the class path but cannot be used for Ed25519", e);
            return null;
        }
    }

    /** RFC 8032, section 7.1, TEST 1 (the empty message): the signature, and its verification. */
    final boolean passesSelfTest() {
        byte[] d = hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
        byte[] x = hex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
        byte[] expected = hex("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
                + "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
        Verifier verifier = verifier(x);
        byte[] signature = signer(d, x, verifier).sign(new byte[0]);
        return java.util.Arrays.equals(signature, expected) && verifier.verify(new byte[0], signature);
    }

    private static byte[] hex(String text) {
        byte[] out = new byte[text.length() / 2];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) Integer.parseInt(text.substring(2 * i, 2 * i + 2), 16);
        }
        return out;
    }
}
