package dev.mrtrstate.keys;

/** The algorithm of a key: the only one a token naming it may use (profile, sections 3.1, 3.6 and 7). */
public enum KeyAlgorithm {
    /** HMAC with SHA-256 over an {@code oct} secret of at least 32 bytes. */
    HS256("HS256"),
    /** Ed25519 signatures ({@code OKP}, {@code crv Ed25519}). */
    EDDSA("EdDSA"),
    /** The encrypted form: {@code dir} with AES-256-GCM under a 32-byte {@code oct} key. */
    A256GCM("A256GCM");

    private final String jose;

    KeyAlgorithm(String jose) {
        this.jose = jose;
    }

    /** {@return the JOSE name: {@code HS256}, {@code EdDSA} or {@code A256GCM}} */
    public String jose() {
        return jose;
    }

    /**
     * The algorithm of a JOSE name.
     *
     * @param name {@code HS256}, {@code EdDSA} or {@code A256GCM}
     * @return the algorithm
     * @throws KeyringException for any other name
     */
    public static KeyAlgorithm ofJose(String name) {
        for (KeyAlgorithm alg : values()) {
            if (alg.jose.equals(name)) {
                return alg;
            }
        }
        throw new KeyringException("unsupported algorithm; the profile allows HS256, EdDSA and A256GCM");
    }

    @Override
    public String toString() {
        return jose;
    }
}
