package dev.mrtrstate.replay.redis;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A real redis-server (or Sentinel) on a free loopback port, started by a test and stopped by it. Without
 * redis-server on PATH the tests skip, except under CI=true, where that is a failure.
 */
final class RedisProcess implements AutoCloseable {
    final int port;
    private final Process process;

    private RedisProcess(int port, Process process) {
        this.port = port;
        this.process = process;
    }

    static void requireRedis() {
        boolean found = false;
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            found |= Files.isExecutable(Path.of(dir, "redis-server"));
        }
        String ci = System.getenv().getOrDefault("CI", "").toLowerCase(java.util.Locale.ROOT);
        if (!found && (ci.equals("1") || ci.equals("true") || ci.equals("yes"))) {
            throw new AssertionError("redis-server not found on PATH and CI=true: a missing tool is a failure");
        }
        Assumptions.assumeTrue(found, "redis-server not found on PATH");
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** A free loopback port whose cluster bus port (10000 higher) is free too. */
    static int freeClusterPort() throws IOException {
        java.util.Random random = new java.util.Random();
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = 20_000 + random.nextInt(25_000);
            if (bindable(port) && bindable(port + 10_000)) {
                return port;
            }
        }
        throw new IOException("no free port pair for a cluster node");
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort() == port;
        } catch (IOException taken) {
            return false;
        }
    }

    /** A cluster node (its own directory under {@code dir}) with this cluster-node-timeout, on loopback. */
    static RedisProcess clusterNode(Path dir, int nodeTimeoutMs) throws IOException, InterruptedException {
        requireRedis();
        int port = freeClusterPort();
        Path own = Files.createDirectories(dir.resolve("node-" + port));
        return start(List.of("redis-server", "--port", String.valueOf(port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", own.toString(), "--cluster-enabled", "yes", "--cluster-config-file",
                "nodes.conf", "--cluster-node-timeout", String.valueOf(nodeTimeoutMs),
                // A killed primary's replica takes over however far it lagged.
                "--cluster-replica-validity-factor", "0"), port);
    }

    /** A redis-server with these extra arguments, no persistence, on loopback. */
    static RedisProcess server(Path dir, String... extra) throws IOException, InterruptedException {
        requireRedis();
        int port = freePort();
        List<String> command = new ArrayList<>(List.of("redis-server", "--port", String.valueOf(port), "--bind",
                "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString()));
        command.addAll(List.of(extra));
        return start(command, port);
    }

    /** A Sentinel monitoring the primary at {@code primaryPort} as {@code service}. */
    static RedisProcess sentinel(Path dir, int primaryPort, String service) throws IOException, InterruptedException {
        requireRedis();
        int port = freePort();
        Path config = dir.resolve("sentinel-" + port + ".conf");
        Files.writeString(config, "port " + port + "\nbind 127.0.0.1\nsentinel monitor " + service
                + " 127.0.0.1 " + primaryPort + " 1\n", StandardCharsets.US_ASCII);
        return start(List.of("redis-server", config.toString(), "--sentinel"), port);
    }

    private static RedisProcess start(List<String> command, int port) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        RedisProcess redis = new RedisProcess(port, process);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("redis-server exited at start");
            }
            try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
                if (socket.isConnected()) {
                    return redis;
                }
            } catch (IOException notYet) {
                Thread.sleep(20);
            }
        }
        redis.close();
        throw new IllegalStateException("redis-server did not listen within 10 s");
    }

    /** Run redis-cli against this server; its output. */
    String cli(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("redis-cli", "-p", String.valueOf(port)));
        command.addAll(List.of(args));
        Process cli = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(cli.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        cli.waitFor(10, TimeUnit.SECONDS);
        return out;
    }

    /** SIGKILL, as a crash: no goodbye to the cluster or the clients. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** Whether the process runs. */
    boolean alive() {
        return process.isAlive();
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
