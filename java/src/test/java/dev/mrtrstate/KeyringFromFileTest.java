package dev.mrtrstate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.mrtrstate.keys.KeyAlgorithm;
import dev.mrtrstate.keys.KeyringException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Keyring#fromFile(Path)} reads a key file with the rules of Python's key file reader and the Java reloading
 * ring's: only a regular file, refused at once otherwise (a FIFO with no writer must not hold the caller), and not one
 * anyone may write unless allowed; no message holds key material.
 */
class KeyringFromFileTest {
    @TempDir
    Path dir;

    private Path keyFile(Keyring ring) throws Exception {
        Path file = dir.resolve("keys.json");
        Files.writeString(file, ring.privateJwksJson());
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    @Test
    void aFifoIsRefusedWithoutBlocking() throws Exception {
        Path fifo = dir.resolve("fifo");
        Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).start();
        assertTrue(mkfifo.waitFor(5, TimeUnit.SECONDS) && mkfifo.exitValue() == 0, "mkfifo");
        // Nothing ever writes to it: a reader that opened it would wait forever.
        KeyringException refused = assertTimeoutPreemptively(Duration.ofSeconds(5),
                () -> assertThrows(KeyringException.class, () -> Keyring.fromFile(fifo)));
        assertTrue(refused.getMessage().contains("not a regular file (a FIFO)"), refused.getMessage());
        assertTrue(refused.getMessage().contains(fifo.toString()), refused.getMessage());
    }

    @Test
    void aDirectoryAndADeviceAreRefused() {
        KeyringException directory = assertThrows(KeyringException.class, () -> Keyring.fromFile(dir));
        assertTrue(directory.getMessage().contains("not a regular file (a directory)"), directory.getMessage());
        Path device = Path.of("/dev/null");
        if (Files.exists(device)) {
            KeyringException refused = assertTimeoutPreemptively(Duration.ofSeconds(5),
                    () -> assertThrows(KeyringException.class, () -> Keyring.fromFile(device, true)));
            assertTrue(refused.getMessage().contains("not a regular file (a device)"), refused.getMessage());
        }
    }

    @Test
    void aWorldWritableFileIsRefusedUnlessAllowedAndTheMessageHoldsNoKey() throws Exception {
        Keyring ring = Keyring.generate(KeyAlgorithm.EDDSA);
        Path file = keyFile(ring);
        assertEquals(ring.signingKey().kid(), Keyring.fromFile(file).signingKey().kid());

        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw-rw-"));
        KeyringException refused = assertThrows(KeyringException.class, () -> Keyring.fromFile(file));
        assertTrue(refused.getMessage().contains("anyone may write it (mode 0666)")
                && refused.getMessage().contains("Keyring.fromFile(path, true)"), refused.getMessage());
        JsonNode jwk = new ObjectMapper().readTree(ring.privateJwksJson()).get("keys").get(0);
        assertFalse(refused.getMessage().contains(jwk.get("d").asText()), "the private key is in the message");
        assertEquals(ring.signingKey().kid(), Keyring.fromFile(file, true).signingKey().kid());

        // Others may read it: loaded (the reloading ring warns; a file read once does not).
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        assertEquals(ring.signingKey().kid(), Keyring.fromFile(file).signingKey().kid());
    }

    @Test
    void aFileLargerThanTheCapIsRefusedAndAMissingOneNamesItsClass() throws Exception {
        Path large = dir.resolve("large.json");
        Files.write(large, new byte[dev.mrtrstate.keys.ReloadingKeyring.MAX_KEY_FILE_BYTES + 1]);
        KeyringException refused = assertThrows(KeyringException.class, () -> Keyring.fromFile(large));
        assertTrue(refused.getMessage().contains("larger than"), refused.getMessage());
        KeyringException missing = assertThrows(KeyringException.class,
                () -> Keyring.fromFile(dir.resolve("missing.json")));
        assertTrue(missing.getMessage().contains("NoSuchFileException"), missing.getMessage());
    }
}
