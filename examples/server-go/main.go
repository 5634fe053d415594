// Command server-go is the mrtr-state example MCP server in Go: delete_branch and
// book_trip over Streamable HTTP on loopback, with bearer-token users, on the
// official Go MCP SDK and the mrtr-state Go module. The twin of examples/server
// (Python) and examples/server-ts: same tools, same users, same issuer and key
// ring (MRTR_STATE_KEYS), and with --redis-url the same replay store, so the
// three serve one fleet.
//
//	server-go [--host 127.0.0.1] [--port 0] [--issuer URL] [--ttl 600]
//	          [--tool-refusal tool_error|jsonrpc] [--redis-url redis://...]
//	          [--dev-key [--dev-key-alg EdDSA|HS256|A256GCM]] [--conformance]
//	          [--jwks-url URL [--jwks-refresh 300]]   (a verify-only replica)
//	          [--stdio [--stdio-user USER]]
//
// Prints "example server: listening on http://HOST:PORT/mcp (...)" once it
// accepts connections. With --stdio it serves the same tools over standard
// input and output instead (mcpstate.Transport around the SDK's stdio
// transport), for one user (--stdio-user, by default the login name), to whom
// every state is bound. Its Ed25519 public keys are at /.well-known/mrtr-state-jwks.json.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	osuser "os/user"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	mrtrstate "github.com/mrtr-state/mrtr-state/go"
	"github.com/mrtr-state/mrtr-state/go/keys"
	"github.com/mrtr-state/mrtr-state/go/mcpstate"
	"github.com/mrtr-state/mrtr-state/go/replay"
	"github.com/mrtr-state/mrtr-state/go/replay/redisstore"
)

const (
	defaultIssuer = "https://tools.example.com"
	defaultTTL    = 600
	scope         = "tools"
	jwksPath      = "/.well-known/mrtr-state-jwks.json"
	// conformancePrincipal is the one user of the conformance server: the
	// suite's harness sends no credentials, so every state is bound to it.
	conformancePrincipal = "conformance-harness"
)

// exampleTokens are the example's users, as the Python example has them.
var exampleTokens = map[string]string{"alice-example-token": "alice", "bob-example-token": "bob"}

// verifyToken is the bearer-token verifier: the user goes to TokenInfo.UserID,
// where the middleware reads the principal.
func verifyToken(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	user, ok := exampleTokens[token]
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: user, Scopes: []string{scope}, Expiration: time.Now().Add(time.Hour)}, nil
}

func main() { os.Exit(run(os.Args[1:])) }

func run(argv []string) int {
	flags := flag.NewFlagSet("server-go", flag.ContinueOnError)
	host := flags.String("host", "127.0.0.1", "address to listen on")
	port := flags.Int("port", 0, "port to listen on (0: a free port)")
	issuer := flags.String("issuer", defaultIssuer, "the iss of sealed states")
	ttl := flags.Int("ttl", defaultTTL, "seconds a state lives")
	toolRefusal := flags.String("tool-refusal", "tool_error", "answer a refused state on tools/call as tool_error or jsonrpc")
	redisURL := flags.String("redis-url", os.Getenv("MRTR_STATE_REDIS_URL"), "redeem single-use states in this Redis (default $MRTR_STATE_REDIS_URL, else memory)")
	devKey := flags.Bool("dev-key", false, "seal with a key generated at start-up, for development only")
	devKeyAlg := flags.String("dev-key-alg", "EdDSA", "the algorithm of the --dev-key: EdDSA, HS256 or A256GCM")
	conformance := flags.Bool("conformance", false, "serve the MCP conformance suite's fixtures instead, without authentication")
	jwksURL := flags.String("jwks-url", "", "a verify-only replica: open states with the public JWKS at this URL (another server's "+jwksPath+"); it cannot seal")
	jwksRefresh := flags.Int("jwks-refresh", 300, "with --jwks-url: fetch the JWKS this often, in seconds; a new kid fetches at once, at most every min(30, this) seconds")
	stdio := flags.Bool("stdio", false, "serve the same tools over stdio for one user (--stdio-user) instead of Streamable HTTP")
	stdioUser := flags.String("stdio-user", "", "with --stdio: the one user every state is bound to (default: the login name)")
	if err := flags.Parse(argv); err != nil {
		return 2
	}
	if *ttl < 1 || (*toolRefusal != "tool_error" && *toolRefusal != "jsonrpc") {
		fmt.Fprintln(os.Stderr, "example server: --ttl must be at least 1 and --tool-refusal tool_error or jsonrpc")
		return 2
	}
	var source keys.Source
	var err error
	if *jwksURL != "" {
		refresh := time.Duration(max(1, *jwksRefresh)) * time.Second
		source, err = keys.LoadRemoteJWKS(context.Background(), *jwksURL, keys.WithRefreshInterval(refresh),
			keys.WithCooldown(min(30*time.Second, refresh)))
		if err != nil {
			fmt.Fprintf(os.Stderr, "example server: --jwks-url: %v\n", err)
			return 2
		}
	} else if source, err = localKeys(*devKey, *devKeyAlg); err != nil {
		fmt.Fprintf(os.Stderr, "example server: %v\nexample server: or start it with --dev-key for an ephemeral key\n", err)
		return 2
	}
	var store replay.Store = replay.NewMemoryStore(0, nil)
	if *redisURL != "" {
		redis, err := redisstore.NewFromURL(*redisURL)
		if err != nil {
			fmt.Fprintf(os.Stderr, "example server: --redis-url: %v\n", err)
			return 2
		}
		defer redis.Close()
		store = redis
	}
	sealer, err := mrtrstate.New(source, *issuer, mrtrstate.WithTTL(time.Duration(*ttl)*time.Second),
		mrtrstate.WithMaxLifetime(time.Duration(max(*ttl, defaultTTL))*time.Second), mrtrstate.WithReplayStore(store))
	if err != nil {
		fmt.Fprintf(os.Stderr, "example server: %v\n", err)
		return 2
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if *stdio {
		return serveStdio(sealer, *toolRefusal, *stdioUser, *ttl, logger)
	}
	server, handler, err := build(sealer, source, *conformance, *toolRefusal, logger)
	if err != nil {
		fmt.Fprintf(os.Stderr, "example server: %v\n", err)
		return 2
	}
	_ = server
	listener, err := net.Listen("tcp", net.JoinHostPort(*host, fmt.Sprint(*port)))
	if err != nil {
		fmt.Fprintf(os.Stderr, "example server: cannot listen on %s:%d\n", *host, *port)
		return 2
	}
	httpServer := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	what := "delete_branch, book_trip"
	if *conformance {
		what = "conformance fixtures"
	}
	fmt.Printf("example server: listening on http://%s/mcp (%s, ttl %d s)\n", listener.Addr(), what, *ttl)
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-stop; _ = httpServer.Shutdown(context.Background()) }()
	if err := httpServer.Serve(listener); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "example server: %v\n", err)
		return 1
	}
	return 0
}

// serveStdio serves delete_branch and book_trip over stdio until standard
// input closes. There is no bearer token on stdio: the one user of a local
// server is chosen here, deliberately (mcpstate.FixedPrincipal), and
// mcpstate.Transport shows the middleware each request as sent.
func serveStdio(sealer *mrtrstate.Sealer, toolRefusal, user string, ttl int, logger *slog.Logger) int {
	if user == "" {
		if current, err := osuser.Current(); err == nil {
			user = current.Username
		}
	}
	if user == "" {
		fmt.Fprintln(os.Stderr, "example server: --stdio needs --stdio-user (the login name is unknown)")
		return 2
	}
	server := newExampleServer(logger)
	opts := exampleOptions(toolRefusal, logger)
	opts.Principal = mcpstate.FixedPrincipal(user)
	if err := mcpstate.Install(server, sealer, opts); err != nil {
		fmt.Fprintf(os.Stderr, "example server: %v\n", err)
		return 2
	}
	fmt.Fprintf(os.Stderr, "example server: serving stdio (delete_branch, book_trip, ttl %d s) for %s\n", ttl, user)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := server.Run(ctx, mcpstate.Transport(&mcp.StdioTransport{})); err != nil && ctx.Err() == nil &&
		!errors.Is(err, io.EOF) {
		fmt.Fprintf(os.Stderr, "example server: %v\n", err)
		return 1
	}
	return 0
}

// newExampleServer is the MCP server with delete_branch and book_trip, the
// prompt review_branch and the resource template trips://fares/{destination},
// before the middleware is installed.
func newExampleServer(logger *slog.Logger) *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "mrtr-state-example-go", Version: "1.0.0"},
		&mcp.ServerOptions{Instructions: "Delete branches (after the person confirms) and book trips.", Logger: logger})
	addGitTools(server, exampleHost())
	addTripTools(server, &airline{})
	addAskingPromptAndResource(server)
	return server
}

// exampleOptions are the middleware's options for the example's tools.
func exampleOptions(toolRefusal string, logger *slog.Logger) *mcpstate.Options {
	refusal := mcpstate.ToolError
	if toolRefusal == "jsonrpc" {
		refusal = mcpstate.JSONRPCError
	}
	return &mcpstate.Options{
		ToolRefusal: refusal,
		// The acting rounds: a confirmed delete, and book_trip's seat round, which
		// books. Single use is per target, so book_trip's dates round is redeemed too.
		SingleUse: []string{"tools/call:delete_branch", "tools/call:book_trip"},
		Logger:    logger,
	}
}

// localKeys are the keys of a replica that seals: an ephemeral development
// key, the key file named by MRTR_STATE_KEYS_FILE (followed as it changes;
// SIGHUP rereads it at once), or MRTR_STATE_KEYS.
func localKeys(devKey bool, alg string) (keys.Source, error) {
	if !devKey && os.Getenv(keys.DefaultKeysFileVariable) != "" {
		file, err := keys.LoadKeyFileFromEnv()
		if err != nil {
			return nil, err
		}
		hangup := make(chan os.Signal, 1)
		signal.Notify(hangup, syscall.SIGHUP)
		go func() {
			for range hangup {
				_ = file.Reload() // a file that cannot be used is logged; the last good keys stay
			}
		}()
		return file, nil
	}
	if !devKey {
		return keys.FromEnv("")
	}
	fmt.Fprintln(os.Stderr, "example server: WARNING: --dev-key: sealing with an EPHEMERAL key generated now. Every "+
		"requestState dies with this process and no other replica can open it. Development only; set MRTR_STATE_KEYS for anything else.")
	k, err := keys.Generate(keys.Algorithm(alg), "")
	if err != nil {
		return nil, err
	}
	return keys.NewKeyring(k)
}

// build makes the MCP server with the middleware installed, and the HTTP
// handler: /mcp (bearer authentication, except in conformance mode) and the
// published JWKS.
func build(sealer *mrtrstate.Sealer, source keys.Source, conformance bool, toolRefusal string,
	logger *slog.Logger) (*mcp.Server, http.Handler, error) {
	var server *mcp.Server
	opts := exampleOptions(toolRefusal, logger)
	if conformance {
		server = mcp.NewServer(&mcp.Implementation{Name: "mrtr-state-example-go", Version: "1.0.0"},
			&mcp.ServerOptions{Instructions: "Delete branches (after the person confirms) and book trips.", Logger: logger})
		// No authentication: every state is bound to one principal, chosen here.
		opts = &mcpstate.Options{Principal: mcpstate.FixedPrincipal(conformancePrincipal), ToolRefusal: mcpstate.JSONRPCError, Logger: logger}
		addConformanceFixtures(server)
	} else {
		server = newExampleServer(logger)
	}
	if err := mcpstate.Install(server, sealer, opts); err != nil {
		return nil, nil, err
	}
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{Stateless: true, Logger: logger})
	// mcpstate.Handler shows the middleware each request as sent, so an empty or
	// non-string requestState and prompts/get arguments the SDK's typed params
	// cannot hold get the profile's answer (8.2), not the SDK's decoding error.
	var endpoint http.Handler = mcpstate.Handler(streamable)
	if !conformance {
		endpoint = auth.RequireBearerToken(verifyToken, &auth.RequireBearerTokenOptions{Scopes: []string{scope}})(endpoint)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", endpoint)
	mux.HandleFunc("GET "+jwksPath, func(w http.ResponseWriter, r *http.Request) {
		document := source.Keyring().PublicJWKS()
		if strings.HasPrefix(string(document), `{"keys":[]`) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"this server signs with secrets, which are never published"}`))
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.Header().Set("Cache-Control", "public, max-age=60")
		_, _ = w.Write(document)
	})
	return server, mux, nil
}
