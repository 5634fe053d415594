package redisstore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mrtr-state/mrtr-state/go/replay"
	"github.com/mrtr-state/mrtr-state/go/token/base64url"
)

// DefaultPrefix is put before every key, as the Python and TypeScript stores do.
const DefaultPrefix = "mrtr-state:jti:"

// Default timeouts of the clients the constructors make: a connection is given
// DefaultConnectTimeout to open, a command DefaultTimeout to be answered.
const (
	DefaultConnectTimeout = 5 * time.Second
	DefaultTimeout        = 2 * time.Second
	DefaultWaitTimeout    = 500 * time.Millisecond
)

// Store is a replay.Store in Redis. It is safe for concurrent use as go-redis
// clients are.
//
// A SET NX is sent once: a command whose answer did not arrive (a timeout, a
// connection lost) is never sent again, by the store or by go-redis (whose
// cluster client otherwise retries it up to MaxRedirects times), since the
// first may have written: it is store_unavailable. On a Cluster, a redemption
// that fails for want of an answer makes the client reload its slot map, so the
// store follows a failover as soon as a replica is promoted (go-redis alone
// reloads on MOVED or every 60 s). An outage is logged once, when it begins,
// with its cause (never a token or a key, never an address), and its end once.
type Store struct {
	client         redis.UniversalClient
	prefix         string
	clock          func() time.Time
	replicas       int
	waitTimeout    time.Duration
	logger         *slog.Logger
	connectTimeout time.Duration
	outage         atomic.Bool
}

// Option configures a Store.
type Option func(*Store) error

// WithPrefix sets the key prefix (default DefaultPrefix); give each application
// sharing one Redis its own, and the same in every language.
func WithPrefix(prefix string) Option {
	return func(s *Store) error { s.prefix = prefix; return nil }
}

// WithClock sets the clock that measures retention (default time.Now); give it
// the sealer's clock.
func WithClock(clock func() time.Time) Option {
	return func(s *Store) error {
		if clock == nil {
			return errors.New("redisstore: WithClock needs a clock")
		}
		s.clock = clock
		return nil
	}
}

// WithWaitReplicas is the durability option: after a winning SET, WAIT for n
// replicas (1 to 100) for at most timeout (DefaultWaitTimeout when 0), and
// accept only when they acknowledged; the client's read timeout must be longer.
func WithWaitReplicas(n int, timeout time.Duration) Option {
	return func(s *Store) error {
		if n < 0 || n > 100 {
			return errors.New("redisstore: the replicas to wait for must be from 0 to 100")
		}
		if timeout == 0 {
			timeout = DefaultWaitTimeout
		}
		if timeout < time.Millisecond {
			return errors.New("redisstore: the WAIT timeout must be at least 1 ms (WAIT 0 waits forever)")
		}
		s.replicas, s.waitTimeout = n, timeout
		return nil
	}
}

// WithLogger sets where the store says it connected, why it could not, and
// when an outage begins and ends (default slog.Default()).
func WithLogger(logger *slog.Logger) Option {
	return func(s *Store) error {
		if logger == nil {
			return errors.New("redisstore: WithLogger needs a logger")
		}
		s.logger = logger
		return nil
	}
}

// WithConnectTimeout bounds the PING New sends to connect (default
// DefaultConnectTimeout plus DefaultTimeout); the client's own DialTimeout
// bounds each connection it opens.
func WithConnectTimeout(d time.Duration) Option {
	return func(s *Store) error {
		if d <= 0 {
			return errors.New("redisstore: the connect timeout must be positive")
		}
		s.connectTimeout = d
		return nil
	}
}

// New makes a store on client: a *redis.Client (also one NewFailoverClient
// made) or a *redis.ClusterClient. Give the client timeouts and MaxRetries -1.
// It connects at once (a PING, bounded by WithConnectTimeout) and logs that it
// did, or why not; a store that cannot connect is returned all the same, and
// refuses redemptions (store_unavailable) until Redis answers.
func New(client redis.UniversalClient, opts ...Option) (*Store, error) {
	if client == nil {
		return nil, errors.New("redisstore: a client is required")
	}
	s := &Store{client: client, prefix: DefaultPrefix, clock: time.Now, logger: slog.Default(),
		connectTimeout: DefaultConnectTimeout + DefaultTimeout}
	for _, opt := range opts {
		if err := opt(s); err != nil {
			return nil, err
		}
	}
	quietGoRedis()
	ctx, cancel := context.WithTimeout(context.Background(), s.connectTimeout)
	defer cancel()
	if err := s.Ping(ctx); err != nil {
		s.down(err)
	} else {
		s.logger.Info("redisstore: connected to Redis")
	}
	return s, nil
}

// Ping asks Redis for an answer (on a Cluster, the slot map is loaded too):
// nil when it answered, else the store_unavailable error that says why.
func (s *Store) Ping(ctx context.Context) error {
	if c, ok := s.client.(*redis.ClusterClient); ok {
		if err := c.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error {
			return node.Ping(ctx).Err()
		}); err != nil {
			return failure(err)
		}
		return nil
	}
	if err := s.client.Ping(ctx).Err(); err != nil {
		return failure(err)
	}
	return nil
}

// down notes a failed redemption or connection: the first of an outage is
// logged with its cause; on a Cluster the slot map is reloaded, for a
// failover may have moved the key's primary.
func (s *Store) down(err error) {
	if c, ok := s.client.(*redis.ClusterClient); ok && !errors.Is(err, context.Canceled) {
		c.ReloadState(context.Background()) // asynchronous; at most one at a time
	}
	if !s.outage.Swap(true) {
		s.logger.Warn("redisstore: Redis cannot answer; single-use redemptions are refused "+
			"(store_unavailable) until it does", "cause", err.Error())
	}
}

// up notes an answer: the end of an outage is logged once.
func (s *Store) up() {
	if s.outage.Swap(false) {
		s.logger.Info("redisstore: Redis answers again")
	}
}

// bounded gives a client's options the store's timeouts and no retries.
func bounded(dial, read, write *time.Duration, retries *int) {
	if *dial == 0 {
		*dial = DefaultConnectTimeout
	}
	for _, d := range []*time.Duration{read, write} {
		if *d == 0 {
			*d = DefaultTimeout
		}
	}
	*retries = -1 // never retry a SET NX
}

// goRedisLogger passes go-redis's own log lines to slog.Default() at Debug,
// with every address in them replaced: its default logger prints them to
// stderr, naming the Redis it could not reach.
type goRedisLogger struct{}

var address = regexp.MustCompile(`\[[0-9A-Fa-f:.]+\](:\d+)?|[A-Za-z0-9][A-Za-z0-9.-]*:\d{1,5}\b`)

func (goRedisLogger) Printf(ctx context.Context, format string, v ...any) {
	slog.Default().DebugContext(ctx, "redisstore: go-redis: "+address.ReplaceAllString(fmt.Sprintf(format, v...), "<address>"))
}

var quietOnce sync.Once

// quietGoRedis installs goRedisLogger as go-redis's logger (a setting of the
// whole process) once, when the first store is made. An application that
// wants go-redis's lines as they are calls redis.SetLogger after making its
// stores.
func quietGoRedis() { quietOnce.Do(func() { redis.SetLogger(goRedisLogger{}) }) }

// NewFromURL makes a store on a single Redis given as a redis:// or rediss:// URL.
func NewFromURL(url string, opts ...Option) (*Store, error) {
	o, err := redis.ParseURL(url)
	if err != nil {
		return nil, errors.New("redisstore: the Redis URL cannot be read (the URL is not shown)")
	}
	bounded(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.MaxRetries)
	return New(redis.NewClient(o), opts...)
}

// NewSentinel makes a store on the primary named master behind the Sentinels
// at addrs, with go-redis's failover client; o may set passwords and TLS (nil
// for none).
func NewSentinel(master string, addrs []string, o *redis.FailoverOptions, opts ...Option) (*Store, error) {
	if o == nil {
		o = &redis.FailoverOptions{}
	}
	cp := *o
	cp.MasterName, cp.SentinelAddrs = master, addrs
	bounded(&cp.DialTimeout, &cp.ReadTimeout, &cp.WriteTimeout, &cp.MaxRetries)
	return New(redis.NewFailoverClient(&cp), opts...)
}

// NewCluster makes a store on the Redis Cluster reached at addrs, with
// go-redis's cluster client; o may set passwords and TLS (nil for none).
func NewCluster(addrs []string, o *redis.ClusterOptions, opts ...Option) (*Store, error) {
	if o == nil {
		o = &redis.ClusterOptions{}
	}
	cp := *o
	cp.Addrs = addrs
	bounded(&cp.DialTimeout, &cp.ReadTimeout, &cp.WriteTimeout, &cp.MaxRetries)
	// The store's commands go to the key's slot's primary; go-redis's routing
	// policies would first fetch COMMAND INFO (and log its failures, addresses
	// and all).
	cp.DisableRoutingPolicies = true
	return New(redis.NewClusterClient(&cp), opts...)
}

// Close closes the client.
func (s *Store) Close() error { return s.client.Close() }

// RedisKey is the Redis key under which the redemption of key is recorded:
// the prefix and BASE64URL(SHA-256(key)).
func (s *Store) RedisKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return s.prefix + base64url.Encode(sum[:])
}

func unavailable(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{replay.ErrUnavailable}, args...)...)
}

// failure names what failed without the error's text, which may hold an address.
func failure(err error) error {
	var redisErr redis.Error
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return unavailable("the redemption was not answered in time (the request's context ended)")
	case errors.As(err, &netErr) && netErr.Timeout():
		return unavailable("Redis did not answer in time")
	case errors.As(err, &netErr):
		return unavailable("Redis could not be reached")
	case errors.As(err, &redisErr):
		code, _, _ := strings.Cut(redisErr.Error(), " ")
		if code == "" || strings.ToUpper(code) != code {
			code = "an error reply"
		}
		return unavailable("Redis refused the redemption (%s)", code)
	}
	return unavailable("the Redis client failed (%T)", err)
}

// noRetry is a command go-redis never sends twice: its cluster client retries
// a command whose answer did not arrive (up to MaxRedirects times, whatever
// MaxRetries says) unless the command says no. MOVED and ASK are still followed:
// a node that answers MOVED did not write.
type noRetry struct{ *redis.Cmd }

// NoRetry tells go-redis not to send the command again.
func (noRetry) NoRetry() bool { return true }

// Redeem implements replay.Store: SET NX PX, true when this call recorded key.
// With WithWaitReplicas, true only once that many replicas acknowledged.
func (s *Store) Redeem(ctx context.Context, key string, expiresAt int64) (bool, error) {
	won, err := s.redeem(ctx, key, expiresAt)
	switch {
	case err == nil:
		s.up()
	case err != errRetentionOver && errors.Is(err, replay.ErrUnavailable):
		s.down(err)
	}
	return won, err
}

// errRetentionOver refuses a retention already over by the store's clock: no
// fault of Redis.
var errRetentionOver = unavailable("the redemption's retention has already ended by the store's clock; " +
	"give the store the sealer's clock")

func (s *Store) redeem(ctx context.Context, key string, expiresAt int64) (bool, error) {
	rkey := s.RedisKey(key)
	left := time.Unix(expiresAt, 0).Sub(s.clock())
	ms := (left + time.Millisecond - 1) / time.Millisecond // rounded up
	if ms < 1 {
		return false, errRetentionOver
	}
	set := []any{"SET", rkey, 1, "NX", "PX", int64(ms)}
	if s.replicas == 0 {
		cmd := noRetry{redis.NewCmd(ctx, set...)}
		_ = s.client.Process(ctx, cmd)
		return verdict(cmd.Err())
	}
	// WAIT counts the replicas that have the writes of its own connection, so
	// the SET and the WAIT go down one connection to the key's primary.
	var node *redis.Client
	switch c := s.client.(type) {
	case *redis.ClusterClient:
		primary, err := c.MasterForKey(ctx, rkey)
		if err != nil {
			return false, failure(err)
		}
		node = primary
	case *redis.Client:
		node = c
	default:
		return false, unavailable("the durability option needs a *redis.Client or *redis.ClusterClient")
	}
	conn := node.Conn()
	defer conn.Close()
	var setCmd, waitCmd *redis.Cmd
	_, err := conn.Pipelined(ctx, func(p redis.Pipeliner) error {
		setCmd = p.Do(ctx, set...)
		waitCmd = p.Do(ctx, "WAIT", s.replicas, s.waitTimeout.Milliseconds())
		return nil
	})
	won, setErr := verdict(setCmd.Err())
	if setErr != nil || !won {
		return won, setErr // a replay is a replay whatever WAIT answered
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, failure(err)
	}
	acknowledged, err := waitCmd.Int64()
	if err != nil {
		return false, failure(err)
	}
	if acknowledged < int64(s.replicas) {
		return false, unavailable("Redis did not confirm the redemption on %d replica(s) in time (%d acknowledged)",
			s.replicas, acknowledged)
	}
	return true, nil
}

// verdict reads SET NX's answer: OK when it wrote, nil when the key existed.
func verdict(err error) (bool, error) {
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, redis.Nil):
		return false, nil
	}
	return false, failure(err)
}
