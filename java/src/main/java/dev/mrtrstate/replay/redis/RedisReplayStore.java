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
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisClusterCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

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
 * <p>With {@code waitReplicas > 0}, {@code WAIT n ms} follows the {@code SET} on the same connection (on a cluster,
 * the connection to the primary of the key's slot), and a redemption is accepted only when that many replicas
 * acknowledged it. Any failure (unreachable, timed out, an error reply, too few acknowledgements) is a
 * {@link ReplayStoreException}, which the sealer refuses as {@code store_unavailable}: never an acceptance. Messages
 * name the failure's class and Redis's error code, never the URL, host or password.
 *
 * <p><b>At most once.</b> A {@code SET} whose answer did not arrive is never sent again: commands are rejected while
 * disconnected rather than buffered, a command in flight when its connection drops fails (Lettuce's
 * {@code replayFilter} keeps it out of the queue it replays after reconnecting), and a timed-out command is cancelled.
 * Each is {@code store_unavailable}. (A re-sent {@code SET} that reached Redis the first time would see its own key
 * and refuse a valid first redemption as {@code replayed}.)
 *
 * <p><b>Failover.</b> A cluster store refreshes its map of slots to nodes when a redemption fails for want of a
 * connection, when a reconnect to a node fails, on a {@code MOVED} or {@code ASK} reply, on an uncovered slot or
 * unknown node (at most once a second), and every
 * {@link Options#topologyRefreshPeriod} (default 10 s), so it follows a replica promoted after its primary died
 * without waiting for the dead node's return. A Sentinel store asks Sentinel for the primary on every reconnect.
 *
 * <p><b>Connecting.</b> Call {@link #connect()} when the server starts: it connects within
 * {@link Options#connectTimeout} (default 10 s, separate from the 1 s command timeout) and logs that it did, or
 * throws and logs why not. A store never connected connects on its first redemption. An outage (a redemption the
 * store could not record) is logged once, with its cause, when it begins, and once when Redis answers again; never
 * with a token, a key or the URL. Logged through {@code java.util.logging}, logger {@code dev.mrtrstate.replay.redis}.
 */
public final class RedisReplayStore implements ReplayStore, AutoCloseable {
    /** The default prefix of the store's keys, as in every language. */
    public static final String DEFAULT_PREFIX = "mrtr-state:jti:";
    /** The default command timeout: 1 second. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(1);
    /** The default connect timeout: 10 seconds (a cold JVM's first connection may take more than a second). */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /** The default period of a cluster store's topology refresh: 10 seconds. */
    public static final Duration DEFAULT_TOPOLOGY_REFRESH_PERIOD = Duration.ofSeconds(10);
    /** The fewest time between two topology refreshes that failures trigger on a cluster: 1 second. */
    public static final Duration ADAPTIVE_REFRESH_LIMIT = Duration.ofSeconds(1);

    private static final Logger LOG = Logger.getLogger("dev.mrtrstate.replay.redis");

    private final Connection<?> connection;
    private final String prefix;
    private final Clock clock;
    private final int waitReplicas;
    private final long waitTimeoutMs;
    private final String deployment;
    /** When the current outage began ({@link System#nanoTime()}), or {@code Long.MIN_VALUE} when there is none. */
    private final AtomicLong outageSince = new AtomicLong(Long.MIN_VALUE);

    private RedisReplayStore(Connection<?> connection, Options options, String deployment) {
        this.connection = connection;
        this.deployment = deployment;
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
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration topologyRefreshPeriod = DEFAULT_TOPOLOGY_REFRESH_PERIOD;
        private int waitReplicas;
        private Duration waitTimeout = Duration.ofMillis(500);

        /**
         * The defaults: prefix {@value #DEFAULT_PREFIX}, the system clock, a 1 s command timeout, a 10 s connect
         * timeout, a cluster topology refresh every 10 s, no WAIT.
         */
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
         * The command timeout: how long a redemption waits for Redis's answer (WAIT has its own). Default 1 s.
         *
         * @param timeout a positive duration
         * @return these options
         */
        public Options timeout(Duration timeout) {
            this.timeout = positive(timeout, "timeout");
            return this;
        }

        /**
         * The connect timeout: how long making a connection (and, on a cluster, each node's during a topology
         * refresh) may take. Default 10 s.
         *
         * @param timeout a positive duration
         * @return these options
         */
        public Options connectTimeout(Duration timeout) {
            this.connectTimeout = positive(timeout, "connectTimeout");
            return this;
        }

        /**
         * How often a cluster store relearns the cluster's map of slots to nodes even when nothing failed. Default
         * 10 s. (Failures trigger a refresh at once, at most once per {@link #ADAPTIVE_REFRESH_LIMIT}.)
         *
         * @param period a positive duration
         * @return these options
         */
        public Options topologyRefreshPeriod(Duration period) {
            this.topologyRefreshPeriod = positive(period, "topologyRefreshPeriod");
            return this;
        }

        private static Duration positive(Duration value, String name) {
            Objects.requireNonNull(value, name);
            if (value.isZero() || value.isNegative()) {
                throw new IllegalArgumentException(name + " must be positive");
            }
            return value;
        }

        /**
         * Accept a redemption only once this many replicas acknowledged it ({@code WAIT}), on every deployment.
         * Default 0.
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
     * A store on a single Redis ({@code redis://}, {@code rediss://} or {@code redis-socket://}); call
     * {@link #connect()} to connect now, else it connects on the first redemption.
     *
     * @param url the Redis URL (it may hold a password: it is never shown)
     * @param options the options
     * @return the store
     */
    public static RedisReplayStore fromUrl(String url, Options options) {
        return standalone(parseUrl(url, "redis://, rediss:// or redis-socket://"), options, "single Redis");
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
        return standalone(builder.build(), options, "Sentinel");
    }

    /**
     * A store on the Redis Cluster one of whose nodes is at {@code url}; the client learns the others from it.
     *
     * @param url a node's URL
     * @param options the options
     * @return the store
     */
    public static RedisReplayStore fromCluster(String url, Options options) {
        RedisURI uri = parseUrl(url, "redis:// or rediss://");
        // The URI's timeout bounds the handshake and the cluster's discovery; commands get theirs once connected.
        uri.setTimeout(options.connectTimeout);
        RedisClusterClient client = RedisClusterClient.create(uri);
        ClusterTopologyRefreshOptions refresh = ClusterTopologyRefreshOptions.builder()
                .enableAllAdaptiveRefreshTriggers()
                .adaptiveRefreshTriggersTimeout(ADAPTIVE_REFRESH_LIMIT)
                // A reconnect that fails once already says the node may be gone: relearn the map.
                .refreshTriggersReconnectAttempts(1)
                .enablePeriodicRefresh(options.topologyRefreshPeriod)
                .build();
        client.setOptions(ClusterClientOptions.builder(clientOptions(options)).topologyRefreshOptions(refresh).build());
        Duration commandTimeout = commandTimeout(options);
        Connection<StatefulRedisClusterConnection<String, String>> connection = new Connection<>(client,
                client::connect, StatefulRedisClusterConnection::sync,
                (c, redisKey) -> nodeCommands(c, redisKey, commandTimeout), commandTimeout);
        connection.onConnectionError = client::refreshPartitionsAsync;
        return new RedisReplayStore(connection, options, "Redis Cluster");
    }

    /** The commands of the connection to the primary that holds {@code redisKey}'s slot now. */
    private static RedisClusterCommands<String, String> nodeCommands(StatefulRedisClusterConnection<String, String> c,
            String redisKey, Duration commandTimeout) {
        RedisClusterNode primary = c.getPartitions().getMasterBySlot(SlotHash.getSlot(redisKey));
        if (primary == null) {
            throw new IllegalStateException("no primary holds the key's slot");
        }
        // By host and port: the connection the cluster client routes that slot's commands through.
        StatefulRedisConnection<String, String> node = c.getConnection(primary.getUri().getHost(),
                primary.getUri().getPort());
        node.setTimeout(commandTimeout);
        return node.sync();
    }

    /** How long one redemption waits for Redis: the command timeout, and WAIT's own when it follows the SET. */
    private static Duration commandTimeout(Options options) {
        return options.waitReplicas > 0 ? options.timeout.plus(options.waitTimeout) : options.timeout;
    }

    /** The URL parsed; a failure names the schemes offered, never the URL (it may hold a password). */
    private static RedisURI parseUrl(String url, String schemes) {
        try {
            return RedisURI.create(url);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("not a Redis URL (" + schemes + ")");
        }
    }

    private static RedisReplayStore standalone(RedisURI uri, Options options, String deployment) {
        // The URI's timeout bounds the handshake and the cluster's discovery; commands get theirs once connected.
        uri.setTimeout(options.connectTimeout);
        RedisClient client = RedisClient.create(uri);
        client.setOptions(clientOptions(options));
        return new RedisReplayStore(new Connection<>(client, client::connect, StatefulRedisConnection::sync,
                (c, redisKey) -> c.sync(), commandTimeout(options)), options, deployment);
    }

    /**
     * What every deployment's client shares: the connect timeout, and at most once: commands rejected while
     * disconnected, in-flight commands failed (never replayed) when their connection drops.
     */
    private static ClientOptions clientOptions(Options options) {
        return ClientOptions.builder()
                .socketOptions(SocketOptions.builder().connectTimeout(options.connectTimeout).build())
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .replayFilter(command -> true)
                .build();
    }

    /**
     * The store's client and its one connection, made by {@link #connect()} or on first use: a single Redis's (or
     * Sentinel's primary's) or a cluster's, whose commands (SET) are the same, and the connection on which WAIT
     * follows a SET (the same one; on a cluster, the key's primary's).
     */
    private static final class Connection<C extends StatefulConnection<String, String>> {
        private final AbstractRedisClient client;
        private final Supplier<C> connect;
        private final Function<C, RedisClusterCommands<String, String>> commandsOf;
        private final BiFunction<C, String, RedisClusterCommands<String, String>> nodeOf;
        private final Duration commandTimeout;
        /** Relearns where the slots are (a cluster), after a redemption failed for want of a connection. */
        Runnable onConnectionError = () -> {};
        private final AtomicLong lastRefresh = new AtomicLong(System.nanoTime() - ADAPTIVE_REFRESH_LIMIT.toNanos());
        private C value;

        Connection(AbstractRedisClient client, Supplier<C> connect,
                Function<C, RedisClusterCommands<String, String>> commandsOf,
                BiFunction<C, String, RedisClusterCommands<String, String>> nodeOf, Duration commandTimeout) {
            this.client = client;
            this.commandTimeout = commandTimeout;
            this.connect = connect;
            this.commandsOf = commandsOf;
            this.nodeOf = nodeOf;
        }

        private synchronized C value() {
            if (value == null) {
                C made = connect.get();
                made.setTimeout(commandTimeout);
                value = made;
            }
            return value;
        }

        RedisClusterCommands<String, String> commands() {
            return commandsOf.apply(value());
        }

        RedisClusterCommands<String, String> nodeCommands(String redisKey) {
            return nodeOf.apply(value(), redisKey);
        }

        /**
         * A node could not be reached (its replica may have been promoted), or answered MOVED or ASK on WAIT's direct
         * connection (which Lettuce's triggers do not see). Lettuce's own triggers see reconnects that fail, but it
         * backs off between reconnects (up to 30 s), so without this a store would wait for the periodic refresh. At most once per {@link #ADAPTIVE_REFRESH_LIMIT}; never blocks.
         */
        void connectionError() {
            long last = lastRefresh.get();
            long now = System.nanoTime();
            if (now - last >= ADAPTIVE_REFRESH_LIMIT.toNanos() && lastRefresh.compareAndSet(last, now)) {
                try {
                    onConnectionError.run();
                } catch (RuntimeException e) {
                    // A refresh that cannot start now is retried on the next failure or by the periodic refresh.
                }
            }
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

    /**
     * Connect now (call it when the server starts): within the connect timeout, the store's connection (on a
     * cluster, after learning its nodes). Logs that it connected, or why not.
     *
     * @throws ReplayStoreException Redis could not be reached; the message names the failure's classes, never
     *     the URL, host or password. Redemptions still try again (and connect) later.
     */
    public void connect() throws ReplayStoreException {
        try {
            connection.commands();
        } catch (RuntimeException e) {
            String cause = causeOf(e);
            LOG.warning(() -> "the Redis replay store (" + deployment + ") could not connect (" + cause
                    + "); redemptions are refused store_unavailable until it can");
            throw new ReplayStoreException("Redis could not be reached (" + cause + ")");
        }
        LOG.info(() -> "the Redis replay store (" + deployment + ") is connected");
    }

    @Override
    public boolean redeem(String key, long expiresAt) throws ReplayStoreException {
        long ms = expiresAt * 1000L - clock.millis();
        if (ms < 1) {
            throw new ReplayStoreException("the redemption's retention has already ended by the store's clock;"
                    + " give the store the sealer's clock");
        }
        String redisKey = redisKey(key);
        String reply;
        long acknowledged = 0;
        try {
            if (waitReplicas > 0) {
                // SET and WAIT on one connection: WAIT counts the replicas that have this connection's writes.
                RedisClusterCommands<String, String> node = connection.nodeCommands(redisKey);
                reply = node.set(redisKey, "1", SetArgs.Builder.nx().px(ms));
                if (reply != null) {
                    acknowledged = node.waitForReplication(waitReplicas, waitTimeoutMs);
                }
            } else {
                reply = connection.commands().set(redisKey, "1", SetArgs.Builder.nx().px(ms));
            }
        } catch (RedisCommandExecutionException e) {
            String message = e.getMessage() == null ? "" : e.getMessage();
            String code = message.matches("[A-Z]{2,}( .*)?") ? " " + message.split(" ", 2)[0] : "";
            if (code.equals(" MOVED") || code.equals(" ASK")) {
                // Only on WAIT's direct connection to a node: the slot moved, so relearn the map.
                connection.connectionError();
            }
            throw outage("Redis refused the redemption (" + e.getClass().getSimpleName() + code + ")");
        } catch (RuntimeException e) {
            connection.connectionError();
            throw outage("Redis could not record the redemption (" + causeOf(e) + ")");
        }
        if (reply != null && !"OK".equals(reply)) {
            throw outage("Redis answered SET NX with an unexpected reply");
        }
        if (reply != null && acknowledged < waitReplicas) {
            throw outage("Redis did not confirm the redemption on " + waitReplicas + " replica(s) in time ("
                    + acknowledged + " acknowledged)");
        }
        long since = outageSince.getAndSet(Long.MIN_VALUE);
        if (since != Long.MIN_VALUE) {
            long seconds = (System.nanoTime() - since) / 1_000_000_000L;
            LOG.info(() -> "the Redis replay store (" + deployment + ") answers again after an outage of about "
                    + seconds + " s");
        }
        return reply != null;
    }

    /** The exception of a redemption Redis could not record; the first of an outage is logged, with its cause. */
    private ReplayStoreException outage(String message) {
        if (outageSince.compareAndSet(Long.MIN_VALUE, System.nanoTime())) {
            LOG.log(Level.WARNING, () -> "the Redis replay store (" + deployment + ") is unavailable: " + message
                    + "; redemptions are refused store_unavailable until it answers (logged once per outage)");
        }
        return new ReplayStoreException(message);
    }

    /**
     * The classes of an exception and its causes ({@code RedisConnectionException: ConnectException}): their
     * messages may name the host, so they are left out.
     */
    private static String causeOf(Throwable e) {
        StringBuilder out = new StringBuilder(e.getClass().getSimpleName());
        int depth = 0;
        for (Throwable cause = e.getCause(); cause != null && cause != e && depth < 4; cause = cause.getCause()) {
            out.append(": ").append(cause.getClass().getSimpleName());
            depth++;
        }
        return out.toString();
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
        return "RedisReplayStore(" + deployment + ", prefix=" + prefix
                + (waitReplicas > 0 ? ", waitReplicas=" + waitReplicas : "") + ")";
    }
}
