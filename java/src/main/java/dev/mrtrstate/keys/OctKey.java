package dev.mrtrstate.keys;

import dev.mrtrstate.token.Base64Url;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The one shape of every {@code oct} key, HS256 and A256GCM alike (profile, sections 7.1, 7.4 and 7.6): a secret,
 * an RFC 7638 thumbprint over {@code {"k", "kty"}}, never published, and one weak-secret rule (decision D5).
 * {@link Hs256Key} and {@link A256GcmKey} differ only in what they do with the secret, the lengths they allow and
 * the JWK's {@code alg} and {@code use}.
 */
abstract sealed class OctKey extends Key permits Hs256Key, A256GcmKey {
    private final byte[] secret;
    private final String use;
    private final String what;

    /**
     * Check and hold a secret: its length first, then the weak-secret rule.
     *
     * @param secret the secret bytes, held as given (the public factories copy them)
     * @param kid an explicit kid, already checked, or null for the thumbprint
     * @param lengthProblem why the secret's length does not fit this kind of key, or null when it does
     * @param use the JWK's {@code use}: {@code sig} or {@code enc}
     * @param what what the key is, in messages: "an HS256 secret", ...
     */
    OctKey(byte[] secret, String kid, String lengthProblem, String use, String what) {
        super(kid != null ? kid : octThumbprint(secret));
        if (lengthProblem != null) {
            throw new KeyringException(lengthProblem);
        }
        // Profile 7.1 (D5): one rule for every oct secret, whatever form it came in.
        checkNotRepeated(secret);
        this.secret = secret;
        this.use = use;
        this.what = what;
    }

    /** Always true: whoever holds an {@code oct} secret can mint tokens (sign or encrypt). */
    @Override
    public final boolean canSeal() {
        return true;
    }

    /** The RFC 7638 thumbprint over {@code {"k", "kty"}} (profile, 7.4 and 7.6). */
    @Override
    public final String thumbprint() {
        return octThumbprint(secret);
    }

    /** Refuse: a secret is never published (profile, 7.5). */
    @Override
    public final Map<String, String> publicJwk() {
        throw new KeyringException("key " + kid() + " is " + what + ", which has no public JWK");
    }

    /** The {@code oct} JWK with this key's {@code alg} and {@code use} and the secret in {@code k}. */
    @Override
    public final Map<String, String> privateJwk() {
        Map<String, String> jwk = new LinkedHashMap<>();
        jwk.put("kty", "oct");
        jwk.put("alg", algorithm().jose());
        jwk.put("use", use);
        jwk.put("kid", kid());
        jwk.put("k", Base64Url.encode(secret));
        return jwk;
    }

    /** The secret bytes. Not copied: do not change them. */
    final byte[] secret() {
        return secret;
    }

    private static String octThumbprint(byte[] secret) {
        return thumbprintOf("k", Base64Url.encode(secret), "kty", "oct");
    }
}
