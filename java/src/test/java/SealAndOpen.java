import com.fasterxml.jackson.databind.JsonNode;
import dev.mrtrstate.InvalidRequestStateException;
import dev.mrtrstate.Keyring;
import dev.mrtrstate.StateSealer;
import dev.mrtrstate.binding.Binding;
import dev.mrtrstate.keys.KeyAlgorithm;
import dev.mrtrstate.replay.MemoryReplayStore;
import java.util.Map;

/** java/README.md's "Seal and open": a state sealed for alice opens for her, is refused for bob, and is single use. */
public final class SealAndOpen {
    private SealAndOpen() {}

    /** Seal, open, refuse another user, redeem once. */
    public static void main(String[] args) throws InvalidRequestStateException {
        Keyring ring = Keyring.generate(KeyAlgorithm.EDDSA);    // or Keyring.fromEnv(): MRTR_STATE_KEYS
        StateSealer sealer = StateSealer.builder(ring, "https://mcp.example.com")
                .replayStore(new MemoryReplayStore())           // for open(..., true, null): single use
                .build();

        Map<String, Object> arguments = Map.of("branch", "release-1.2");  // a Map or a JsonNode
        Binding first = Binding.tool("alice", "delete_branch", arguments);
        String token = sealer.seal(Map.of("head", "4b1d0aa"), first);   // into InputRequiredResult.requestState

        JsonNode state = sealer.open(token, Binding.tool("alice", "delete_branch", arguments));
        System.out.println(state);
        try {
            sealer.open(token, Binding.tool("bob", "delete_branch", arguments));
        } catch (InvalidRequestStateException refused) {
            System.out.println(refused.reason().code());   // switch on refused.reason(): Reason.WRONG_USER
            System.out.println(refused.getMessage());      // the code's fixed sentence, safe to show the client
            // refused.detail(): which rule failed, for your log; never a token, claim, state or key
        }
        sealer.open(token, first, true, null);              // consume: redeemed once
        try {
            sealer.open(token, first, true, null);
        } catch (InvalidRequestStateException refused) {
            System.out.println(refused.reason().code());   // replayed
        }
    }
}
