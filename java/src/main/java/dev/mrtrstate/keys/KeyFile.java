package dev.mrtrstate.keys;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Objects;
import java.util.Set;

/**
 * The one reader of key files ({@link ReloadingKeyring}, {@link dev.mrtrstate.Keyring#fromFile(Path, boolean)}). A
 * key file holds secrets, and whoever may write it may put in a key of their own and mint tokens every replica
 * accepts. So it is read only if it is a regular file (a FIFO, a device, a socket or a directory at the path is
 * refused before it is opened, so a FIFO with no writer never holds the reader), and not if anyone may write it
 * unless the caller allows it. Messages name the rule, never contents.
 */
public final class KeyFile {
    private KeyFile() {}

    /**
     * The contents of the key file at {@code path}, read once with the rules above: at most
     * {@link ReloadingKeyring#MAX_KEY_FILE_BYTES} bytes (a larger file is refused, so a device that never ends is
     * not read to the end). The reader of {@link dev.mrtrstate.Keyring#fromFile(Path, boolean)}.
     *
     * @param path the key file
     * @param allowWorldWritable read it even if anyone may write it
     * @return its bytes
     * @throws IOException the file cannot be read (it is missing, or its permissions refuse it)
     * @throws KeyringException it is not a regular file, anyone may write it and that is not allowed, or it is too
     *     large (the message names the rule, never contents)
     */
    public static byte[] readOnce(Path path, boolean allowWorldWritable) throws IOException {
        byte[] bytes = read(path, ReloadingKeyring.MAX_KEY_FILE_BYTES + 1, allowWorldWritable,
                "load it with Keyring.fromFile(path, true)").bytes();
        if (bytes.length > ReloadingKeyring.MAX_KEY_FILE_BYTES) {
            throw new KeyringException("it is larger than " + ReloadingKeyring.MAX_KEY_FILE_BYTES + " bytes");
        }
        return bytes;
    }

    /** A file's identity: a rename over it, or a rewrite, changes it. */
    record Identity(Object fileKey, long size, long modifiedNanos, long changedNanos) {}

    /** What was read: the bytes (at most {@code maxBytes}) and whether its group or others may read it. */
    record Contents(byte[] bytes, boolean readableByOthers) {}

    /**
     * The identity of the file at {@code path}: device and inode where the file system has them, size, modification
     * and change times.
     */
    static Identity identity(Path path) throws IOException {
        BasicFileAttributes attributes = Files.readAttributes(path, BasicFileAttributes.class);
        long changed = 0;
        try {
            Object ctime = Files.getAttribute(path, "unix:ctime");
            if (ctime instanceof java.nio.file.attribute.FileTime time) {
                changed = time.to(java.util.concurrent.TimeUnit.NANOSECONDS);
            }
        } catch (UnsupportedOperationException | IllegalArgumentException notUnix) {
            // Not a POSIX file system: the other parts of the identity remain.
        }
        return new Identity(attributes.fileKey(), attributes.size(),
                attributes.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS), changed);
    }

    /**
     * At most {@code maxBytes} bytes of the key file at {@code path} (read one more than you accept, to see that a
     * file is too large).
     *
     * @throws IOException the file cannot be read
     * @throws KeyringException it is not a regular file, or anyone may write it and that is not allowed
     */
    static Contents read(Path path, int maxBytes, boolean allowWorldWritable, String howToAllow) throws IOException {
        Objects.requireNonNull(path, "path");
        BasicFileAttributes basic = Files.readAttributes(path, BasicFileAttributes.class);
        if (!basic.isRegularFile()) {
            throw new KeyringException("it is not a regular file (" + kind(path, basic)
                    + "): give the path of the key file");
        }
        Set<PosixFilePermission> permissions = null;
        try {
            permissions = Files.readAttributes(path, PosixFileAttributes.class).permissions();
        } catch (UnsupportedOperationException notPosix) {
            // Windows: permissions are ACLs, not checked here (as Python's reader).
        }
        if (permissions != null && permissions.contains(PosixFilePermission.OTHERS_WRITE) && !allowWorldWritable) {
            throw new KeyringException("anyone may write it (mode " + mode(permissions)
                    + "): make it 0600 (chmod 600 FILE), or " + howToAllow);
        }
        boolean readableByOthers = permissions != null && (bits(permissions) & 077) != 0;
        byte[] bytes;
        try (InputStream in = Files.newInputStream(path)) {
            bytes = in.readNBytes(maxBytes);
        }
        return new Contents(bytes, readableByOthers);
    }

    private static String kind(Path path, BasicFileAttributes basic) {
        if (basic.isDirectory()) {
            return "a directory";
        }
        try {
            Object mode = Files.getAttribute(path, "unix:mode");
            if (mode instanceof Integer bits) {
                switch (bits & 0170000) {
                    case 0010000:
                        return "a FIFO";
                    case 0020000:
                    case 0060000:
                        return "a device";
                    case 0140000:
                        return "a socket";
                    default:
                        break;
                }
            }
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException unknown) {
            // fall through
        }
        return "not a file";
    }

    /** The permission bits in octal, e.g. {@code 0666}. */
    static String mode(Set<PosixFilePermission> permissions) {
        return String.format("%04o", bits(permissions));
    }

    private static int bits(Set<PosixFilePermission> permissions) {
        int bits = 0;
        for (PosixFilePermission permission : permissions) {
            bits |= 1 << (8 - permission.ordinal()); // OWNER_READ (ordinal 0) is 0400, OTHERS_EXECUTE 0001
        }
        return bits;
    }
}
