package mrtrstate.example;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpSyncResponse;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * {@code book_trip}: a two-round form, dates first, then a seat on the flight those dates give (the twin of
 * examples/server/trips.py and examples/server-ts/src/trips.ts, with the same states, so any replica can take any
 * round). What the server learned travels in the sealed state; every state is redeemed once.
 */
final class Trips {
    /** Where the example airline flies, with its base return fare in euros (sorted by name). */
    static final Map<String, Integer> DESTINATIONS = new TreeMap<>(Map.of("Lisbon", 212, "Reykjavik", 348, "Kyoto", 905));
    private static final List<String> SEATS = List.of("1A", "1C", "2A", "2C", "3A", "3C");

    /** The tool's definition. */
    static final McpSchema.Tool DEFINITION = McpSchema.Tool.builder("book_trip", Map.of("type", "object",
            "properties", Map.of("destination", Map.of("type", "string")), "required", List.of("destination")))
            .description("Book a return flight: asks for the travel dates, then for a seat on the flight found.")
            .build();

    private final Map<String, Set<String>> taken = new HashMap<>();
    private int bookings;

    static String flight(String destination, LocalDate depart) {
        int index = new ArrayList<>(DESTINATIONS.keySet()).indexOf(destination);
        String mmdd = depart.toString().substring(5).replace("-", "");
        return "MR" + (100 + index * 10 + depart.getDayOfWeek().getValue()) + "-" + mmdd;
    }

    static long fare(String destination, LocalDate depart) {
        int base = DESTINATIONS.getOrDefault(destination, 0);
        return depart.getDayOfWeek().getValue() >= 6 ? Math.round(base * 1.15) : base;
    }

    private synchronized List<String> freeSeats(String flight) {
        Set<String> gone = taken.getOrDefault(flight, Set.of());
        return SEATS.stream().filter(seat -> !gone.contains(seat)).toList();
    }

    private synchronized String book(String flight, String seat) {
        if (!taken.computeIfAbsent(flight, f -> new HashSet<>()).add(seat)) {
            return null;
        }
        bookings += 1;
        return String.format("MRT%05d", bookings);
    }

    private static LocalDate parseDate(Object value) {
        if (!(value instanceof String text) || !text.matches("\\d{4}-\\d{2}-\\d{2}")) {
            return null;
        }
        try {
            return LocalDate.parse(text);
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    private static McpSyncResponse<McpSchema.CallToolOutcome> askDates(String destination, String problem) {
        Map<String, Object> properties = new LinkedHashMap<>();
        properties.put("depart", Map.of("type", "string", "format", "date", "title", "Departure date"));
        properties.put("return", Map.of("type", "string", "format", "date", "title", "Return date"));
        Map<String, Object> schema = new LinkedHashMap<>();
        schema.put("type", "object");
        schema.put("properties", properties);
        schema.put("required", List.of("depart", "return"));
        String message = (problem + " When do you want to fly to " + destination + " and back?").strip();
        return Rounds.ask("dates", message, schema, JsonNodeFactory.instance.objectNode().put("step", "dates"));
    }

    private static McpSyncResponse<McpSchema.CallToolOutcome> askSeat(ObjectNode state, String problem) {
        List<String> seats = new ArrayList<>();
        state.path("seats").forEach(seat -> seats.add(seat.asText()));
        Map<String, Object> schema = new LinkedHashMap<>();
        schema.put("type", "object");
        schema.put("properties", Map.of("seat", Map.of("type", "string", "title", "Seat", "enum", seats)));
        schema.put("required", List.of("seat"));
        String message = (problem + " Flight " + state.path("flight").asText() + ", " + state.path("depart").asText()
                + " to " + state.path("return").asText() + ", " + state.path("fare_eur").asText()
                + " EUR return. Which seat?").strip();
        return Rounds.ask("seat", message, schema, state);
    }

    /** The handler (before the mrtr-state wrapper); {@code user} is the authenticated user. */
    McpSyncResponse<McpSchema.CallToolOutcome> call(McpRequestContext context, McpSchema.CallToolRequest request,
            String user) {
        Object given = request.arguments() == null ? null : request.arguments().get("destination");
        String destination = String.valueOf(given);
        if (!DESTINATIONS.containsKey(destination)) {
            throw new Rounds.ToolFailure("No flights to '" + destination + "'; we fly to "
                    + String.join(", ", DESTINATIONS.keySet()) + ".");
        }
        Rounds.needsElicitation(context, "book_trip");
        Rounds.Retry retry = Rounds.Retry.of(request);
        ObjectNode state = retry.state();
        if (state == null) {
            return askDates(destination, "");
        }
        if (retry.declined("dates") || retry.declined("seat")) {
            return Rounds.text("Nothing was booked.");
        }
        if ("dates".equals(state.path("step").asText(null))) {
            Map<?, ?> answer = retry.accepted("dates");
            if (answer == null) {
                return askDates(destination, "");
            }
            LocalDate depart = parseDate(answer.get("depart"));
            LocalDate back = parseDate(answer.get("return"));
            if (depart == null || back == null) {
                return askDates(destination, "Give both dates as YYYY-MM-DD.");
            }
            if (back.isBefore(depart)) {
                return askDates(destination, "The return date is before the departure date.");
            }
            String flight = flight(destination, depart);
            List<String> seats = freeSeats(flight);
            if (seats.isEmpty()) {
                return askDates(destination, "Flight " + flight + " is full.");
            }
            ObjectNode offer = JsonNodeFactory.instance.objectNode();
            offer.put("step", "seat").put("flight", flight).put("depart", depart.toString())
                    .put("return", back.toString()).put("fare_eur", fare(destination, depart));
            ArrayNode offered = offer.putArray("seats");
            seats.forEach(offered::add);
            return askSeat(offer, "");
        }
        Map<?, ?> answer = retry.accepted("seat");
        Object seat = answer == null ? null : answer.get("seat");
        List<String> offered = new ArrayList<>();
        state.path("seats").forEach(item -> offered.add(item.asText()));
        if (!(seat instanceof String chosen) || !offered.contains(chosen)) {
            return askSeat(state, "");
        }
        String flight = state.path("flight").asText();
        String reference = book(flight, chosen);
        if (reference == null) {
            ObjectNode again = state.deepCopy();
            ArrayNode free = again.putArray("seats");
            freeSeats(flight).forEach(free::add);
            return askSeat(again, "Seat " + chosen + " was just taken.");
        }
        String traveller = user == null || user.isEmpty() ? "" : " for " + user;
        JsonNode fare = state.path("fare_eur");
        return Rounds.text("Booked" + traveller + ": " + destination + ", flight " + flight + ", "
                + state.path("depart").asText() + " to " + state.path("return").asText() + ", seat " + chosen + ", "
                + fare.asText() + " EUR. Reference " + reference + ".");
    }
}
