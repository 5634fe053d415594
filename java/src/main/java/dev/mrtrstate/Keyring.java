package dev.mrtrstate;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mrtrstate.keys.Ed25519Key;
import dev.mrtrstate.keys.Key;
import dev.mrtrstate.keys.KeyAlgorithm;
import dev.mrtrstate.keys.KeyFile;
import dev.mrtrstate.keys.KeySource;
import dev.mrtrstate.keys.KeyringException;
import dev.mrtrstate.token.StrictJson;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * An immutable key ring (profile, section 7.3): an ordered list of keys with distinct kids. The first key seals
 * every new token (a signing key, the signed form; an encryption key, the encrypted form); every key opens the
 * tokens of its own form. Rotate with {@link #rotated} and {@link #without}. {@link #toString()} lists the kids
 * only.
 */
public final class Keyring implements KeySource {
    /** The environment variable {@link #fromEnv()} reads. */
    public static final String DEFAULT_VARIABLE = "MRTR_STATE_KEYS";

    private static final Pattern BASE64URL = Pattern.compile("[A-Za-z0-9_-]+");
    private static final Pattern BASE64 = Pattern.compile("[A-Za-z0-9+/]+");
    private static final String KEYGEN_ADVICE = "generate keys with Keyring.generate or `mrtr-state keygen`";

    private final List<Key> keys;
    private final Map<String, Key> byKid;

    private Keyring(List<Key> keys) {
        Key.checkRing(keys);
        this.keys = List.copyOf(keys);
        Map<String, Key> map = new LinkedHashMap<>();
        for (Key key : this.keys) {
            map.put(key.kid(), key);
        }
        this.byKid = Collections.unmodifiableMap(map);
    }

    /**
     * A ring of these keys, the first sealing.
     *
     * @param keys the keys
     * @return the ring
     * @throws KeyringException for no key, two keys with one kid, or an encryption key sharing a secret (D4)
     */
    public static Keyring of(List<Key> keys) {
        return new Keyring(keys);
    }

    /**
     * A ring of these keys, the first sealing.
     *
     * @param keys the keys
     * @return the ring
     */
    public static Keyring of(Key... keys) {
        return new Keyring(List.of(keys));
    }

    /**
     * A ring of one newly generated key.
     *
     * @param alg HS256, EdDSA or A256GCM
     * @return the ring
     */
    public static Keyring generate(KeyAlgorithm alg) {
        return of(Key.generate(alg));
    }

    /**
     * Load a JWKS ({@code {"keys": [...]}}) from its JSON text.
     *
     * @param json the JWKS
     * @return the ring, its first key sealing
     * @throws KeyringException when it is not strict JSON or a key breaks a rule of section 7
     */
    public static Keyring fromJwks(String json) {
        JsonNode jwks = StrictJson.parseDocument(json);
        if (jwks == null) {
            throw new KeyringException("a JWKS must be strict JSON");
        }
        return fromJwks(jwks);
    }

    /**
     * Load a JWKS.
     *
     * @param jwks {@code {"keys": [...]}}
     * @return the ring, its first key sealing
     * @throws KeyringException when a key breaks a rule of section 7
     */
    public static Keyring fromJwks(JsonNode jwks) {
        if (jwks == null || !jwks.isObject() || !jwks.path("keys").isArray()) {
            throw new KeyringException("a JWKS must be an object with a 'keys' array");
        }
        List<Key> keys = new ArrayList<>();
        for (JsonNode member : jwks.get("keys")) {
            keys.add(Key.fromJwk(member));
        }
        return new Keyring(keys);
    }

    /**
     * Load keys from the environment variable {@value #DEFAULT_VARIABLE}; see {@link #fromEnv(String, Map)}.
     *
     * @return the ring
     */
    public static Keyring fromEnv() {
        return fromEnv(DEFAULT_VARIABLE, System.getenv());
    }

    /**
     * Load keys from an environment variable: a JWKS or a single JWK as JSON, or one HS256 secret in base64 or
     * base64url (padding optional) of at least 32 bytes. A secret that is one byte or a pattern of at most 8
     * bytes repeated is refused (profile 7.1). An encryption key comes as a JWK ({@code "alg": "A256GCM"}); a
     * bare secret is always an HS256 key.
     *
     * @param name the variable's name
     * @param environment the environment, e.g. {@code System.getenv()}
     * @return the ring
     * @throws KeyringException when the variable is unset or its keys break a rule; never quoting the value
     */
    public static Keyring fromEnv(String name, Map<String, String> environment) {
        String value = environment.getOrDefault(name, "").strip();
        if (value.isEmpty()) {
            throw new KeyringException("the environment variable " + name + " is not set: set it to a JWKS or an"
                    + " HS256 secret of at least " + Key.MIN_SECRET_BYTES + " bytes; " + KEYGEN_ADVICE);
        }
        return parse(value, "the environment variable " + name);
    }

    /**
     * Load keys from a file holding what {@link #fromEnv(String, Map)} accepts (usually a JWKS), read once with the
     * rules of every key file reader ({@link KeyFile}): a regular file only (a FIFO, a device, a socket or a
     * directory is refused before it is opened, so nothing blocks), and not one anyone may write.
     *
     * @param file the file
     * @return the ring
     * @throws KeyringException when the file cannot be read or its keys break a rule
     */
    public static Keyring fromFile(Path file) {
        return fromFile(file, false);
    }

    /**
     * Load keys from a file as {@link #fromFile(Path)} does.
     *
     * @param file the file
     * @param allowWorldWritable load it even if anyone may write it (any local user could then put in a key of
     *     their own; no deployment needs it)
     * @return the ring
     * @throws KeyringException when the file cannot be read or used, or its keys break a rule (the message names the
     *     file and the rule, never its contents)
     */
    public static Keyring fromFile(Path file, boolean allowWorldWritable) {
        byte[] bytes;
        try {
            bytes = KeyFile.readOnce(file, allowWorldWritable);
        } catch (IOException e) {
            throw new KeyringException("cannot read the key file " + file + " (" + e.getClass().getSimpleName() + ")");
        } catch (KeyringException e) {
            throw new KeyringException("the key file " + file + " cannot be used: " + e.getMessage());
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString().strip();
        } catch (CharacterCodingException e) {
            throw new KeyringException("the key file " + file + " is not UTF-8 text");
        }
        if (text.isEmpty()) {
            throw new KeyringException("the key file " + file + " is empty");
        }
        return parse(text, "the key file " + file);
    }

    private static Keyring parse(String value, String where) {
        if (value.startsWith("{")) {
            JsonNode document = StrictJson.parseDocument(value);
            if (document == null) {
                throw new KeyringException(where + " is not strict JSON");
            }
            if (document.isObject() && document.has("keys")) {
                return fromJwks(document);
            }
            return of(Key.fromJwk(document));
        }
        String text = value.replaceAll("=+$", "");
        byte[] secret;
        if (BASE64URL.matcher(text).matches() && text.length() % 4 != 1) {
            secret = Base64.getUrlDecoder().decode(text);
        } else if (BASE64.matcher(text).matches() && text.length() % 4 != 1) {
            secret = Base64.getDecoder().decode(text);
        } else {
            throw new KeyringException(where + " is neither JSON nor a base64 secret; " + KEYGEN_ADVICE);
        }
        if (secret.length < Key.MIN_SECRET_BYTES) {
            throw new KeyringException(where + " holds a secret of " + secret.length + " bytes; HS256 needs at least "
                    + Key.MIN_SECRET_BYTES + " random bytes: " + KEYGEN_ADVICE);
        }
        return of(Key.hs256(secret, null));
    }

    /** {@return the keys, the sealing key first} */
    public List<Key> keys() {
        return keys;
    }

    @Override
    public Key signingKey() {
        Key first = keys.get(0);
        if (!first.canSeal()) {
            throw new KeyringException("the ring's first key " + first.kid() + " is a public key and cannot seal: "
                    + "this ring only opens tokens");
        }
        return first;
    }

    @Override
    public Key get(String kid) {
        return byKid.get(kid);
    }

    /**
     * The JWKS of the Ed25519 public keys, for verify-only replicas (profile 7.5). Secrets are never published.
     *
     * @return {@code {"keys": [...]}}
     */
    public Map<String, List<Map<String, String>>> publicJwks() {
        List<Map<String, String>> out = new ArrayList<>();
        for (Key key : keys) {
            if (key instanceof Ed25519Key) {
                out.add(key.publicJwk());
            }
        }
        return Map.of("keys", out);
    }

    /**
     * {@link #publicJwks()} as JSON text.
     *
     * @return the JWKS
     */
    public String publicJwksJson() {
        return StrictJson.writeAscii(publicJwks());
    }

    /**
     * The full JWKS, secrets included, for storing the ring. Handle it as a secret.
     *
     * @return the JWKS as JSON text
     */
    public String privateJwksJson() {
        List<Map<String, String>> out = new ArrayList<>();
        for (Key key : keys) {
            out.add(key.privateJwk());
        }
        return StrictJson.writeAscii(Map.of("keys", out));
    }

    /**
     * A new ring with {@code key} first (it seals from now on); the old keys still open.
     *
     * @param key the new key
     * @return the new ring
     */
    public Keyring rotated(Key key) {
        List<Key> next = new ArrayList<>();
        next.add(key);
        for (Key old : keys) {
            if (!old.kid().equals(key.kid())) {
                next.add(old);
            }
        }
        return new Keyring(next);
    }

    /**
     * A new ring without the key {@code kid}; tokens it sealed stop opening ({@code unknown_key}).
     *
     * @param kid the key to drop
     * @return the new ring
     */
    public Keyring without(String kid) {
        List<Key> next = new ArrayList<>(keys);
        next.removeIf(key -> key.kid().equals(kid));
        return new Keyring(next);
    }

    @Override
    public String toString() {
        List<String> kids = new ArrayList<>();
        for (Key key : keys) {
            kids.add(key.algorithm() + ":" + key.kid());
        }
        return "Keyring" + kids;
    }
}
