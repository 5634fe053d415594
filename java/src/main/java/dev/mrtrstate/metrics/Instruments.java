package dev.mrtrstate.metrics;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Logger;

/** The table behind {@link StateMetrics#INSTRUMENTS}, and the record of callbacks that failed. */
final class Instruments {
    static final Logger LOG = Logger.getLogger("dev.mrtrstate.metrics");
    static final Set<Integer> FAILED = ConcurrentHashMap.newKeySet();
    static final Map<String, StateMetrics.Instrument> ALL;

    static {
        Map<String, StateMetrics.Instrument> all = new LinkedHashMap<>();
        all.put("seal", new StateMetrics.Instrument("mrtr_state.seals", "{token}", "requestState tokens minted",
                List.of("method")));
        all.put("open", new StateMetrics.Instrument("mrtr_state.opens", "{token}",
                "requestState tokens presented, by outcome", List.of("method", "outcome")));
        all.put("refusal", new StateMetrics.Instrument("mrtr_state.refusals", "{token}",
                "requestState tokens refused, by reason code", List.of("method", "reason")));
        all.put("redemption", new StateMetrics.Instrument("mrtr_state.redemptions", "{token}",
                "single-use requestState tokens redeemed", List.of("method")));
        all.put("store_outage", new StateMetrics.Instrument("mrtr_state.store_outages", "{token}",
                "requestState tokens refused because the replay store could not answer", List.of("method")));
        all.put("key_refresh", new StateMetrics.Instrument("mrtr_state.key_refreshes", "{refresh}",
                "key source refreshes, by outcome", List.of("source", "outcome")));
        ALL = Collections.unmodifiableMap(all);
    }

    private Instruments() {}
}
