import { RedisReplayStore } from "mrtr-state/redis";

const clock = () => Date.now() / 1000;
const options = {
  clock,
  timeout: 1, // a redemption Redis has not answered by then is refused (store_unavailable)
  connectTimeout: 5, // separate: a cold start may take longer to connect than a command to answer
  waitReplicas: 1, // accept only once a replica acknowledged the SET (WAIT 1 <waitTimeout>)
  waitTimeout: 0.5,
};

// A primary with replicas behind Sentinel: the store follows the primary Sentinel names.
export const sentinel = await RedisReplayStore.fromSentinel(
  [{ host: "10.0.0.1", port: 26379 }, { host: "10.0.0.2", port: 26379 }, { host: "10.0.0.3", port: 26379 }],
  "mrtr",
  options,
);

// A Redis Cluster: name several nodes; the client learns the rest and follows a failover.
export const cluster = await RedisReplayStore.fromCluster(["redis://10.0.1.1:6379", "redis://10.0.1.2:6379"], options);
