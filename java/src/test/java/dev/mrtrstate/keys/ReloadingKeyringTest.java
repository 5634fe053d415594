package dev.mrtrstate.keys;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mrtrstate.InvalidRequestStateException;
import dev.mrtrstate.Keyring;
import dev.mrtrstate.StateSealer;
import dev.mrtrstate.binding.Binding;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rules of a key file that is reloaded while the server runs, each on a real file in a temporary directory, with
 * a clock the test moves (no sleeping). Each test well under a second; bounded at 10 s each.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class ReloadingKeyringTest {
    private static final String ISSUER = "https://tools.example.com";

    /** A clock that moves only when the test says so. */
    private static final class TestClock extends Clock {
        private volatile Instant now = Instant.ofEpochSecond(1_767_225_600L);

        void advance(Duration by) {
            now = now.plus(by);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @TempDir
    Path dir;
    private final TestClock clock = new TestClock();
    private final List<String> events = new CopyOnWriteArrayList<>();
    private final List<LogRecord> logged = new CopyOnWriteArrayList<>();
    private final Logger logger = Logger.getLogger("dev.mrtrstate.keys.reloading");
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord record) {
            logged.add(record);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    @BeforeEach
    void listen() {
        logger.addHandler(handler);
    }

    @AfterEach
    void stopListening() {
        logger.removeHandler(handler);
    }

    private ReloadingKeyring.Options options() {
        return new ReloadingKeyring.Options().clock(clock)
                .metrics((event, attributes) -> events.add(attributes.get("source") + ":" + attributes.get("outcome")));
    }

    /** Write {@code text} to a new file beside {@code file} (mode 0600) and rename it over, as a deploy would. */
    private static void replace(Path file, String text) throws IOException {
        Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(next, text, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(next, PosixFilePermissions.fromString("rw-------"));
        Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private Path keyFile(Keyring ring) throws IOException {
        Path file = dir.resolve("keys.json");
        replace(file, ring.privateJwksJson());
        return file;
    }

    private List<String> warnings() {
        List<String> out = new ArrayList<>();
        for (LogRecord record : logged) {
            if (record.getLevel() == Level.WARNING) {
                out.add(record.getMessage());
            }
        }
        return out;
    }

    @Test
    void aRenamedFileIsPickedUpOnUseOnceTheCheckIntervalHasPassed() throws Exception {
        Keyring first = Keyring.generate(KeyAlgorithm.EDDSA);
        Keyring second = Keyring.generate(KeyAlgorithm.EDDSA);
        Path file = keyFile(first);
        ReloadingKeyring ring = ReloadingKeyring.fromFile(file, options());
        assertEquals(first.signingKey().kid(), ring.signingKey().kid());
        replace(file, second.privateJwksJson());
        clock.advance(Duration.ofMillis(999));
        assertEquals(first.signingKey().kid(), ring.signingKey().kid(), "no look before the interval");
        clock.advance(Duration.ofMillis(1));
        assertEquals(second.signingKey().kid(), ring.signingKey().kid());
        assertEquals(List.of("key_file:updated"), events);
        assertTrue(warnings().isEmpty(), warnings().toString());
        clock.advance(Duration.ofSeconds(1));
        ring.keys();
        assertEquals(List.of("key_file:updated"), events, "an unchanged identity is not read again");
    }

    @Test
    void aTokenWithAnUnknownKidMakesTheRingLookAtOnce() throws Exception {
        Keyring first = Keyring.generate(KeyAlgorithm.HS256);
        Path file = keyFile(first);
        ReloadingKeyring ring = ReloadingKeyring.fromFile(file, options());
        Keyring rotated = first.rotated(Keyring.generate(KeyAlgorithm.HS256).signingKey());
        // Another replica already signs with the new key; this one has not looked at the file yet.
        replace(file, rotated.privateJwksJson());
        Binding binding = Binding.tool("alice", "deploy", Map.of());
        String token = StateSealer.builder(rotated, ISSUER).clock(clock).build().seal(1, binding);
        assertEquals(1, StateSealer.builder(ring, ISSUER).clock(clock).build().open(token, binding).intValue());
    }

    @Test
    void reloadRereadsTheFileNowAndThrowsOnABadOneKeepingTheKeys() throws Exception {
        Keyring first = Keyring.generate(KeyAlgorithm.EDDSA);
        Keyring second = Keyring.generate(KeyAlgorithm.EDDSA);
        Path file = keyFile(first);
        ReloadingKeyring ring = ReloadingKeyring.fromFile(file, options());
        replace(file, second.privateJwksJson());
        assertTrue(ring.reload());
        assertEquals(second.signingKey().kid(), ring.signingKey().kid());
        assertFalse(ring.reload(), "the same contents: nothing changed");
        replace(file, "{\"keys\": []}");
        KeyringException refused = assertThrows(KeyringException.class, ring::reload);
        assertTrue(refused.getMessage().startsWith("the key file " + file), refused.getMessage());
        assertEquals(second.signingKey().kid(), ring.signingKey().kid());
        assertEquals(List.of("key_file:updated", "key_file:unchanged", "key_file:failed"), events);
    }

    @Test
    void aBadFileKeepsTheLastGoodKeysAndWarnsOncePerContentWithoutKeyMaterial() throws Exception {
        Keyring first = Keyring.generate(KeyAlgorithm.HS256);
        Path file = keyFile(first);
        ReloadingKeyring ring = ReloadingKeyring.fromFile(file, options());
        String shortSecret = "c2hvcnQtYnV0LXNlY3JldA"; // 16 bytes: too short for HS256
        replace(file, shortSecret);
        for (int look = 0; look < 3; look++) {
            clock.advance(Duration.ofSeconds(6)); // past the check interval and the cooldown
            assertEquals(first.signingKey().kid(), ring.signingKey().kid());
        }
        assertEquals(1, warnings().size(), warnings().toString());
        String warning = warnings().get(0);
        assertTrue(warning.contains(file.toString()) && warning.contains("16 bytes")
                && warning.contains("keeping the 1 keys read before"), warning);
        assertFalse(warning.contains(shortSecret), warning);
        assertFalse(String.join("\n", warnings()).contains(first.privateJwksJson().substring(30, 50)));
        assertEquals(List.of("key_file:failed"), events);
        Keyring fixed = Keyring.generate(KeyAlgorithm.HS256);
        replace(file, fixed.privateJwksJson());
        clock.advance(Duration.ofSeconds(1));
        assertEquals(fixed.signingKey().kid(), ring.signingKey().kid());
        assertEquals(List.of("key_file:failed", "key_file:updated"), events);
    }

    @Test
    void aBadFileIsNotReadAgainDuringTheCooldownUnlessItIsReplaced() throws Exception {
        Path file = keyFile(Keyring.generate(KeyAlgorithm.EDDSA));
        ReloadingKeyring ring = ReloadingKeyring.fromFile(file, options().cooldown(Duration.ofSeconds(5)));
        replace(file, "not a key ring");
        String token = StateSealer.builder(Keyring.generate(KeyAlgorithm.EDDSA), ISSUER).clock(clock).build()
                .seal(1, Binding.tool("alice", "t", Map.of()));
        StateSealer opener = StateSealer.builder(ring, ISSUER).clock(clock).build();
        clock.advance(Duration.ofSeconds(1));
        ring.keys();
        int reads = ring.reads();
        assertEquals(1, reads);
        // Tokens with unknown kids, one after the other, within the cooldown: no rereading of the bad file.
        for (int i = 0; i < 20; i++) {
            assertEquals(InvalidRequestStateException.Reason.UNKNOWN_KEY, assertThrows(
                    InvalidRequestStateException.class,
                    () -> opener.open(token, Binding.tool("alice", "t", Map.of()))).reason());
        }
        clock.advance(Duration.ofSeconds(3));
        ring.keys();
        assertEquals(reads, ring.reads(), "read again within the cooldown");
        clock.advance(Duration.ofSeconds(2));
        ring.keys();
        assertEquals(reads + 1, ring.reads(), "not read again once the cooldown had passed");
        Keyring fixed = Keyring.generate(KeyAlgorithm.EDDSA);
        replace(file, fixed.privateJwksJson());
        assertTrue(ring.refreshForUnknownKey(), "a replaced file is read at once, cooldown or not");
        assertEquals(fixed.signingKey().kid(), ring.signingKey().kid());
    }

    @Test
    void aFifoIsRefusedWithoutBlockingAtStartAndOnReload() throws Exception {
        Path fifo = dir.resolve("fifo");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertTrue(mkfifo.waitFor(5, TimeUnit.SECONDS) && mkfifo.exitValue() == 0, "mkfifo");
        KeyringException refused = assertThrows(KeyringException.class,
                () -> ReloadingKeyring.fromFile(fifo, options()));
        assertTrue(refused.getMessage().contains("not a regular file (a FIFO)"), refused.getMessage());

        Keyring first = Keyring.generate(KeyAlgorithm.EDDSA);
        Path file = keyFile(first);
        ReloadingKeyring ring = ReloadingKeyring.fromFile(file, options());
        Files.move(fifo, file, StandardCopyOption.REPLACE_EXISTING);
        assertTrue(assertThrows(KeyringException.class, ring::reload).getMessage().contains("a FIFO"));
        clock.advance(Duration.ofSeconds(10));
        assertEquals(first.signingKey().kid(), ring.signingKey().kid());
    }

    @Test
    void aDirectoryAndADeviceAreRefused() throws Exception {
        assertTrue(assertThrows(KeyringException.class, () -> ReloadingKeyring.fromFile(dir, options()))
                .getMessage().contains("not a regular file (a directory)"));
        Path device = Path.of("/dev/null");
        if (Files.exists(device)) {
            assertTrue(assertThrows(KeyringException.class, () -> ReloadingKeyring.fromFile(device, options()))
                    .getMessage().contains("not a regular file (a device)"));
        }
    }

    @Test
    void aWorldWritableFileIsRefusedUnlessAllowed() throws Exception {
        Keyring first = Keyring.generate(KeyAlgorithm.EDDSA);
        Path file = keyFile(first);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-rw-"));
        KeyringException refused = assertThrows(KeyringException.class,
                () -> ReloadingKeyring.fromFile(file, options()));
        assertTrue(refused.getMessage().contains("anyone may write it (mode 0666)")
                && refused.getMessage().contains("allowWorldWritable(true)"), refused.getMessage());
        ReloadingKeyring allowed = ReloadingKeyring.fromFile(file, options().allowWorldWritable(true));
        assertEquals(first.signingKey().kid(), allowed.signingKey().kid());
        assertTrue(warnings().stream().anyMatch(w -> w.contains("may be read by its group or others")));

        // A file that becomes world-writable after loading is refused too; the keys stay.
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        ReloadingKeyring ring = ReloadingKeyring.fromFile(file, options());
        Files.writeString(file, Keyring.generate(KeyAlgorithm.EDDSA).privateJwksJson());
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-rw-"));
        clock.advance(Duration.ofSeconds(1));
        assertEquals(first.signingKey().kid(), ring.signingKey().kid());
        assertTrue(warnings().stream().anyMatch(w -> w.contains("anyone may write it")), warnings().toString());
    }

    @Test
    void fromEnvNamesTheVariableWhenItIsUnsetAndToStringHoldsNoKey() throws Exception {
        KeyringException unset = assertThrows(KeyringException.class,
                () -> ReloadingKeyring.fromEnv(ReloadingKeyring.DEFAULT_VARIABLE, Map.of(), options()));
        assertTrue(unset.getMessage().contains("MRTR_STATE_KEYS_FILE is not set"), unset.getMessage());
        Keyring first = Keyring.generate(KeyAlgorithm.HS256);
        Path file = keyFile(first);
        ReloadingKeyring ring = ReloadingKeyring.fromEnv(ReloadingKeyring.DEFAULT_VARIABLE,
                Map.of(ReloadingKeyring.DEFAULT_VARIABLE, file.toString()), options());
        assertEquals("ReloadingKeyring(path=" + file + ", keys=1)", ring.toString());
        assertThrows(KeyringException.class,
                () -> ReloadingKeyring.fromFile(dir.resolve("missing.json"), options()));
    }
}
