import { Keyring, StateSealer } from "mrtr-state";
import { RedisReplayStore } from "mrtr-state/redis";

const clock = () => Date.now() / 1000;
const replayStore = await RedisReplayStore.fromUrl(process.env.REDIS_URL!, { clock });
const sealer = new StateSealer(Keyring.fromEnv(), { issuer: "https://files.example.com", clock, replayStore });
