package dev.mrtrstate.keys;

import com.fasterxml.jackson.databind.JsonNode;
import dev.mrtrstate.token.StrictJson;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Public keys read from a published JWKS (profile, section 7.5): the key source of a verify-only replica, which
 * follows the minting replicas' rotations without a redeploy.
 *
 * <ul>
 *   <li>It fetches the JWKS when loaded (a failure then is a {@link KeyringException}: a replica should not start
 *       without keys), again every {@code refreshInterval} (default 300 s) in a daemon thread, and when a token
 *       names a {@code kid} it does not hold, at most once per {@code cooldown} (default 30 s), so that tokens
 *       with random kids cannot make it fetch.</li>
 *   <li>Every fetch is bounded: {@code https://} only ({@code http://} on a loopback address), no redirects, no
 *       credentials in the URL, at most {@code maxBytes} (default 64 KiB) within {@code timeout} (default
 *       5 s).</li>
 *   <li>Every key goes through {@link Key#fromJwk(JsonNode)} and {@link Key#checkRing}, and must be an Ed25519
 *       public key: a JWKS holding a private key or a secret is refused whole.</li>
 *   <li>A failed fetch keeps the last good keys and is logged (the URL and the reason, never key material).</li>
 * </ul>
 */
public final class RemoteJwks implements KeySource, AutoCloseable {
    private static final Logger LOG = Logger.getLogger(RemoteJwks.class.getName());

    /** The options of a remote JWKS, each with its default. */
    public static final class Options {
        private Duration refreshInterval = Duration.ofSeconds(300);
        private Duration cooldown = Duration.ofSeconds(30);
        private Duration timeout = Duration.ofSeconds(5);
        private int maxBytes = 64 * 1024;
        private Clock clock = Clock.systemUTC();
        private dev.mrtrstate.metrics.StateMetrics metrics;

        /** The defaults: refresh every 300 s, a 30 s cooldown, 5 s timeout, 64 KiB, the system clock, no metrics. */
        public Options() {}

        /**
         * How often the keys are fetched again in the background; zero for never.
         *
         * @param interval the interval
         * @return these options
         */
        public Options refreshInterval(Duration interval) {
            this.refreshInterval = Objects.requireNonNull(interval, "interval");
            return this;
        }

        /**
         * The least time between two fetches for unknown kids.
         *
         * @param cooldown the cooldown
         * @return these options
         */
        public Options cooldown(Duration cooldown) {
            this.cooldown = Objects.requireNonNull(cooldown, "cooldown");
            return this;
        }

        /**
         * The longest a fetch takes, connection and body included.
         *
         * @param timeout a positive duration
         * @return these options
         */
        public Options timeout(Duration timeout) {
            this.timeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /**
         * The largest JWKS accepted.
         *
         * @param bytes at least 1
         * @return these options
         */
        public Options maxBytes(int bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("maxBytes must be at least 1");
            }
            this.maxBytes = bytes;
            return this;
        }

        /**
         * The clock of the cooldown.
         *
         * @param clock the clock
         * @return these options
         */
        public Options clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Where each fetch is counted: a {@code key_refresh} event, {@code source} {@code remote_jwks},
         * {@code outcome} {@code updated}, {@code unchanged} or {@code failed} ({@code spec/metrics.json}).
         *
         * @param metrics the metrics, or null for none (the default)
         * @return these options
         */
        public Options metrics(dev.mrtrstate.metrics.StateMetrics metrics) {
            this.metrics = metrics;
            return this;
        }
    }

    private final URI url;
    private final Options options;
    private final HttpClient client;
    private final ScheduledExecutorService refresher;
    private volatile Map<String, Key> keys;
    private volatile String lastError;
    private long lastUnknownKeyFetch = Long.MIN_VALUE;

    private RemoteJwks(URI url, Options options) {
        this.url = url;
        this.options = options;
        this.client = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER)
                .connectTimeout(options.timeout).build();
        try {
            this.keys = fetch();
        } catch (KeyringException e) {
            count("failed");
            throw e;
        }
        count("updated");
        if (options.refreshInterval.isZero()) {
            this.refresher = null;
        } else {
            this.refresher = Executors.newSingleThreadScheduledExecutor(runnable -> {
                Thread thread = new Thread(runnable, "mrtr-state-remote-jwks");
                thread.setDaemon(true);
                return thread;
            });
            long every = options.refreshInterval.toMillis();
            refresher.scheduleWithFixedDelay(this::refresh, every, every, TimeUnit.MILLISECONDS);
        }
    }

    /**
     * Load the JWKS at {@code url} now.
     *
     * @param url {@code https://...} ({@code http://} only on a loopback address), without credentials
     * @param options the options
     * @return the key source
     * @throws KeyringException when the URL is not allowed or the first fetch fails
     */
    public static RemoteJwks load(String url, Options options) {
        return new RemoteJwks(checkUrl(url), options);
    }

    static URI checkUrl(String text) {
        URI uri;
        try {
            uri = new URI(text);
        } catch (java.net.URISyntaxException e) {
            throw new KeyringException("the JWKS URL is not a URL");
        }
        if (uri.getRawUserInfo() != null) {
            throw new KeyringException("the JWKS URL must not hold credentials");
        }
        String host = uri.getHost();
        if (host == null) {
            throw new KeyringException("the JWKS URL has no host");
        }
        if ("https".equalsIgnoreCase(uri.getScheme())) {
            return uri;
        }
        if ("http".equalsIgnoreCase(uri.getScheme()) && isLoopback(host)) {
            return uri;
        }
        throw new KeyringException("the JWKS URL must be https:// (http:// only on a loopback address)");
    }

    private static boolean isLoopback(String host) {
        String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        if (!bare.matches("[0-9.]+|[0-9a-fA-F:]+")) {
            return false; // a name: never resolved here, so "localhost" is not trusted to be loopback
        }
        try {
            return InetAddress.getByName(bare).isLoopbackAddress();
        } catch (IOException e) {
            return false;
        }
    }

    /** One bounded fetch, parsed and checked; KeyringException on any failure. */
    private Map<String, Key> fetch() {
        HttpRequest request = HttpRequest.newBuilder(url).timeout(options.timeout)
                .header("Accept", "application/jwk-set+json, application/json;q=0.9").GET().build();
        long deadline = System.nanoTime() + options.timeout.toNanos();
        byte[] body;
        try {
            HttpResponse<InputStream> response = client.sendAsync(request, HttpResponse.BodyHandlers.ofInputStream())
                    .get(options.timeout.toNanos(), TimeUnit.NANOSECONDS);
            try (InputStream in = response.body()) {
                if (response.statusCode() != 200) {
                    throw new KeyringException("the JWKS URL answered HTTP " + response.statusCode());
                }
                CompletableFuture<byte[]> read = CompletableFuture.supplyAsync(() -> {
                    try {
                        return in.readNBytes(options.maxBytes + 1);
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                body = read.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
        } catch (TimeoutException e) {
            throw new KeyringException("fetching the JWKS took longer than " + options.timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KeyringException("fetching the JWKS was interrupted");
        } catch (java.util.concurrent.ExecutionException | IOException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new KeyringException("cannot fetch the JWKS (" + cause.getClass().getSimpleName() + ")");
        }
        if (body.length > options.maxBytes) {
            throw new KeyringException("the JWKS is larger than " + options.maxBytes + " bytes");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(body)).toString();
        } catch (CharacterCodingException e) {
            throw new KeyringException("the JWKS is not UTF-8");
        }
        JsonNode jwks = StrictJson.parseDocument(text);
        if (jwks == null || !jwks.isObject() || !jwks.path("keys").isArray()) {
            throw new KeyringException("the JWKS is not a strict JSON object with a 'keys' array");
        }
        List<Key> loaded = new ArrayList<>();
        for (JsonNode member : jwks.get("keys")) {
            Key key = Key.fromJwk(member);
            if (!(key instanceof Ed25519Key ed) || ed.isPrivate()) {
                throw new KeyringException("a published JWKS holds Ed25519 public keys only; key " + key.kid()
                        + " is " + (key instanceof Ed25519Key ? "a private key" : "a secret"));
            }
            loaded.add(key);
        }
        Key.checkRing(loaded);
        Map<String, Key> byKid = new LinkedHashMap<>();
        for (Key key : loaded) {
            byKid.put(key.kid(), key);
        }
        return Collections.unmodifiableMap(byKid);
    }

    /**
     * Fetch the keys now; on failure keep the last good ones.
     *
     * @return true when the fetch succeeded
     */
    public boolean refresh() {
        try {
            Map<String, Key> fetched = fetch();
            boolean changed = !publicJwks(fetched).equals(publicJwks(keys));
            keys = fetched;
            lastError = null;
            count(changed ? "updated" : "unchanged");
            return true;
        } catch (KeyringException e) {
            lastError = e.getMessage();
            count("failed");
            LOG.log(Level.WARNING, "mrtr-state: keeping the last good keys of {0}: {1}",
                    new Object[] {url, e.getMessage()});
            return false;
        }
    }

    private static Map<String, Map<String, String>> publicJwks(Map<String, Key> byKid) {
        Map<String, Map<String, String>> out = new java.util.HashMap<>();
        byKid.forEach((kid, key) -> out.put(kid, key.publicJwk()));
        return out;
    }

    private void count(String outcome) {
        dev.mrtrstate.metrics.StateMetrics.record(options.metrics, "key_refresh", "source", "remote_jwks", "outcome",
                outcome);
    }

    @Override
    public boolean refreshForUnknownKey() {
        long now = options.clock.millis();
        synchronized (this) {
            if (lastUnknownKeyFetch != Long.MIN_VALUE && now - lastUnknownKeyFetch < options.cooldown.toMillis()) {
                return false;
            }
            lastUnknownKeyFetch = now;
        }
        return refresh();
    }

    /** A verify-only source never seals. */
    @Override
    public Key signingKey() {
        throw new KeyringException("a remote JWKS holds public keys only: this replica opens tokens, it cannot seal");
    }

    @Override
    public Key get(String kid) {
        return keys.get(kid);
    }

    /** {@return the keys held now} */
    public List<Key> keys() {
        return List.copyOf(keys.values());
    }

    /** {@return why the last fetch failed, or null after a good one} */
    public String lastError() {
        return lastError;
    }

    /** Stop the background refresh. */
    @Override
    public void close() {
        if (refresher != null) {
            refresher.shutdownNow();
        }
    }

    @Override
    public String toString() {
        return "RemoteJwks(" + url + ", kids=" + keys.keySet() + ")";
    }
}
