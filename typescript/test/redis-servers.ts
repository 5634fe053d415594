/**
 * Throwaway Redis topologies on loopback for the store tests: single servers, a primary with a replica,
 * a Cluster (made with `redis-cli --cluster create`) and Sentinels (`redis-server --sentinel`), each in
 * its own temporary directory. Every process started here is stopped by `stop()`, which the tests call.
 */

import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

export const HAVE_REDIS = spawnSync("redis-server", ["--version"]).status === 0 && spawnSync("redis-cli", ["--version"]).status === 0;

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/** A free loopback port below 55536 whose cluster bus port (10000 higher) is free too. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20000 + Math.floor(Math.random() * 35000);
    if ((await portFree(port)) && (await portFree(port + 10000))) return port;
  }
  throw new Error("no free pair of loopback ports");
}

/** `redis-cli -p PORT args...`: its trimmed output, or "" if it failed. */
export function cli(port: number, ...args: string[]): string {
  const result = spawnSync("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], { encoding: "utf8", timeout: 5000 });
  return result.status === 0 ? result.stdout.trim() : "";
}

/** Poll `ready` every 50 ms until it holds, at most `seconds`; an Error naming `what` after that. */
export async function until(what: string, seconds: number, ready: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    if (await ready()) return;
    await sleep(50);
  }
  throw new Error(`${what} did not happen within ${seconds} s`);
}

/** One redis-server (or Sentinel) process. */
export class RedisNode {
  #child: ChildProcess | undefined;
  constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(args: readonly string[], sentinelConfig?: string): Promise<void> {
    const base = ["--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.dir, "--save", "", "--appendonly", "no"];
    const argv = sentinelConfig === undefined ? [...base, ...args] : [sentinelConfig, "--sentinel", "--port", String(this.port), "--bind", "127.0.0.1"];
    this.#child = spawn("redis-server", argv, { stdio: "ignore" });
    await until(`redis on ${this.port} answering PING`, 10, () => cli(this.port, "PING") === "PONG");
  }

  /** Pause (SIGSTOP) or resume (SIGCONT) the process: a stall, as a long fork or a busy host makes one. */
  pause(paused: boolean): void {
    this.#child?.kill(paused ? "SIGSTOP" : "SIGCONT");
  }

  /** How many SET commands this node has run (INFO commandstats). */
  setCalls(): number {
    return Number(/cmdstat_set:calls=(\d+)/.exec(cli(this.port, "INFO", "commandstats"))?.[1] ?? "0");
  }

  /** SIGKILL (a crash) or SIGTERM, and wait for the exit. */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill(signal);
    await exited;
  }
}

/** A group of nodes in one temporary directory, stopped and removed together. */
export class Topology {
  readonly root = mkdtempSync(join(tmpdir(), "mrtr-state-redis-"));
  readonly nodes: RedisNode[] = [];

  async node(args: readonly string[] = [], sentinelConfig?: (port: number) => string): Promise<RedisNode> {
    const port = await freePort();
    const dir = join(this.root, String(port));
    spawnSync("mkdir", ["-p", dir]);
    const node = new RedisNode(port, dir);
    this.nodes.push(node);
    let config: string | undefined;
    if (sentinelConfig !== undefined) {
      config = join(dir, "sentinel.conf");
      writeFileSync(config, sentinelConfig(port));
    }
    await node.start(args, config);
    return node;
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.stop("SIGKILL")));
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** A primary with `replicas` replicas, in sync. */
export async function primaryWithReplicas(topology: Topology, replicas: number): Promise<RedisNode[]> {
  const primary = await topology.node();
  const nodes = [primary];
  for (let i = 0; i < replicas; i++) nodes.push(await topology.node(["--replicaof", "127.0.0.1", String(primary.port)]));
  await until("the replicas syncing", 15, () => (cli(primary.port, "INFO", "replication").match(/state=online/g) ?? []).length === replicas);
  return nodes;
}

/** A Cluster of three primaries and three replicas, every slot served and every replica in sync. */
export async function cluster(topology: Topology, nodeTimeoutMs = 1000): Promise<RedisNode[]> {
  const nodes: RedisNode[] = [];
  for (let i = 0; i < 6; i++) {
    nodes.push(
      await topology.node([
        "--cluster-enabled", "yes",
        "--cluster-config-file", "nodes.conf",
        "--cluster-node-timeout", String(nodeTimeoutMs),
        "--cluster-replica-validity-factor", "0",
      ]),
    );
  }
  const created = spawnSync(
    "redis-cli",
    ["--cluster", "create", ...nodes.map((node) => `127.0.0.1:${node.port}`), "--cluster-replicas", "1", "--cluster-yes"],
    { encoding: "utf8", timeout: 30_000 },
  );
  if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}\n${created.stderr}`);
  await until("the cluster serving every slot", 30, () => nodes.every((node) => /cluster_state:ok/.test(cli(node.port, "CLUSTER", "INFO"))));
  await until("every replica in sync", 30, () =>
    nodes.every((node) => {
      const info = cli(node.port, "INFO", "replication");
      return !/role:slave/.test(info) || /master_link_status:up/.test(info);
    }),
  );
  return nodes;
}

/** The hash slot of a key without a hash tag: CRC16 (XMODEM) modulo 16384, as Redis Cluster computes it. */
export function slotOf(key: string): number {
  let crc = 0;
  for (const byte of new TextEncoder().encode(key)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

/** Which primary port serves which key, by the slot map one node reports now. */
export function slotOwners(nodes: readonly RedisNode[]): (key: string) => number {
  const ranges: [number, number, number][] = [];
  for (const line of cli(nodes[0]!.port, "CLUSTER", "NODES").split("\n")) {
    const fields = line.split(" ");
    if (!fields[2]?.includes("master") || fields[2].includes("fail")) continue;
    const port = Number(fields[1]!.split(":")[1]!.split("@")[0]);
    for (const range of fields.slice(8)) {
      const [low, high = low] = range.split("-").map(Number);
      if (low !== undefined && high !== undefined) ranges.push([low, high, port]);
    }
  }
  return (key) => {
    const slot = slotOf(key);
    const owner = ranges.find(([low, high]) => slot >= low && slot <= high);
    if (owner === undefined) throw new Error(`no primary serves slot ${slot}`);
    return owner[2];
  };
}

/** A primary, one replica and three Sentinels (quorum 2) watching them as `service`. */
export async function sentinels(topology: Topology, service: string): Promise<{ data: RedisNode[]; sentinels: RedisNode[] }> {
  const data = await primaryWithReplicas(topology, 1);
  const primary = data[0]!;
  const watchers: RedisNode[] = [];
  for (let i = 0; i < 3; i++) {
    watchers.push(
      await topology.node([], () =>
        [
          `sentinel monitor ${service} 127.0.0.1 ${primary.port} 2`,
          `sentinel down-after-milliseconds ${service} 1000`,
          `sentinel failover-timeout ${service} 5000`,
          `sentinel parallel-syncs ${service} 1`,
          "",
        ].join("\n"),
      ),
    );
  }
  await until("the Sentinels seeing the replica and each other", 20, () =>
    watchers.every((watcher) => {
      const info = cli(watcher.port, "SENTINEL", "MASTER", service);
      const lines = info.split("\n");
      const field = (name: string): number => Number(lines[lines.indexOf(name) + 1]);
      return field("num-slaves") >= 1 && field("num-other-sentinels") >= 2;
    }),
  );
  return { data, sentinels: watchers };
}
