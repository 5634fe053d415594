import com.nimbusds.jose.*;
import com.nimbusds.jose.crypto.*;
import com.nimbusds.jose.jwk.*;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jose.util.JSONObjectUtils;
import com.nimbusds.jwt.*;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.*;
import org.erdtman.jcs.JsonCanonicalizer;

/**
 * A baseline verifier of the mrtr-state profile (spec/profile.md, 12.6) on nimbus-jose-jwt, configured as a
 * typical server would, plus what docs/interop.md says to add: the size cap, the key looked up by kid with the
 * algorithm pinned to it, canonical base64url (Nimbus decodes a ciphertext of a length that is 1 modulo 4), typ
 * compared exactly (Nimbus ignores case), the clock skew set to the leeway (Nimbus defaults to 60 s) and the
 * argument digest (RFC 8785). Speaks the conformance protocol on stdin/stdout. NOT
 * strict: Nimbus reads JSON leniently and accepts re-encodings and extra claims, which only a key holder makes.
 */
public final class Baseline {
    static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    static final Map<String, String> METHODS = Map.of("tool", "tools/call", "prompt", "prompts/get", "resource", "resources/read");

    static String digest(Object args) throws Exception {   // null: unbindable (an integer beyond 2^53 - 1)
        if (!(args instanceof Map) || !bindable(args)) return null;
        byte[] text = new JsonCanonicalizer(JSONObjectUtils.toJSONString(cast(args))).getEncodedUTF8();
        return B64.encodeToString(MessageDigest.getInstance("SHA-256").digest(text));
    }

    static boolean bindable(Object v) {
        if (v instanceof Number n) return Math.abs(n.doubleValue()) <= 9007199254740991.0;
        if (v instanceof Map<?, ?> m) return m.values().stream().allMatch(Baseline::bindable);
        return !(v instanceof List<?> l) || l.stream().allMatch(Baseline::bindable);
    }

    @SuppressWarnings("unchecked") static Map<String, Object> cast(Object o) { return (Map<String, Object>) o; }

    static Map<String, Object> refuse(String reason) { return new LinkedHashMap<>(Map.of("valid", false, "reason", reason)); }

    static Map<String, Object> verify(Map<String, Object> r) throws Exception {
        String token = (String) r.get("token");
        if (token.getBytes(StandardCharsets.UTF_8).length > ((Number) r.getOrDefault("max_token_bytes", 8192)).longValue()) return refuse("too_large");
        for (String segment : token.split("\\.", -1)) { // Nimbus's decoder is lax: only canonical base64url
            try { if (!B64.encodeToString(Base64.getUrlDecoder().decode(segment)).equals(segment)) return refuse("malformed"); }
            catch (IllegalArgumentException e) { return refuse("malformed"); }
        }
        JWT jwt;
        try { jwt = JWTParser.parse(token); } catch (java.text.ParseException e) { return refuse("malformed"); }
        Header header = jwt.getHeader();
        if (header.getType() == null || !"mrtr-state+jwt".equals(header.getType().getType())) return refuse("wrong_type");
        String kid = header instanceof JWSHeader h ? h.getKeyID() : header instanceof JWEHeader h ? h.getKeyID() : null;
        JWK jwk = JWKSet.parse(cast(r.get("keys"))).getKeyByKeyId(kid);
        if (jwk == null) return refuse("unknown_key");
        boolean aes = "A256GCM".equals(String.valueOf(jwk.getAlgorithm()));
        String alg = aes ? "dir" : jwk instanceof OctetSequenceKey ? "HS256" : "EdDSA";
        if (!alg.equals(header.getAlgorithm().getName())) return refuse("algorithm_mismatch");
        if (jwt instanceof SignedJWT s && !s.verify(jwk instanceof OctetSequenceKey k ? new MACVerifier(k) : new Ed25519Verifier(jwk.toOctetKeyPair().toPublicJWK()))) return refuse("bad_signature");
        if (jwt instanceof EncryptedJWT e) {
            if (!aes || !EncryptionMethod.A256GCM.equals(e.getHeader().getEncryptionMethod())) return refuse("algorithm_mismatch");
            try { e.decrypt(new DirectDecrypter(jwk.toOctetSequenceKey().toSecretKey("AES"))); } catch (JOSEException x) { return refuse("bad_signature"); }
        }
        if (!(jwt instanceof SignedJWT) && !(jwt instanceof EncryptedJWT)) return refuse("malformed");
        String target = METHODS.keySet().stream().filter(r::containsKey).findFirst().orElse("tool");
        Date now = new Date(((Number) r.get("now")).longValue() * 1000);
        var verifier = new DefaultJWTClaimsVerifier<SecurityContext>(METHODS.get(target) + ":" + r.get(target),
                new JWTClaimsSet.Builder().issuer((String) r.get("issuer")).subject((String) r.get("user")).build(), Set.of("exp")) {
            @Override protected Date currentTime() { return now; }
        };
        verifier.setMaxClockSkew(((Number) r.getOrDefault("leeway", 0)).intValue());
        JWTClaimsSet claims = jwt.getJWTClaimsSet();
        try { verifier.verify(claims, null); } catch (Exception x) { return refuse("expired"); } // any code: baseline
        Object bound = claims.getClaim("args_sha256");
        boolean required = Boolean.TRUE.equals(r.get("require_arguments")) && !target.equals("resource");
        if ((bound != null || required) && !Objects.equals(bound, digest(r.getOrDefault("arguments", Map.of())))) return refuse("wrong_request");
        Map<String, Object> ok = new LinkedHashMap<>(Map.of("valid", true));
        ok.put("state", claims.getClaim("state"));
        return ok;
    }

    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            Map<String, Object> reply = new LinkedHashMap<>();
            try {
                Map<String, Object> r = JSONObjectUtils.parse(line);
                reply.put("id", r.get("id"));
                if ("verify".equals(r.get("op"))) reply.putAll(verify(r));
                else if ("digest".equals(r.get("op"))) { String d = digest(r.get("arguments")); reply.put(d == null ? "unbindable" : "digest", d == null ? true : d); }
                else reply.put("unsupported", true);
            } catch (Exception e) { reply.putIfAbsent("valid", false); reply.putIfAbsent("reason", "malformed"); }
            out.println(JSONObjectUtils.toJSONString(reply));
        }
    }
}
