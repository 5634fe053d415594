package dev.mrtrstate.replay.redis;

import dev.mrtrstate.replay.ReplayStore;
import dev.mrtrstate.replay.ReplayStoreException;
import dev.mrtrstate.token.Base64Url;
import io.lettuce.core.AbstractRedisClient;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SetArgs;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A replay store shared by every replica, kept in Redis with Lettuce: a single Redis, a primary behind Sentinel,
 * or a Redis Cluster. One redemption is one atomic command, the same in every language's store:
 *
 * <pre>SET &lt;prefix&gt;&lt;base64url(sha256(iss "#" jti))&gt; 1 NX PX &lt;retention in ms&gt;</pre>
 *
 * <p>{@code NX} makes the first writer win; {@code PX} makes Redis forget the key once the token can no longer be
 * accepted. The retention is a duration measured by the store's clock (give it the sealer's), never an absolute
 * time measured by Redis's. The hashed key has one length whatever the issuer, and shows no issuer or token id.
 *
 * <p>With {@code waitReplicas > 0} (single Redis and Sentinel), {@code WAIT n ms} follows the {@code SET} on the
 * same connection, and a redemption is accepted only when that many replicas acknowledged it. Any failure
 * (unreachable, timed out, an error reply, too few acknowledgements) is a {@link ReplayStoreException}, which the
 * sealer refuses as {@code store_unavailable}: never an acceptance. Messages name the failure's class and
 * Redis's error code, never the URL, host or password.
 *
 * <p>Commands are rejected while disconnected rather than buffered. A {@code SET} in flight when a connection
 * drops may be re-sent by Lettuce after it reconnects (its at-least-once default); the re-sent command then sees
 * its own key, so the redemption is refused {@code replayed}: that fails closed.
 */
public final class RedisReplayStore implements ReplayStore, AutoCloseable {
    /** The default prefix of the store's keys, as in every language. */
    public static final String DEFAULT_PREFIX = "mrtr-state:jti:";
    /** The default connect and command timeout: 1 second. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(1);

    private final Connection<?> connection;
    private final String prefix;
    private final Clock clock;
    private final int waitReplicas;
    private final long waitTimeoutMs;

    private RedisReplayStore(Connection<?> connection, Options options) {
        this.connection = connection;
        this.prefix = options.prefix;
        this.clock = options.clock;
        this.waitReplicas = options.waitReplicas;
        this.waitTimeoutMs = options.waitTimeout.toMillis();
    }

    /** The options every deployment shares, each with its default. */
    public static final class Options {
        private String prefix = DEFAULT_PREFIX;
        private Clock clock = Clock.systemUTC();
        private Duration timeout = DEFAULT_TIMEOUT;
        private int waitReplicas;
        private Duration waitTimeout = Duration.ofMillis(500);

        /** The defaults: prefix {@value #DEFAULT_PREFIX}, the system clock, 1 s timeouts, no WAIT. */
        public Options() {}

        /**
         * The prefix of every key (one per application sharing a Redis).
         *
         * @param prefix the prefix
         * @return these options
         */
        public Options prefix(String prefix) {
            this.prefix = Objects.requireNonNull(prefix, "prefix");
            return this;
        }

        /**
         * The clock that measures the retention: the sealer's.
         *
         * @param clock the clock
         * @return these options
         */
        public Options clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * The connect and command timeout.
         *
         * @param timeout a positive duration
         * @return these options
         */
        public Options timeout(Duration timeout) {
            if (timeout.isZero() || timeout.isNegative()) {
                throw new IllegalArgumentException("timeout must be positive");
            }
            this.timeout = timeout;
            return this;
        }

        /**
         * Accept a redemption only once this many replicas acknowledged it ({@code WAIT}). Default 0.
         *
         * @param replicas at least 0
         * @param timeout how long WAIT waits
         * @return these options
         */
        public Options waitReplicas(int replicas, Duration timeout) {
            if (replicas < 0) {
                throw new IllegalArgumentException("waitReplicas must be at least 0");
            }
            this.waitReplicas = replicas;
            this.waitTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }
    }

    /**
     * A store on a single Redis ({@code redis://}, {@code rediss://} or {@code redis-socket://}); it connects on
     * the first redemption.
     *
     * @param url the Redis URL (it may hold a password: it is never shown)
     * @param options the options
     * @return the store
     */
    public static RedisReplayStore fromUrl(String url, Options options) {
        return standalone(parseUrl(url, "redis://, rediss:// or redis-socket://"), options);
    }

    /**
     * A store on the primary that Sentinel names {@code service}.
     *
     * @param sentinels the Sentinels, each {@code host:port}
     * @param service the monitored primary's name
     * @param password the primary's password, or null
     * @param options the options
     * @return the store
     */
    public static RedisReplayStore fromSentinel(List<String> sentinels, String service, char[] password,
            Options options) {
        if (sentinels.isEmpty()) {
            throw new IllegalArgumentException("give at least one Sentinel as host:port");
        }
        RedisURI.Builder builder = null;
        for (String sentinel : sentinels) {
            int colon = sentinel.lastIndexOf(':');
            if (colon < 1) {
                throw new IllegalArgumentException("a Sentinel is host:port");
            }
            String host = sentinel.substring(0, colon);
            int port = Integer.parseInt(sentinel.substring(colon + 1));
            builder = builder == null ? RedisURI.Builder.sentinel(host, port, service)
                    : builder.withSentinel(host, port);
        }
        if (password != null) {
            builder.withPassword(password);
        }
        return standalone(builder.build(), options);
    }

    /**
     * A store on the Redis Cluster one of whose nodes is at {@code url}; the client learns the others from it.
     *
     * @param url a node's URL
     * @param options the options ({@code waitReplicas} is not offered on a cluster)
     * @return the store
     */
    public static RedisReplayStore fromCluster(String url, Options options) {
        if (options.waitReplicas > 0) {
            throw new IllegalArgumentException("waitReplicas is offered for a single Redis and Sentinel only");
        }
        RedisURI uri = parseUrl(url, "redis:// or rediss://");
        uri.setTimeout(options.timeout);
        RedisClusterClient client = RedisClusterClient.create(uri);
        client.setOptions(ClusterClientOptions.builder(clientOptions(options)).build());
        return new RedisReplayStore(new Connection<>(client, client::connect, StatefulRedisClusterConnection::sync),
                options);
    }

    /** The URL parsed; a failure names the schemes offered, never the URL (it may hold a password). */
    private static RedisURI parseUrl(String url, String schemes) {
        try {
            return RedisURI.create(url);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("not a Redis URL (" + schemes + ")");
        }
    }

    private static RedisReplayStore standalone(RedisURI uri, Options options) {
        uri.setTimeout(options.timeout);
        RedisClient client = RedisClient.create(uri);
        client.setOptions(clientOptions(options));
        return new RedisReplayStore(new Connection<>(client, client::connect, StatefulRedisConnection::sync),
                options);
    }

    /** What every deployment's client shares: the connect timeout, and commands rejected while disconnected. */
    private static ClientOptions clientOptions(Options options) {
        return ClientOptions.builder()
                .socketOptions(SocketOptions.builder().connectTimeout(options.timeout).build())
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .build();
    }

    /**
     * The store's client and its one connection, made on first use so a store can be built before Redis is up: a
     * single Redis's (or Sentinel's primary's) or a cluster's, whose commands (SET, and WAIT off a cluster) are
     * the same.
     */
    private static final class Connection<C extends StatefulConnection<String, String>> {
        private final AbstractRedisClient client;
        private final Supplier<C> connect;
        private final Function<C, RedisClusterCommands<String, String>> commandsOf;
        private C value;

        Connection(AbstractRedisClient client, Supplier<C> connect,
                Function<C, RedisClusterCommands<String, String>> commandsOf) {
            this.client = client;
            this.connect = connect;
            this.commandsOf = commandsOf;
        }

        synchronized RedisClusterCommands<String, String> commands() {
            if (value == null) {
                value = connect.get();
            }
            return commandsOf.apply(value);
        }

        synchronized void close() {
            if (value != null) {
                value.close();
                value = null;
            }
            client.shutdown();
        }
    }

    /**
     * The Redis key of a store key: the prefix and base64url(SHA-256(key)), as every language's store writes it.
     *
     * @param key {@code iss + "#" + jti}
     * @return the Redis key
     */
    public String redisKey(String key) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
            return prefix + Base64Url.encode(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    @Override
    public boolean redeem(String key, long expiresAt) throws ReplayStoreException {
        long ms = expiresAt * 1000L - clock.millis();
        if (ms < 1) {
            throw new ReplayStoreException("the redemption's retention has already ended by the store's clock;"
                    + " give the store the sealer's clock");
        }
        String reply;
        long acknowledged = 0;
        try {
            RedisClusterCommands<String, String> commands = connection.commands();
            reply = commands.set(redisKey(key), "1", SetArgs.Builder.nx().px(ms));
            // Never on a cluster: fromCluster refuses waitReplicas.
            if (reply != null && waitReplicas > 0) {
                acknowledged = commands.waitForReplication(waitReplicas, waitTimeoutMs);
            }
        } catch (RedisCommandExecutionException e) {
            String message = e.getMessage() == null ? "" : e.getMessage();
            String code = message.matches("[A-Z]{2,}( .*)?") ? " " + message.split(" ", 2)[0] : "";
            throw new ReplayStoreException("Redis refused the redemption (" + e.getClass().getSimpleName() + code
                    + ")");
        } catch (RuntimeException e) {
            throw new ReplayStoreException("Redis could not record the redemption (" + e.getClass().getSimpleName()
                    + ")");
        }
        if (reply == null) {
            return false;
        }
        if (!"OK".equals(reply)) {
            throw new ReplayStoreException("Redis answered SET NX with an unexpected reply");
        }
        if (acknowledged < waitReplicas) {
            throw new ReplayStoreException("Redis did not confirm the redemption on " + waitReplicas
                    + " replica(s) in time (" + acknowledged + " acknowledged)");
        }
        return true;
    }

    /** Close the connection and the client. */
    @Override
    public void close() {
        try {
            connection.close();
        } catch (RuntimeException e) {
            // Closing is best effort; nothing to report that the caller can act on.
        }
    }

    @Override
    public String toString() {
        return "RedisReplayStore(prefix=" + prefix + (waitReplicas > 0 ? ", waitReplicas=" + waitReplicas : "") + ")";
    }
}
