package dev.mrtrstate.keys;

import dev.mrtrstate.Keyring;
import dev.mrtrstate.metrics.StateMetrics;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Logger;

/**
 * A key ring read from a file, that picks up a rotated file without a restart: the key source of a fleet that
 * rotates HS256 secrets (or EdDSA private keys) by changing the file every replica reads (a mounted secret, or a
 * file the deploy tool writes), with the rules of Python's {@code ReloadingKeyring}.
 *
 * <pre>{@code
 * ReloadingKeyring ring = ReloadingKeyring.fromEnv();           // the file named by MRTR_STATE_KEYS_FILE
 * StateSealer sealer = StateSealer.builder(ring, "https://tools.example.com").build();
 * }</pre>
 *
 * <ul>
 *   <li>The file holds what {@code MRTR_STATE_KEYS} holds (a JWKS, one JWK, or an HS256 secret in base64), read by
 *       {@link Keyring#fromEnv(String, Map)}'s rules, so every check of a key loaded at start-up applies to a
 *       reloaded one.
 *   <li>At most every {@link Options#checkInterval} (default 1 s), the next seal or open looks at the file's
 *       identity (device, inode, size, modification and change times): a file replaced by a rename, or rewritten,
 *       is read again. A token that names an unknown {@code kid} makes it look at once. {@link #reload()} rereads the
 *       file whatever its identity (call it on SIGHUP or from an admin endpoint: Java has no portable signal API).
 *   <li>A file that cannot be used (missing, empty, too large, not a key ring, a secret too short, ...) is refused:
 *       the last good ring stays in use and a WARNING says why (the file name and the rule, never key material),
 *       once per distinct bad content. Loading at start-up throws {@link KeyringException} instead. A file found bad
 *       is not read again for {@link Options#cooldown} (default 5 s) unless it is replaced or {@link #reload()} is
 *       called, so tokens with unknown kids cannot make a replica reparse a bad file for each of them.
 *   <li>Only a regular file is read: a FIFO, a device or a directory at the path is refused before it is opened,
 *       without waiting for a writer. A file anyone may write (mode {@code o+w}) is refused unless
 *       {@link Options#allowWorldWritable}; a file its group or others may read is loaded with a WARNING.
 *   <li>A seal or an open never waits for another thread's look at the file: it uses the keys held meanwhile.
 * </ul>
 *
 * <p>Write the new file next to the old one and rename it over, so that no reader sees half a file.
 */
public final class ReloadingKeyring implements KeySource {
    /** The environment variable {@link #fromEnv()} reads: the key file's path. */
    public static final String DEFAULT_VARIABLE = "MRTR_STATE_KEYS_FILE";
    /** The largest key file read, in bytes: 1 MiB. */
    public static final int MAX_KEY_FILE_BYTES = 1 << 20;
    /** The default most time between two looks at the file: 1 second. */
    public static final Duration DEFAULT_CHECK_INTERVAL = Duration.ofSeconds(1);
    /** The default time before a file found bad is read again: 5 seconds. */
    public static final Duration DEFAULT_COOLDOWN = Duration.ofSeconds(5);

    private static final Logger LOG = Logger.getLogger("dev.mrtrstate.keys.reloading");
    private static final String HOW_TO_ALLOW = "set ReloadingKeyring.Options.allowWorldWritable(true)";

    /** The options of a reloading ring, each with its default. */
    public static final class Options {
        private Duration checkInterval = DEFAULT_CHECK_INTERVAL;
        private Duration cooldown = DEFAULT_COOLDOWN;
        private boolean allowWorldWritable;
        private Clock clock = Clock.systemUTC();
        private StateMetrics metrics;

        /** The defaults: look every 1 s, a 5 s cooldown, world-writable files refused, the system clock, no metrics. */
        public Options() {}

        /**
         * The most time between two looks at the file, on use. Default 1 s.
         *
         * @param interval zero or more
         * @return these options
         */
        public Options checkInterval(Duration interval) {
            this.checkInterval = notNegative(interval, "checkInterval");
            return this;
        }

        /**
         * After the file is found bad, the least time before it is read again, unless it is replaced or
         * {@link ReloadingKeyring#reload()} is called. Default 5 s.
         *
         * @param cooldown zero or more
         * @return these options
         */
        public Options cooldown(Duration cooldown) {
            this.cooldown = notNegative(cooldown, "cooldown");
            return this;
        }

        /**
         * Load a file that anyone may write (mode {@code o+w}). Default false: anyone could put their key in it.
         *
         * @param allow whether to allow it
         * @return these options
         */
        public Options allowWorldWritable(boolean allow) {
            this.allowWorldWritable = allow;
            return this;
        }

        /**
         * The clock of the schedule and the cooldown.
         *
         * @param clock the clock
         * @return these options
         */
        public Options clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock");
            return this;
        }

        /**
         * Where each reading of the file is counted: a {@code key_refresh} event, {@code source} {@code key_file},
         * {@code outcome} {@code updated}, {@code unchanged} or {@code failed} ({@code spec/metrics.json}).
         *
         * @param metrics the metrics, or null for none (the default)
         * @return these options
         */
        public Options metrics(StateMetrics metrics) {
            this.metrics = metrics;
            return this;
        }

        private static Duration notNegative(Duration value, String name) {
            Objects.requireNonNull(value, name);
            if (value.isNegative()) {
                throw new IllegalArgumentException(name + " must not be negative");
            }
            return value;
        }
    }

    private final Path path;
    private final Options options;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile Keyring ring;
    private volatile long nextCheck;
    private KeyFile.Identity identity;
    private byte[] digest;
    // The last failure: its content's digest (or its reason), the file it was found in, why, and when the file may
    // be read again.
    private byte[] failedDigest;
    private KeyFile.Identity failedIdentity;
    private String failedReason = "";
    private long retryAt = Long.MIN_VALUE;
    /** How many times the file's contents were read: what the tests of the cooldown observe. */
    private final java.util.concurrent.atomic.AtomicInteger reads = new java.util.concurrent.atomic.AtomicInteger();

    private ReloadingKeyring(Path path, Options options) {
        this.path = path;
        this.options = options;
        KeyFile.Contents contents;
        try {
            this.identity = KeyFile.identity(path);
            contents = KeyFile.read(path, MAX_KEY_FILE_BYTES + 1, options.allowWorldWritable, HOW_TO_ALLOW);
            this.ring = parse(contents.bytes());
        } catch (IOException e) {
            throw new KeyringException("the key file " + path + " cannot be read (" + e.getClass().getSimpleName()
                    + ")");
        } catch (KeyringException e) {
            throw new KeyringException("the key file " + path + " (read as " + Keyring.DEFAULT_VARIABLE
                    + " is) cannot be used: " + e.getMessage());
        }
        warnIfReadableByOthers(contents);
        this.digest = sha256(contents.bytes());
        this.nextCheck = options.clock.millis() + options.checkInterval.toMillis();
    }

    /**
     * Load the key file at {@code path} and follow it.
     *
     * @param path the key file
     * @param options the options
     * @return the ring
     * @throws KeyringException the file cannot be read or used (the message names the rule, never contents)
     */
    public static ReloadingKeyring fromFile(Path path, Options options) {
        return new ReloadingKeyring(Objects.requireNonNull(path, "path"), Objects.requireNonNull(options, "options"));
    }

    /**
     * Load and follow the key file named by {@value #DEFAULT_VARIABLE}, with the default options.
     *
     * @return the ring
     * @throws KeyringException the variable is unset, or the file cannot be read or used
     */
    public static ReloadingKeyring fromEnv() {
        return fromEnv(DEFAULT_VARIABLE, System.getenv(), new Options());
    }

    /**
     * Load and follow the key file whose path is in the variable {@code name}.
     *
     * @param name the variable, usually {@value #DEFAULT_VARIABLE}
     * @param environment the environment, e.g. {@code System.getenv()}
     * @param options the options
     * @return the ring
     * @throws KeyringException the variable is unset, or the file cannot be read or used
     */
    public static ReloadingKeyring fromEnv(String name, Map<String, String> environment, Options options) {
        String value = environment.getOrDefault(name, "").strip();
        if (value.isEmpty()) {
            throw new KeyringException("the environment variable " + name + " is not set: set it to the path of a"
                    + " key file (what " + Keyring.DEFAULT_VARIABLE + " would hold)");
        }
        return fromFile(Path.of(value), options);
    }

    /** {@return the key file} */
    public Path path() {
        return path;
    }

    /** {@return the last good ring read from the file, without looking at the file} */
    public Keyring keyring() {
        return ring;
    }

    /** {@return the current keys, the sealing key first; looks at the file first when a look is due} */
    public List<Key> keys() {
        return current().keys();
    }

    @Override
    public Key signingKey() {
        return current().signingKey();
    }

    @Override
    public Key get(String kid) {
        return current().get(kid);
    }

    /** A token names a kid this ring does not hold: look at the file now (a read only if it changed). */
    @Override
    public boolean refreshForUnknownKey() {
        lock.lock();
        try {
            return check(false, true);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Read the file now, whatever its identity.
     *
     * @return true when the keys changed
     * @throws KeyringException the file cannot be used (the last good ring stays)
     */
    public boolean reload() {
        lock.lock();
        try {
            return check(true, false);
        } finally {
            lock.unlock();
        }
    }

    /** The ring, after a look at the file when one is due and no other thread is looking (never waits). */
    private Keyring current() {
        if (options.clock.millis() >= nextCheck && lock.tryLock()) {
            try {
                check(false, true);
            } finally {
                lock.unlock();
            }
        }
        return ring;
    }

    /** Look at the file (lock held); read it if it changed or {@code reread}; true if the keys changed. */
    private boolean check(boolean reread, boolean quiet) {
        long now = options.clock.millis();
        nextCheck = now + options.checkInterval.toMillis();
        KeyFile.Identity seen;
        try {
            seen = KeyFile.identity(path);
        } catch (IOException e) {
            return refuse("it cannot be read (" + e.getClass().getSimpleName() + ")", null, null, quiet);
        }
        if (!reread) {
            if (failedDigest == null && seen.equals(identity)) {
                return false;
            }
            if (failedDigest != null && seen.equals(failedIdentity) && now < retryAt) {
                return false; // the same bad file, still cooling down
            }
        }
        KeyFile.Contents contents;
        try {
            reads.incrementAndGet();
            contents = KeyFile.read(path, MAX_KEY_FILE_BYTES + 1, options.allowWorldWritable, HOW_TO_ALLOW);
        } catch (IOException e) {
            return refuse("it cannot be read (" + e.getClass().getSimpleName() + ")", null, seen, quiet);
        } catch (KeyringException e) {
            return refuse(e.getMessage(), null, seen, quiet);
        }
        byte[] read = sha256(contents.bytes());
        if (Arrays.equals(read, digest)) {
            identity = seen;
            failedDigest = null;
            StateMetrics.record(options.metrics, "key_refresh", "source", "key_file", "outcome", "unchanged");
            return false;
        }
        if (Arrays.equals(read, failedDigest)) { // known to be bad: not parsed again
            return refuse(failedReason, read, seen, quiet);
        }
        Keyring parsed;
        try {
            parsed = parse(contents.bytes());
        } catch (KeyringException e) {
            return refuse(e.getMessage(), read, seen, quiet);
        }
        warnIfReadableByOthers(contents);
        ring = parsed;
        identity = seen;
        digest = read;
        failedDigest = null;
        LOG.info(() -> "the key file " + path + " changed: " + parsed.keys().size() + " keys");
        StateMetrics.record(options.metrics, "key_refresh", "source", "key_file", "outcome", "updated");
        return true;
    }

    private boolean refuse(String reason, byte[] contentDigest, KeyFile.Identity seen, boolean quiet) {
        String message = "the key file " + path + " (read as " + Keyring.DEFAULT_VARIABLE + " is) cannot be used: "
                + reason;
        byte[] failure = contentDigest != null ? contentDigest : reason.getBytes(StandardCharsets.UTF_8);
        if (!Arrays.equals(failure, failedDigest)) { // once per distinct bad content, not every look
            int held = ring.keys().size();
            LOG.warning(() -> message + "; keeping the " + held + " keys read before");
            StateMetrics.record(options.metrics, "key_refresh", "source", "key_file", "outcome", "failed");
        }
        // The same file is not read again until the cooldown has passed, and then it is, even if its identity has
        // not changed (a write finished within one timestamp tick).
        failedDigest = failure;
        failedIdentity = seen;
        failedReason = reason;
        retryAt = options.clock.millis() + options.cooldown.toMillis();
        if (!quiet) {
            throw new KeyringException(message);
        }
        return false;
    }

    /** {@return how many times the file's contents were read since the ring was loaded} */
    int reads() {
        return reads.get();
    }

    private void warnIfReadableByOthers(KeyFile.Contents contents) {
        if (contents.readableByOthers()) {
            LOG.warning(() -> "the key file " + path + " may be read by its group or others: make it 0600"
                    + " (chmod 600 FILE)");
        }
    }

    /** The ring in a key file's bytes, by the rules of {@code MRTR_STATE_KEYS}. */
    private static Keyring parse(byte[] bytes) {
        if (bytes.length > MAX_KEY_FILE_BYTES) {
            throw new KeyringException("it is larger than " + MAX_KEY_FILE_BYTES + " bytes");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new KeyringException("it is not UTF-8 text");
        }
        if (text.isBlank()) {
            throw new KeyringException("it is empty");
        }
        return Keyring.fromEnv(Keyring.DEFAULT_VARIABLE, Map.of(Keyring.DEFAULT_VARIABLE, text));
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    @Override
    public String toString() {
        return "ReloadingKeyring(path=" + path + ", keys=" + ring.keys().size() + ")";
    }
}
