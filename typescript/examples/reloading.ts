import { StateSealer } from "mrtr-state";
import { ReloadingKeyring } from "mrtr-state/reloading";

// The key file named by MRTR_STATE_KEYS_FILE (what MRTR_STATE_KEYS would hold), mode 0600; Node, Deno, Bun.
const keys = ReloadingKeyring.fromEnv();
keys.reloadOnSignal(); // `kill -HUP <pid>` rereads it at the next seal or open
export const sealer = new StateSealer(keys, { issuer: "https://tools.example.com" });
