"""``book_trip``: a two-round form, dates first, then a seat on the flight those dates give.

Round one asks for the travel dates. Round two has found the flight and quoted a
fare, and asks for a seat among those free. What the server learned (dates,
flight, fare, the seats offered) travels in the sealed state, so any replica can
finish the booking, and the client cannot change the fare it was quoted. A
retry without the answer the server asked for is asked again, not failed.

The seat round acts: it books. Its state is single use (the server's
``StateBoundary`` redeems every ``book_trip`` state once, see ``app.py``), so a
client that presents the seat-round state again, with the same seat or another,
is refused as ``replayed`` and books nothing more.
"""

from __future__ import annotations

import threading
from datetime import date
from typing import Any, Final

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

from mrtr_state.mcp import input_required, read_retry

#: Where the example airline flies, with its base return fare in euros.
DESTINATIONS: Final = {"Lisbon": 212, "Reykjavik": 348, "Kyoto": 905}
SEATS: Final = ("1A", "1C", "2A", "2C", "3A", "3C")


class Airline:
    """Flights, fares and seat bookings, in memory; safe to share between threads."""

    def __init__(self) -> None:
        self._taken: dict[str, set[str]] = {}
        self._lock = threading.Lock()
        self._bookings = 0

    @staticmethod
    def flight(destination: str, depart: date) -> str:
        """The flight number for ``destination`` on ``depart`` (one flight a day)."""
        return f"MR{100 + sorted(DESTINATIONS).index(destination) * 10 + depart.isoweekday()}-{depart:%m%d}"

    @staticmethod
    def fare(destination: str, depart: date, back: date) -> int:
        """The return fare in euros: the base fare, plus 15% for a weekend departure."""
        base = DESTINATIONS[destination]
        return round(base * 1.15) if depart.isoweekday() >= 6 else base

    def free_seats(self, flight: str) -> list[str]:
        """The seats of ``flight`` nobody has booked."""
        with self._lock:
            taken = self._taken.get(flight, set())
            return [seat for seat in SEATS if seat not in taken]

    def book(self, flight: str, seat: str) -> str | None:
        """Book ``seat``; the booking reference, or ``None`` if the seat was taken meanwhile."""
        with self._lock:
            taken = self._taken.setdefault(flight, set())
            if seat in taken:
                return None
            taken.add(seat)
            self._bookings += 1
            return f"MRT{self._bookings:05d}"


def _parse_dates(answer: dict[str, Any]) -> tuple[date, date]:
    try:
        depart = date.fromisoformat(str(answer.get("depart")))
        back = date.fromisoformat(str(answer.get("return")))
    except ValueError:
        raise ValueError("Give both dates as YYYY-MM-DD.") from None
    if back < depart:
        raise ValueError("The return date is before the departure date.")
    return depart, back


def _ask_dates(destination: str, problem: str = "") -> InputRequiredResult:
    date_field = {"type": "string", "format": "date"}
    question = ElicitRequest(
        params=ElicitRequestFormParams(
            message=f"{problem} When do you want to fly to {destination} and back?".strip(),
            requested_schema={
                "type": "object",
                "properties": {
                    "depart": {**date_field, "title": "Departure date"},
                    "return": {**date_field, "title": "Return date"},
                },
                "required": ["depart", "return"],
            },
        )
    )
    return input_required({"dates": question}, state={"step": "dates"})


def _ask_seat(state: dict[str, Any], problem: str = "") -> InputRequiredResult:
    question = ElicitRequest(
        params=ElicitRequestFormParams(
            message=(
                f"{problem} Flight {state['flight']}, {state['depart']} to {state['return']}, "
                f"{state['fare_eur']} EUR return. Which seat?"
            ).strip(),
            requested_schema={
                "type": "object",
                "properties": {"seat": {"type": "string", "title": "Seat", "enum": state["seats"]}},
                "required": ["seat"],
            },
        )
    )
    return input_required({"seat": question}, state=state)


def add_trip_tools(server: MCPServer, airline: Airline) -> None:
    """Register ``book_trip`` on ``server``."""

    @server.tool()
    def book_trip(destination: str, ctx: Context) -> str | InputRequiredResult:
        """Book a return flight: asks for the travel dates, then for a seat on the flight found."""
        if destination not in DESTINATIONS:
            raise ToolError(f"No flights to {destination!r}; we fly to {', '.join(sorted(DESTINATIONS))}.")
        capabilities = ctx.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            raise ToolError("book_trip needs a client that can ask the person (elicitation).")
        retry = read_retry(ctx)
        state = retry.state
        if state is None:
            return _ask_dates(destination)
        if retry.declined("dates") or retry.declined("seat"):
            return "Nothing was booked."
        if state.get("step") == "dates":
            answer = retry.accepted("dates")
            if answer is None:
                return _ask_dates(destination)
            try:
                depart, back = _parse_dates(answer)
            except ValueError as problem:
                return _ask_dates(destination, str(problem))
            flight = airline.flight(destination, depart)
            seats = airline.free_seats(flight)
            if not seats:
                return _ask_dates(destination, f"Flight {flight} is full.")
            offer = {
                "step": "seat",
                "flight": flight,
                "depart": depart.isoformat(),
                "return": back.isoformat(),
                "fare_eur": airline.fare(destination, depart, back),
                "seats": seats,
            }
            return _ask_seat(offer)
        answer = retry.accepted("seat")
        seat = None if answer is None else answer.get("seat")
        if seat not in state["seats"]:
            return _ask_seat(state)
        reference = airline.book(state["flight"], str(seat))
        if reference is None:
            fresh = {**state, "seats": airline.free_seats(state["flight"])}
            return _ask_seat(fresh, f"Seat {seat} was just taken.")
        token = get_access_token()
        traveller = f" for {token.subject}" if token is not None and token.subject else ""
        return (
            f"Booked{traveller}: {destination}, flight {state['flight']}, {state['depart']} to "
            f"{state['return']}, seat {seat}, {state['fare_eur']} EUR. Reference {reference}."
        )
