package dev.mrtrstate.replay.redis;

import dev.mrtrstate.replay.ReplayStoreException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Redeems replay-store keys with one long-lived Java Redis store, one key a line, for the failover tests in
 * {@code tests/replay} (a store must follow a failover while it runs, which a process per redemption cannot show).
 * The line protocol of {@code go/internal/cmd/redeemlines}, run from the built classpath without a build step of
 * its own (Java's source-file mode; Maven also compiles it with the tests):
 *
 * <pre>
 * java -cp "target/classes:$(cat target/classpath.txt)" src/test/java/dev/mrtrstate/replay/redis/RedeemLines.java \
 *     --cluster redis://127.0.0.1:7000 [--timeout-ms 300] [--wait 1 --wait-timeout-ms 200]
 * </pre>
 *
 * <p>{@code --url} names a single Redis instead. Each line of stdin is {@code KEY EXPIRES_AT} (the store key,
 * {@code iss#jti}, and the retention's end in seconds since the epoch); each answer is one line of stdout,
 * {@code {"first": true|false}} or {@code {"error": "..."}}, in the order of the lines. It ends at the end of stdin.
 * The store logs through {@code java.util.logging} to standard error.
 */
public final class RedeemLines {
    private RedeemLines() {}

    /**
     * Redeem the keys of standard input, one a line.
     *
     * @param args {@code --cluster URL} or {@code --url URL}, then the optional timeouts and WAIT
     * @throws IOException standard input or output failed
     */
    public static void main(String[] args) throws IOException {
        String cluster = null;
        String url = null;
        RedisReplayStore.Options options = new RedisReplayStore.Options();
        int wait = 0;
        Duration waitTimeout = Duration.ofMillis(500);
        for (int i = 0; i + 1 < args.length; i += 2) {
            String value = args[i + 1];
            switch (args[i]) {
                case "--cluster" -> cluster = value;
                case "--url" -> url = value;
                case "--timeout-ms" -> options.timeout(Duration.ofMillis(Long.parseLong(value)));
                case "--wait" -> wait = Integer.parseInt(value);
                case "--wait-timeout-ms" -> waitTimeout = Duration.ofMillis(Long.parseLong(value));
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (wait > 0) {
            options.waitReplicas(wait, waitTimeout);
        }
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        if (cluster == null && url == null) {
            out.println(error("give --url or --cluster"));
            System.exit(2);
        }
        try (RedisReplayStore store = cluster != null ? RedisReplayStore.fromCluster(cluster, options)
                : RedisReplayStore.fromUrl(url, options)) {
            try {
                store.connect();
            } catch (ReplayStoreException e) {
                out.println(error(e.getMessage()));
                System.exit(2);
            }
            BufferedReader lines = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                String[] parts = line.trim().split(" ");
                long expiresAt;
                try {
                    expiresAt = parts.length == 2 ? Long.parseLong(parts[1]) : -1;
                } catch (NumberFormatException e) {
                    expiresAt = -1;
                }
                if (expiresAt < 0) {
                    out.println(error("a line is KEY EXPIRES_AT"));
                    continue;
                }
                try {
                    out.println("{\"first\": " + store.redeem(parts[0], expiresAt) + "}");
                } catch (ReplayStoreException e) {
                    out.println(error(e.getMessage()));
                }
            }
        }
    }

    /** An error answer: the message as a JSON string (the store's messages hold no token and no key). */
    private static String error(String message) {
        StringBuilder json = new StringBuilder("{\"error\": \"");
        for (char c : String.valueOf(message).toCharArray()) {
            if (c == '"' || c == '\\') {
                json.append('\\').append(c);
            } else if (c < 0x20) {
                json.append(String.format("\\u%04x", (int) c));
            } else {
                json.append(c);
            }
        }
        return json.append("\"}").toString();
    }
}
