package dev.mrtrstate.metrics;

import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.common.AttributesBuilder;
import io.opentelemetry.api.metrics.LongCounter;
import io.opentelemetry.api.metrics.Meter;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * {@link StateMetrics} as OpenTelemetry counters ({@link StateMetrics#INSTRUMENTS}), made by the meter
 * {@value #SCOPE} of the application's OpenTelemetry.
 *
 * <p>Needs {@code io.opentelemetry:opentelemetry-api} only (an optional dependency of this library). Without an SDK
 * configured, OpenTelemetry's meter is a no-op and the counters cost nothing; with one, they are exported by
 * whatever the application set up (Prometheus, OTLP, ...).
 *
 * <pre>{@code
 * StateSealer sealer = StateSealer.builder(ring, issuer).metrics(OpenTelemetryMetrics.global()).build();
 * }</pre>
 */
public final class OpenTelemetryMetrics implements StateMetrics {
    /** The instrumentation scope (meter) name, as in every language. */
    public static final String SCOPE = "mrtr_state";
    /** The version given with the scope: this library's. */
    public static final String VERSION = "0.1.0";

    private final Map<String, LongCounter> counters = new HashMap<>();

    /**
     * The counters of this OpenTelemetry's meter provider.
     *
     * @param openTelemetry the application's OpenTelemetry
     */
    public OpenTelemetryMetrics(OpenTelemetry openTelemetry) {
        Meter meter = Objects.requireNonNull(openTelemetry, "openTelemetry").meterBuilder(SCOPE)
                .setInstrumentationVersion(VERSION).build();
        for (Map.Entry<String, Instrument> entry : INSTRUMENTS.entrySet()) {
            Instrument instrument = entry.getValue();
            counters.put(entry.getKey(), meter.counterBuilder(instrument.name()).setUnit(instrument.unit())
                    .setDescription(instrument.description()).build());
        }
    }

    /**
     * The counters of the global OpenTelemetry ({@link GlobalOpenTelemetry#get()}): a no-op until the application
     * (or the OpenTelemetry Java agent) registers an SDK.
     *
     * @return the metrics
     */
    public static OpenTelemetryMetrics global() {
        return new OpenTelemetryMetrics(GlobalOpenTelemetry.get());
    }

    /**
     * Add 1 to the counter of {@code event} with {@code attributes}.
     *
     * @throws IllegalArgumentException for an event {@link StateMetrics#INSTRUMENTS} does not list
     */
    @Override
    public void record(String event, Map<String, String> attributes) {
        LongCounter counter = counters.get(event);
        if (counter == null) {
            throw new IllegalArgumentException("not an event of spec/metrics.json");
        }
        AttributesBuilder builder = Attributes.builder();
        attributes.forEach(builder::put);
        counter.add(1, builder.build());
    }

    @Override
    public String toString() {
        return "OpenTelemetryMetrics()";
    }
}
