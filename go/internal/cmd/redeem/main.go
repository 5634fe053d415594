// Command redeem redeems one replay-store key with the module's Redis store, for
// the cross-language tests in tests/replay (a key the Go store wrote must be
// refused by the Python store, and the other way round):
//
//	redeem -url redis://127.0.0.1:6379/0 -key 'iss#jti' -expires-at N
//	redeem -sentinel 127.0.0.1:26379,... -master NAME -key ... -expires-at N
//	redeem -cluster 127.0.0.1:7000 -key ... -expires-at N [-wait 1]
//
// It prints {"first": true|false} or {"error": "..."} and exits 0.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mrtr-state/mrtr-state/go/replay/redisstore"
)

func main() {
	url := flag.String("url", "", "a single Redis")
	sentinels := flag.String("sentinel", "", "Sentinel addresses, comma-separated")
	master := flag.String("master", "", "the Sentinel service name")
	cluster := flag.String("cluster", "", "Redis Cluster node addresses, comma-separated")
	key := flag.String("key", "", "the store key, iss#jti")
	expiresAt := flag.Int64("expires-at", 0, "the retention's end, seconds since the epoch")
	wait := flag.Int("wait", 0, "replicas to WAIT for")
	flag.Parse()
	var opts []redisstore.Option
	if *wait > 0 {
		opts = append(opts, redisstore.WithWaitReplicas(*wait, 500*time.Millisecond))
	}
	var store *redisstore.Store
	var err error
	switch {
	case *url != "":
		store, err = redisstore.NewFromURL(*url, opts...)
	case *sentinels != "":
		store, err = redisstore.NewSentinel(*master, strings.Split(*sentinels, ","), nil, opts...)
	case *cluster != "":
		store, err = redisstore.NewCluster(strings.Split(*cluster, ","), nil, opts...)
	default:
		err = fmt.Errorf("give -url, -sentinel or -cluster")
	}
	answer := map[string]any{}
	if err == nil {
		var first bool
		first, err = store.Redeem(context.Background(), *key, *expiresAt)
		answer["first"] = first
		_ = store.Close()
	}
	if err != nil {
		answer = map[string]any{"error": err.Error()}
	}
	_ = json.NewEncoder(os.Stdout).Encode(answer)
}
