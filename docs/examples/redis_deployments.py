import os

from mrtr_state.replay.replay_redis import RedisReplayStore  # AsyncRedisReplayStore: the same builders

# One Redis (or a managed endpoint that fails over behind one address).
store = RedisReplayStore.from_url(os.environ["REDIS_URL"])

# A primary with replicas behind Sentinel: the client asks the Sentinels where the
# primary is, and asks again after a failover.
store = RedisReplayStore.from_sentinel(
    [("sentinel-1", 26379), ("sentinel-2", 26379), ("sentinel-3", 26379)],
    "mrtr-replay",                                   # the name the Sentinels monitor
    username="mrtr", password=os.environ["REDIS_PASSWORD"],  # sentinel_password= for the Sentinels
)

# A Redis Cluster: the client learns every node from the start-up nodes and sends each
# key to its shard. Give several start-up nodes (every primary, or nodes on different hosts).
store = RedisReplayStore.from_cluster(os.environ["REDIS_CLUSTER_URLS"].split(","))
