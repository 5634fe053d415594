// Command redeemlines redeems replay-store keys with one long-lived Redis
// store, one key a line, for the failover tests in tests/replay (a store must
// follow a failover while it runs, which a process per redemption cannot show):
//
//	redeemlines -cluster 127.0.0.1:7000,... [-timeout 300ms] [-wait 1 -wait-timeout 200ms]
//	redeemlines -url redis://127.0.0.1:6379/0
//	redeemlines -sentinel 127.0.0.1:26379,... -master NAME
//
// Each line of stdin is "KEY EXPIRES_AT" (the store key, iss#jti, and the
// retention's end in seconds since the epoch); each answer is one line of
// stdout, {"first": true|false} or {"error": "..."}. It ends at the end of stdin.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/mrtr-state/mrtr-state/go/replay/redisstore"
)

func main() {
	url := flag.String("url", "", "a single Redis")
	sentinels := flag.String("sentinel", "", "Sentinel addresses, comma-separated")
	master := flag.String("master", "", "the Sentinel service name")
	cluster := flag.String("cluster", "", "Redis Cluster node addresses, comma-separated")
	timeout := flag.Duration("timeout", 0, "the connect and command timeouts (default the store's)")
	wait := flag.Int("wait", 0, "replicas that must acknowledge a redemption (WAIT; 0: off)")
	waitTimeout := flag.Duration("wait-timeout", 0, "how long WAIT waits (default the store's)")
	flag.Parse()
	opts := []redisstore.Option{redisstore.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	if *wait > 0 {
		opts = append(opts, redisstore.WithWaitReplicas(*wait, *waitTimeout))
	}
	var store *redisstore.Store
	var err error
	switch {
	case *url != "":
		store, err = redisstore.NewFromURL(*url, opts...)
	case *sentinels != "":
		store, err = redisstore.NewSentinel(*master, strings.Split(*sentinels, ","),
			&redis.FailoverOptions{DialTimeout: *timeout, ReadTimeout: *timeout, WriteTimeout: *timeout}, opts...)
	case *cluster != "":
		store, err = redisstore.NewCluster(strings.Split(*cluster, ","),
			&redis.ClusterOptions{DialTimeout: *timeout, ReadTimeout: *timeout, WriteTimeout: *timeout}, opts...)
	default:
		err = fmt.Errorf("give -url, -sentinel or -cluster")
	}
	out := json.NewEncoder(os.Stdout)
	if err != nil {
		_ = out.Encode(map[string]any{"error": err.Error()})
		os.Exit(2)
	}
	defer store.Close()
	lines := bufio.NewScanner(os.Stdin)
	for lines.Scan() {
		key, expires, _ := strings.Cut(strings.TrimSpace(lines.Text()), " ")
		expiresAt, err := strconv.ParseInt(expires, 10, 64)
		answer := map[string]any{}
		if err != nil {
			answer["error"] = "a line is KEY EXPIRES_AT"
		} else if first, err := store.Redeem(context.Background(), key, expiresAt); err != nil {
			answer["error"] = err.Error()
		} else {
			answer["first"] = first
		}
		_ = out.Encode(answer)
	}
}
