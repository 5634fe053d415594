package mrtrstate.example;

import dev.mrtrstate.Keyring;
import dev.mrtrstate.StateSealer;
import dev.mrtrstate.keys.KeyAlgorithm;
import dev.mrtrstate.keys.KeyringException;
import dev.mrtrstate.mcp.ToolBoundary;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapperSupplier;
import dev.mrtrstate.replay.MemoryReplayStore;
import dev.mrtrstate.replay.ReplayStore;
import dev.mrtrstate.replay.redis.RedisReplayStore;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpRequestManager;
import io.modelcontextprotocol.modern.server.McpServer;
import io.modelcontextprotocol.modern.server.feature.McpSyncTool;
import io.modelcontextprotocol.modern.server.feature.McpSyncToolRepository;
import io.modelcontextprotocol.modern.server.feature.ToolsFeature;
import io.modelcontextprotocol.modern.server.feature.ToolsPage;
import io.modelcontextprotocol.modern.server.transport.HttpServletMcpTransport;
import io.modelcontextprotocol.modern.server.transport.StdioMcpTransport;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.Locale;
import java.util.Set;
import org.apache.catalina.Context;
import org.apache.catalina.Wrapper;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;

/**
 * The mrtr-state example MCP server in Java: {@code delete_branch} and {@code book_trip} over the official Java
 * SDK's HTTP transport on loopback (with the prompt {@code review_branch} and the resource template
 * {@code trips://fares/{destination}}, which ask once too), with bearer-token users, on the mrtr-state Java library. The twin of
 * examples/server (Python) and examples/server-ts: same tools, users, issuer and key ring
 * ({@code MRTR_STATE_KEYS}), and with {@code --redis-url} the same replay store, so they serve one fleet.
 *
 * <pre>
 *   java -cp ... mrtrstate.example.Main [--host 127.0.0.1] [--port 0] [--issuer URL] [--ttl 600]
 *                                        [--redis-url redis://...] [--dev-key] [--conformance]
 *                                        [--tool-refusal tool-error|jsonrpc] [--stdio [--stdio-user NAME]]
 * </pre>
 *
 * <p>The tools sit behind a {@link ToolBoundary}, which sees each request as the client sent it: the answers to
 * the edge inputs of profile 8.2 are the Python example server's. {@code --tool-refusal jsonrpc} answers a refused
 * state on {@code tools/call} with the JSON-RPC error {@code -32602} instead of a tool error. {@code --stdio} serves
 * the same tools over stdio, for one user (the process's, or {@code --stdio-user}). Over HTTP, a {@code Host}
 * header that is not the address listened on (any port; {@code localhost} too for a loopback address) is answered
 * 421 Misdirected Request, as the Python and TypeScript examples do. Failures are logged to stderr (slf4j-simple,
 * WARN and above; never a token).
 *
 * <p>{@code --conformance} serves the MCP conformance suite's {@code input-required-result-*} fixtures instead,
 * without authentication: every state is sealed by {@code MrtrStateCodec} for one fixed principal.
 *
 * <p>Prints "example server: listening on http://HOST:PORT/mcp (...)" once it accepts connections.
 */
public final class Main {
    private static final String DEFAULT_ISSUER = "https://tools.example.com";
    private static final int DEFAULT_TTL = 600;
    /** The example's users, as the Python and TypeScript examples have them. */
    private static final Map<String, String> EXAMPLE_TOKENS = Map.of("alice-example-token", "alice",
            "bob-example-token", "bob");
    private static final String USER = "user";
    /** The one principal of the conformance mode: the MCP conformance suite's harness sends no credentials. */
    static final String CONFORMANCE_PRINCIPAL = "conformance-harness";

    private Main() {}

    /**
     * Run the server until it is stopped (SIGTERM, SIGINT).
     *
     * @param args the options
     * @throws Exception when the server cannot start
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> options = new java.util.HashMap<>(Map.of("--host", "127.0.0.1", "--port", "0",
                "--issuer", DEFAULT_ISSUER, "--ttl", String.valueOf(DEFAULT_TTL)));
        // The SDK logs through SLF4J: WARN and above to stderr, so a failure is never a silent -32603.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", System.getProperty(
                "org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        boolean devKey = false;
        boolean conformance = false;
        boolean stdio = false;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--dev-key")) {
                devKey = true;
            } else if (args[i].equals("--conformance")) {
                conformance = true;
            } else if (args[i].equals("--stdio")) {
                stdio = true;
            } else if (List.of("--host", "--port", "--issuer", "--ttl", "--redis-url", "--tool-refusal",
                    "--stdio-user").contains(args[i]) && i + 1 < args.length) {
                options.put(args[i], args[++i]);
            } else {
                System.err.println("example server: unknown option " + args[i]);
                System.exit(2);
            }
        }
        int port;
        int ttl;
        try {
            port = Integer.parseInt(options.get("--port"));
            ttl = Integer.parseInt(options.get("--ttl"));
        } catch (NumberFormatException e) {
            System.err.println("example server: --port and --ttl must be integers");
            System.exit(2);
            return;
        }
        ToolBoundary.ToolRefusal refusal;
        switch (options.getOrDefault("--tool-refusal", "tool-error").replace('_', '-').toLowerCase(Locale.ROOT)) {
            case "tool-error" -> refusal = ToolBoundary.ToolRefusal.TOOL_ERROR;
            case "jsonrpc" -> refusal = ToolBoundary.ToolRefusal.JSONRPC;
            default -> {
                System.err.println("example server: --tool-refusal is tool-error or jsonrpc");
                System.exit(2);
                return;
            }
        }
        Keyring ring;
        try {
            if (devKey) {
                System.err.println("example server: WARNING: --dev-key: sealing with an EPHEMERAL key generated now."
                        + " Every requestState dies with this process and no other replica can open it. Development"
                        + " only; set MRTR_STATE_KEYS for anything else.");
                ring = Keyring.generate(KeyAlgorithm.EDDSA);
            } else {
                ring = Keyring.fromEnv();
            }
        } catch (KeyringException e) {
            System.err.println("example server: " + e.getMessage());
            System.err.println("example server: or start it with --dev-key for an ephemeral development key");
            System.exit(2);
            return;
        }
        ReplayStore store = new MemoryReplayStore();
        if (options.containsKey("--redis-url")) {
            RedisReplayStore redis = RedisReplayStore.fromUrl(options.get("--redis-url"),
                    new RedisReplayStore.Options());
            try {
                redis.connect(); // now, so that the first redemption is not the one that connects
            } catch (dev.mrtrstate.replay.ReplayStoreException e) {
                System.err.println("example server: cannot reach the Redis replay store: " + e.getMessage());
                System.exit(2);
                return;
            }
            store = redis;
        }
        StateSealer sealer = StateSealer.builder(ring, options.get("--issuer")).ttl(ttl)
                .maxLifetime(Math.max(ttl, DEFAULT_TTL)).replayStore(store).requireArguments(!conformance).build();
        McpRequestManager manager;
        if (conformance) {
            manager = conformanceServer(sealer);
        } else {
            // Every state of both tools is single use, redeemed in the replay store; the prompt's and the
            // resource's only ask, as in the Python example.
            ToolBoundary boundary = ToolBoundary.builder(sealer).principal(context -> (String) context.get(USER))
                    .singleUse(Set.of("tools/call:delete_branch", "tools/call:book_trip")).toolRefusal(refusal)
                    .build();
            manager = boundary.around(exampleServer(boundary));
        }
        if (stdio) {
            String user = options.getOrDefault("--stdio-user", System.getProperty("user.name", "local"));
            McpRequestManager local = manager;
            McpRequestManager withUser = new McpRequestManager() {
                private McpTransportContext user(McpTransportContext context) {
                    return McpTransportContext.create(Map.of(USER, user));
                }

                @Override
                public reactor.core.publisher.Mono<io.modelcontextprotocol.modern.server.McpTransportResponse> handle(
                        McpTransportContext context, io.modelcontextprotocol.modern.JsonRpc.JSONRPCRequest request) {
                    return local.handle(user(context), request);
                }

                @Override
                public reactor.core.publisher.Mono<io.modelcontextprotocol.modern.server.McpTransportResponse>
                        handleBlocking(McpTransportContext context,
                                io.modelcontextprotocol.modern.JsonRpc.JSONRPCRequest request) {
                    return local.handleBlocking(user(context), request);
                }

                @Override
                public reactor.core.publisher.Mono<Void> handleNotification(McpTransportContext context,
                        io.modelcontextprotocol.modern.JsonRpc.JSONRPCNotification notification) {
                    return local.handleNotification(user(context), notification);
                }
            };
            StdioMcpTransport transport = new StdioMcpTransport(withUser, new JacksonMcpJsonMapperSupplier().get());
            System.err.println("example server: serving stdio (delete_branch, book_trip, ttl " + ttl + " s)");
            transport.start().block();
            if (store instanceof RedisReplayStore redis) {
                redis.close();
            }
            return;
        }
        HttpServletMcpTransport transport = HttpServletMcpTransport.builder(manager)
                .contextExtractor(request -> McpTransportContext.create(
                        request.getAttribute(USER) instanceof String user ? Map.of(USER, user) : Map.of()))
                .build();
        serve(transport, options, port, ttl, conformance, store);
    }

    /** The conformance suite's fixtures behind the codec, one fixed principal, refusals as JSON-RPC errors. */
    private static McpServer conformanceServer(StateSealer sealer) {
        return McpServer.builder()
                .serverInfo(McpSchema.Implementation.builder("mrtr-state-conformance-java", "1.0.0").build())
                .feature(ToolsFeature.ofSync(Conformance.tools()))
                .feature(io.modelcontextprotocol.modern.server.feature.PromptsFeature.ofSync(Conformance.prompts()))
                .requestStateCodec(dev.mrtrstate.mcp.MrtrStateCodec.builder(sealer)
                        .principal(context -> CONFORMANCE_PRINCIPAL).build())
                .build();
    }

    /**
     * delete_branch and book_trip, the prompt review_branch and the resource template trips://fares/{destination},
     * whose states the boundary binds to user, target and arguments.
     */
    private static McpServer exampleServer(ToolBoundary boundary) {
        GitTools git = new GitTools();
        Trips trips = new Trips();
        McpSyncTool deleteBranch = McpSyncTool.of(GitTools.DEFINITION, failures(git::call));
        McpSyncTool bookTrip = McpSyncTool.of(Trips.DEFINITION, failures((context, request) ->
                trips.call(context, request, (String) context.transportContext().get(USER))));
        McpSyncToolRepository tools = new McpSyncToolRepository() {
            @Override
            public ToolsPage list(McpRequestContext context, String cursor) {
                return ToolsPage.of(List.of(GitTools.DEFINITION, Trips.DEFINITION));
            }

            @Override
            public McpSyncTool find(McpRequestContext context, String name) {
                return name.equals("delete_branch") ? deleteBranch : name.equals("book_trip") ? bookTrip : null;
            }
        };
        return McpServer.builder()
                .serverInfo(McpSchema.Implementation.builder("mrtr-state-example-java", "1.0.0").build())
                .instructions("Delete branches (after the person confirms) and book trips.")
                .feature(ToolsFeature.ofSync(tools))
                .feature(io.modelcontextprotocol.modern.server.feature.PromptsFeature.ofSync(Asking.prompts()))
                .feature(io.modelcontextprotocol.modern.server.feature.ResourcesFeature.ofSync(Asking.resources()))
                .requestStateCodec(boundary.codec())
                .build();
    }

    /** Serve {@code transport} on an embedded Tomcat until SIGTERM or SIGINT. */
    private static void serve(HttpServletMcpTransport transport, Map<String, String> options, int port, int ttl,
            boolean conformance, ReplayStore store) throws Exception {

        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(Files.createTempDirectory("server-java").toString());
        Connector connector = new Connector();
        connector.setProperty("address", options.get("--host"));
        connector.setPort(port);
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", null);
        Wrapper servlet = Tomcat.addServlet(context, "mcp", transport);
        servlet.setAsyncSupported(true);
        context.addServletMappingDecoded("/mcp", "mcp");
        FilterDef hostCheck = new FilterDef();
        hostCheck.setFilterName("host");
        hostCheck.setFilter(hostCheck(options.get("--host")));
        hostCheck.setAsyncSupported("true");
        context.addFilterDef(hostCheck);
        FilterMap hostMap = new FilterMap();
        hostMap.setFilterName("host");
        hostMap.addURLPattern("/*");
        context.addFilterMap(hostMap);
        if (!conformance) {
            FilterDef auth = new FilterDef();
            auth.setFilterName("bearer");
            auth.setFilter(bearer());
            auth.setAsyncSupported("true");
            context.addFilterDef(auth);
            FilterMap map = new FilterMap();
            map.setFilterName("bearer");
            map.addURLPattern("/*");
            context.addFilterMap(map);
        }
        try {
            tomcat.start();
        } catch (Exception e) {
            System.err.println("example server: cannot listen on " + options.get("--host") + ":" + port);
            System.exit(2);
        }
        String host = options.get("--host").contains(":") ? "[" + options.get("--host") + "]" : options.get("--host");
        System.out.println("example server: listening on http://" + host + ":" + connector.getLocalPort()
                + "/mcp (" + (conformance ? "conformance fixtures" : "delete_branch, book_trip") + ", ttl " + ttl + " s)");
        System.out.flush();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                tomcat.stop();
                tomcat.destroy();
            } catch (Exception e) {
                // stopping anyway
            }
            if (store instanceof RedisReplayStore redis) {
                redis.close();
            }
            stopped.countDown();
        }));
        stopped.await();
    }

    /** A {@link Rounds.ToolFailure} as a tool error the person reads. */
    private static McpSyncTool.Handler failures(McpSyncTool.Handler handler) {
        return (context, request) -> {
            try {
                return handler.call(context, request);
            } catch (Rounds.ToolFailure failure) {
                return Rounds.failure(failure.getMessage());
            }
        };
    }

    /**
     * The Host check against DNS rebinding: a Host header that names another host than the one listened on is
     * answered 421 Misdirected Request (any port; for a loopback address, any loopback name).
     */
    private static Filter hostCheck(String listenHost) {
        Set<String> loopback = Set.of("127.0.0.1", "localhost", "[::1]", "::1");
        String own = listenHost.contains(":") ? "[" + listenHost + "]" : listenHost;
        Set<String> allowed = loopback.contains(listenHost) ? loopback : Set.of(own.toLowerCase(Locale.ROOT));
        return (request, response, chain) -> {
            String host = ((HttpServletRequest) request).getHeader("Host");
            String name = host == null ? "" : host.toLowerCase(Locale.ROOT).replaceFirst(":[0-9]*$", "");
            if (!allowed.contains(name)) {
                HttpServletResponse out = (HttpServletResponse) response;
                out.setStatus(421);
                out.setContentType("text/plain");
                out.getWriter().write("Invalid Host header");
                return;
            }
            chain.doFilter(request, response);
        };
    }

    /** Bearer authentication: a known token puts its user on the request, anything else is 401. */
    private static Filter bearer() {
        return (request, response, chain) -> {
            HttpServletRequest http = (HttpServletRequest) request;
            String header = http.getHeader("Authorization");
            String user = header != null && header.startsWith("Bearer ") ? EXAMPLE_TOKENS.get(header.substring(7)) : null;
            if (user == null) {
                HttpServletResponse out = (HttpServletResponse) response;
                out.setStatus(401);
                out.setHeader("WWW-Authenticate", "Bearer error=\"invalid_token\"");
                return;
            }
            http.setAttribute(USER, user);
            chain.doFilter(request, response);
        };
    }

}
