/**
 * `book_trip`: a two-round form, dates first, then a seat on the flight those dates give (the twin of
 * examples/server/trips.py, with the same states, so either server can take either round).
 *
 * What the server learned (dates, flight, fare, the seats offered) travels in the sealed state, so any
 * replica can finish the booking and the client cannot change the fare it was quoted. The seat round
 * books; the server's boundary redeems every `book_trip` state once, so presenting it again is refused
 * as `replayed` and books nothing more.
 */

import { inputRequired as sdk, type McpServer, type ServerContext } from "@modelcontextprotocol/server";
import type { Json } from "mrtr-state";
import { inputRequired, readRetry } from "mrtr-state/mcp";
import * as z from "zod";

import { needsElicitation, ToolFailure, text } from "./tools.js";

/** Where the example airline flies, with its base return fare in euros. */
export const DESTINATIONS: Readonly<Record<string, number>> = { Lisbon: 212, Reykjavik: 348, Kyoto: 905 };
const SEATS = ["1A", "1C", "2A", "2C", "3A", "3C"];
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar date read from YYYY-MM-DD, or undefined. */
function parseDate(value: unknown): Date | undefined {
  const match = typeof value === "string" ? ISO_DATE.exec(value) : null;
  if (match === null) return undefined;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? date : undefined;
}

const isoWeekday = (date: Date) => (date.getUTCDay() === 0 ? 7 : date.getUTCDay());
const iso = (date: Date) => date.toISOString().slice(0, 10);

/** Flights, fares and seat bookings, in memory. */
export class Airline {
  readonly #taken = new Map<string, Set<string>>();
  #bookings = 0;

  /** The flight number for `destination` on `depart` (one flight a day). */
  static flight(destination: string, depart: Date): string {
    const index = Object.keys(DESTINATIONS).sort().indexOf(destination);
    const mmdd = iso(depart).slice(5).replace("-", "");
    return `MR${100 + index * 10 + isoWeekday(depart)}-${mmdd}`;
  }

  /** The return fare in euros: the base fare, plus 15% for a weekend departure. */
  static fare(destination: string, depart: Date): number {
    const base = DESTINATIONS[destination] ?? 0;
    return isoWeekday(depart) >= 6 ? Math.round(base * 1.15) : base;
  }

  /** The seats of `flight` nobody has booked. */
  freeSeats(flight: string): string[] {
    const taken = this.#taken.get(flight) ?? new Set();
    return SEATS.filter((seat) => !taken.has(seat));
  }

  /** Book `seat`; the booking reference, or undefined if the seat was taken meanwhile. */
  book(flight: string, seat: string): string | undefined {
    const taken = this.#taken.get(flight) ?? new Set<string>();
    this.#taken.set(flight, taken);
    if (taken.has(seat)) return undefined;
    taken.add(seat);
    this.#bookings += 1;
    return `MRT${String(this.#bookings).padStart(5, "0")}`;
  }
}

function askDates(destination: string, problem = "") {
  const dateField = { type: "string", format: "date" } as const;
  const question = sdk.elicit({
    message: `${problem} When do you want to fly to ${destination} and back?`.trim(),
    requestedSchema: {
      type: "object",
      properties: { depart: { ...dateField, title: "Departure date" }, return: { ...dateField, title: "Return date" } },
      required: ["depart", "return"],
    },
  });
  return inputRequired({ dates: question }, { state: { step: "dates" } });
}

function askSeat(state: { readonly [name: string]: Json }, problem = "") {
  const seats = (state.seats as string[]) ?? [];
  const question = sdk.elicit({
    message: `${problem} Flight ${String(state.flight)}, ${String(state.depart)} to ${String(state.return)}, ${String(state.fare_eur)} EUR return. Which seat?`.trim(),
    requestedSchema: { type: "object", properties: { seat: { type: "string", title: "Seat", enum: seats } }, required: ["seat"] },
  });
  return inputRequired({ seat: question }, { state });
}

/** Register `book_trip` on `server`. */
export function addTripTools(server: McpServer, airline: Airline): void {
  server.registerTool(
    "book_trip",
    {
      description: "Book a return flight: asks for the travel dates, then for a seat on the flight found.",
      inputSchema: z.object({ destination: z.string() }),
    },
    async ({ destination }, ctx: ServerContext) => {
      if (!Object.hasOwn(DESTINATIONS, destination)) {
        throw new ToolFailure(`No flights to '${destination}'; we fly to ${Object.keys(DESTINATIONS).sort().join(", ")}.`);
      }
      needsElicitation(ctx, "book_trip");
      const retry = readRetry(ctx);
      const state = retry.state;
      if (state === undefined) return askDates(destination);
      if (retry.declined("dates") || retry.declined("seat")) return text("Nothing was booked.");
      if (state.step === "dates") {
        const answer = retry.accepted("dates");
        if (answer === undefined) return askDates(destination);
        const depart = parseDate(answer.depart);
        const back = parseDate(answer.return);
        if (depart === undefined || back === undefined) return askDates(destination, "Give both dates as YYYY-MM-DD.");
        if (back < depart) return askDates(destination, "The return date is before the departure date.");
        const flight = Airline.flight(destination, depart);
        const seats = airline.freeSeats(flight);
        if (seats.length === 0) return askDates(destination, `Flight ${flight} is full.`);
        return askSeat({ step: "seat", flight, depart: iso(depart), return: iso(back), fare_eur: Airline.fare(destination, depart), seats });
      }
      const seat = retry.accepted("seat")?.seat;
      const offered = Array.isArray(state.seats) ? state.seats : [];
      if (typeof seat !== "string" || !offered.includes(seat)) return askSeat(state);
      const reference = airline.book(String(state.flight), seat);
      if (reference === undefined) return askSeat({ ...state, seats: airline.freeSeats(String(state.flight)) }, `Seat ${seat} was just taken.`);
      const sub = ctx.http?.authInfo?.extra?.sub;
      const traveller = typeof sub === "string" && sub !== "" ? ` for ${sub}` : "";
      return text(
        `Booked${traveller}: ${destination}, flight ${String(state.flight)}, ${String(state.depart)} to ` +
          `${String(state.return)}, seat ${seat}, ${String(state.fare_eur)} EUR. Reference ${reference}.`,
      );
    },
  );
}
