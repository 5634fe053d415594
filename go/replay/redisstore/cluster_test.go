package redisstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mrtr-state/mrtr-state/go/replay"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fakeCluster is a one-node Redis Cluster on loopback that owns every slot,
// answers what go-redis asks when it connects, and never answers a SET: it
// counts the SETs it receives. It stops when the test ends.
func fakeCluster(t *testing.T) (addr string, sets *atomic.Int32) {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = listener.Close() })
	addr = listener.Addr().String()
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	sets = new(atomic.Int32)
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			go serveFake(conn, port, sets)
		}
	}()
	return addr, sets
}

func serveFake(conn net.Conn, port int, sets *atomic.Int32) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		switch strings.ToUpper(args[0]) {
		case "PING":
			_, _ = conn.Write([]byte("+PONG\r\n"))
		case "CLUSTER":
			_, _ = fmt.Fprintf(conn, "*1\r\n*3\r\n:0\r\n:16383\r\n*3\r\n$9\r\n127.0.0.1\r\n:%d\r\n$4\r\nnode\r\n", port)
		case "SET":
			sets.Add(1) // and no answer: as a primary paused past the read timeout
		default:
			_, _ = conn.Write([]byte("-ERR unknown command\r\n"))
		}
	}
}

// readCommand reads one RESP array of bulk strings.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil || len(line) < 3 || line[0] != '*' {
		return nil, errors.New("not a command")
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	args := make([]string, 0, n)
	for range n {
		head, err := r.ReadString('\n')
		if err != nil || head[0] != '$' {
			return nil, errors.New("not a bulk string")
		}
		size, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		args = append(args, string(buf[:size]))
	}
	if len(args) == 0 {
		return nil, errors.New("an empty command")
	}
	return args, nil
}

// go-redis's cluster client sends a command again when its answer did not
// arrive (up to MaxRedirects times); the first may have written, so a second
// SET NX would find the key and call a valid first redemption a replay. The
// store sends it once and says store_unavailable. About 0.3 s.
func TestASetWhoseAnswerDidNotArriveIsNeverSentAgain(t *testing.T) {
	addr, sets := fakeCluster(t)
	s, err := NewCluster([]string{addr}, &redis.ClusterOptions{ReadTimeout: 100 * time.Millisecond}, WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first, err := s.Redeem(context.Background(), "iss#unanswered-0000000000", time.Now().Unix()+60)
	if first || !errors.Is(err, replay.ErrUnavailable) {
		t.Fatalf("got %v %v; want store_unavailable", first, err)
	}
	if n := sets.Load(); n != 1 {
		t.Errorf("the SET NX was sent %d times; want once", n)
	}
}

// clusterNode is one redis-server of a test cluster.
type clusterNode struct {
	addr string
	cmd  *exec.Cmd
}

// startCluster starts three primaries and a replica of each on loopback, with a
// 1 s node timeout, and stops them when the test ends. Without redis-server the
// test skips, or fails under CI=true.
func startCluster(t *testing.T) []*clusterNode {
	t.Helper()
	executable, err := exec.LookPath("redis-server")
	if err != nil {
		if inCI() {
			t.Fatal("redis-server not found on PATH (CI=true: a missing tool is a failure; scripts/ci-deps installs it)")
		}
		t.Skip("redis-server not found on PATH; scripts/ci-deps installs it")
	}
	nodes := make([]*clusterNode, 6)
	ctx := context.Background()
	for i := range nodes {
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := listener.Addr().String()
		_, port, _ := net.SplitHostPort(addr)
		_ = listener.Close()
		dir := t.TempDir()
		cmd := exec.Command(executable, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--dir", dir, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "1000", "--cluster-replica-validity-factor", "0")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		nodes[i] = &clusterNode{addr: addr, cmd: cmd}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	}
	admin := func(n *clusterNode) *redis.Client {
		return redis.NewClient(&redis.Options{Addr: n.addr, MaxRetries: -1})
	}
	waitFor(t, "the nodes to start", func() bool {
		for _, n := range nodes {
			c := admin(n)
			err := c.Ping(ctx).Err()
			_ = c.Close()
			if err != nil {
				return false
			}
		}
		return true
	})
	ranges := [][2]int{{0, 5460}, {5461, 10922}, {10923, 16383}}
	host, port0, _ := net.SplitHostPort(nodes[0].addr)
	for i, n := range nodes {
		c := admin(n)
		if i < 3 {
			if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", ranges[i][0], ranges[i][1]).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.Do(ctx, "CLUSTER", "MEET", host, port0).Err(); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	}
	waitFor(t, "every node to know the six", func() bool {
		for _, n := range nodes {
			c := admin(n)
			text, err := c.ClusterNodes(ctx).Result()
			_ = c.Close()
			if err != nil || strings.Count(strings.TrimSpace(text), "\n") != 5 {
				return false
			}
		}
		return true
	})
	for i := 3; i < 6; i++ {
		primary := admin(nodes[i-3])
		id, err := primary.Do(ctx, "CLUSTER", "MYID").Text()
		_ = primary.Close()
		if err != nil {
			t.Fatal(err)
		}
		c := admin(nodes[i])
		if err := c.Do(ctx, "CLUSTER", "REPLICATE", id).Err(); err != nil {
			t.Fatal(err)
		}
		_ = c.Close()
	}
	waitFor(t, "the cluster to be ok with its replicas in sync", func() bool {
		for i, n := range nodes {
			c := admin(n)
			info, err := c.ClusterInfo(ctx).Result()
			repl, err2 := c.Info(ctx, "replication").Result()
			_ = c.Close()
			if err != nil || err2 != nil || !strings.Contains(info, "cluster_state:ok") {
				return false
			}
			if i >= 3 && !strings.Contains(repl, "master_link_status:up") {
				return false
			}
		}
		return true
	})
	return nodes
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The Cluster store follows a failover: the primary of a key's slot is killed,
// its replica is promoted, and the store redeems again without the old node's
// return (go-redis alone reloads its slot map on MOVED or every 60 s). Every
// redemption is of a new key, so none may be refused as replayed. The bound, 20
// s, is generous against what the test measures and logs (about 2 to 4 s: the
// 1 s node timeout, the election, one slot map reload); the whole test takes
// about 5 to 10 s.
func TestTheClusterStoreServesAgainAfterAFailoverWithoutTheOldPrimary(t *testing.T) {
	nodes := startCluster(t)
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.addr
	}
	s, err := NewCluster(addrs, &redis.ClusterOptions{DialTimeout: 300 * time.Millisecond,
		ReadTimeout: 300 * time.Millisecond, WriteTimeout: 300 * time.Millisecond}, WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	cluster := s.client.(*redis.ClusterClient)
	primaryOf := func(key string) string {
		node, err := cluster.MasterForKey(ctx, s.RedisKey(key))
		if err != nil {
			t.Fatal(err)
		}
		return node.Options().Addr
	}
	if first, err := s.Redeem(ctx, "iss#failover-before", time.Now().Unix()+60); err != nil || !first {
		t.Fatalf("before the failover: %v %v", first, err)
	}
	// The victim is the primary of one key's slot; every key redeemed after the
	// kill is new and lives on the victim's slots.
	victim := primaryOf("iss#failover-before")
	var keys []string
	for i := 0; len(keys) < 400; i++ {
		if key := fmt.Sprintf("iss#failover-%06d", i); primaryOf(key) == victim {
			keys = append(keys, key)
		}
	}
	for _, n := range nodes {
		if n.addr == victim {
			_ = n.cmd.Process.Kill()
			_ = n.cmd.Wait()
		}
	}
	killed := time.Now()
	replayed, refused := 0, 0
	for _, key := range keys {
		first, err := s.Redeem(ctx, key, time.Now().Unix()+60)
		if err == nil && first {
			break
		}
		if err == nil {
			replayed++
		} else {
			refused++
		}
		if time.Since(killed) > 20*time.Second {
			t.Fatalf("the store did not serve again within 20 s of the kill (%d refused store_unavailable)", refused)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("served again %.1f s after the primary was killed (%d redemptions refused store_unavailable meanwhile)",
		time.Since(killed).Seconds(), refused)
	if replayed != 0 {
		t.Errorf("%d valid first redemptions were refused as replayed", replayed)
	}
}

// A store connects when it is made and says why not; an outage is logged once
// with its cause, never the address or a key, and its end once; go-redis's own
// lines reach slog.Default() at Debug with the address replaced. About 0.5 s.
func TestAnOutageIsLoggedOnceWithItsCauseAndNoAddress(t *testing.T) {
	executable, err := exec.LookPath("redis-server")
	if err != nil {
		if inCI() {
			t.Fatal("redis-server not found on PATH (CI=true: a missing tool is a failure)")
		}
		t.Skip("redis-server not found on PATH")
	}
	listener, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	_ = listener.Close()
	var logged, library strings.Builder
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	previous := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&library, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(previous)
	s, err := NewFromURL("redis://"+addr+"/0", WithLogger(logger))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 3 {
		if _, err := s.Redeem(context.Background(), fmt.Sprintf("iss#secret-jti-%d", i), time.Now().Unix()+60); !errors.Is(err, replay.ErrUnavailable) {
			t.Fatalf("an unreachable Redis: %v", err)
		}
	}
	if n := strings.Count(logged.String(), "Redis cannot answer"); n != 1 || !strings.Contains(logged.String(), "could not be reached") {
		t.Errorf("the outage was logged %d times, or without its cause:\n%s", n, logged.String())
	}
	cmd := exec.Command(executable, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	waitFor(t, "redis-server to answer", func() bool { return s.Ping(context.Background()) == nil })
	if first, err := s.Redeem(context.Background(), "iss#secret-jti-after", time.Now().Unix()+60); err != nil || !first {
		t.Fatalf("after the outage: %v %v", first, err)
	}
	if n := strings.Count(logged.String(), "Redis answers again"); n != 1 {
		t.Errorf("the end of the outage was logged %d times:\n%s", n, logged.String())
	}
	for name, text := range map[string]string{"the store's log": logged.String(), "go-redis's lines": library.String()} {
		if strings.Contains(text, port) || strings.Contains(text, "secret-jti") {
			t.Errorf("%s show the address or a key:\n%s", name, text)
		}
	}
	if !strings.Contains(library.String(), "<address>") {
		t.Logf("go-redis logged no line with an address this time:\n%s", library.String())
	}
}
