package dev.mrtrstate.metrics;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;

/**
 * Receives the counted events of a sealer and of the key sources: the event's name and its attributes. The contract
 * is {@code spec/metrics.json}, the same in every language:
 *
 * <ul>
 *   <li>{@code seal}: a token was minted ({@code method});
 *   <li>{@code open}: a token was presented ({@code method}; {@code outcome} {@code accepted} or {@code refused});
 *   <li>{@code refusal}: a token was refused ({@code method}; {@code reason}, a code of the profile);
 *   <li>{@code redemption}: a single-use token was redeemed for the first time ({@code method});
 *   <li>{@code store_outage}: the replay store could not answer, so the token was refused
 *       {@code store_unavailable} ({@code method});
 *   <li>{@code key_refresh}: a key source looked for new keys ({@code source} {@code remote_jwks} or
 *       {@code key_file}; {@code outcome} {@code updated}, {@code unchanged} or {@code failed}).
 * </ul>
 *
 * <p>An attribute value is always one of a small, fixed set (a target method, a reason code, an outcome word, a kind
 * of key source): never a token, a claim value (user, tool name, {@code jti}), a {@code kid} or key material.
 *
 * <p>Any lambda is one ({@code (event, attributes) -> ...}); {@link OpenTelemetryMetrics} counts through
 * OpenTelemetry. A callback that throws never breaks a seal or an open: the error is logged once and the event is
 * lost.
 */
@FunctionalInterface
public interface StateMetrics {
    /**
     * Count one event.
     *
     * @param event a key of {@link #INSTRUMENTS}
     * @param attributes the attribute names {@link Instrument#attributes()} lists, with their values; unmodifiable
     */
    void record(String event, Map<String, String> attributes);

    /**
     * An event's OpenTelemetry counter.
     *
     * @param name the instrument's name ({@code mrtr_state.refusals}; a Prometheus exporter shows
     *     {@code mrtr_state_refusals_total})
     * @param unit its unit ({@code {token}} or {@code {refresh}})
     * @param description its description
     * @param attributes the names of the attributes the event carries
     */
    record Instrument(String name, String unit, String description, List<String> attributes) {}

    /** Every event, with its counter, in the order of {@code spec/metrics.json}. */
    Map<String, Instrument> INSTRUMENTS = Instruments.ALL;

    /**
     * Report {@code event} to {@code metrics}, if any; a callback that throws is logged once (per callback), never
     * thrown on.
     *
     * @param metrics the callback, or null
     * @param event a key of {@link #INSTRUMENTS}
     * @param names and values, alternately: {@code "method", "tools/call"}
     */
    static void record(StateMetrics metrics, String event, String... names) {
        if (metrics == null) {
            return;
        }
        Map<String, String> attributes = new LinkedHashMap<>();
        for (int i = 0; i + 1 < names.length; i += 2) {
            attributes.put(names[i], names[i + 1]);
        }
        try {
            metrics.record(event, Collections.unmodifiableMap(attributes));
        } catch (RuntimeException e) {
            if (Instruments.FAILED.add(System.identityHashCode(metrics))) {
                Instruments.LOG.log(Level.WARNING, "the metrics callback " + metrics.getClass().getName()
                        + " threw " + e.getClass().getSimpleName() + " on '" + event + "'; counters are being lost");
            }
        }
    }
}
