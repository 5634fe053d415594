//! `delete_branch` and `book_trip`, as the Python, TypeScript, Go and Java examples have them: the same
//! repositories, flights, questions, states and answers, so any replica finishes what another began.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use mrtr_state_rmcp::{AuthenticatedUser, verified_state};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, InputRequest,
    InputRequests, InputRequiredResult, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// A result of one text item.
fn text(message: String) -> CallToolResponse {
    CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text(message)]))
}

/// A tool error the person should read.
fn failure(message: String) -> CallToolResponse {
    CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text(message)]))
}

/// Ask the client for inputs and carry `state` (a JSON object) to the next round; the boundary seals it.
fn input_required(key: &str, question: Value, state: &impl Serialize) -> CallToolResponse {
    let request: InputRequest =
        serde_json::from_value(json!({"method": "elicitation/create", "params": question}))
            .expect("the example's questions are elicitation requests");
    let requests: InputRequests = BTreeMap::from([(key.to_owned(), request)]);
    let state = serde_json::to_string(state).expect("the example's states are plain JSON");
    CallToolResponse::InputRequired(InputRequiredResult::new(Some(requests), Some(state)))
}

fn form(message: String, properties: Value, required: &[&str]) -> Value {
    json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {"type": "object", "properties": properties, "required": required},
    })
}

/// The client's answers to this round, as sent.
struct Answers<'a>(Option<&'a BTreeMap<String, Value>>);

impl Answers<'_> {
    /// The content of an accepted elicitation answer under `key`, or `None`.
    fn accepted(&self, key: &str) -> Option<Map<String, Value>> {
        let answer = self.0?.get(key)?;
        if answer.get("action")?.as_str()? != "accept" {
            return None;
        }
        Some(
            answer
                .get("content")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
        )
    }

    /// Whether the person declined or cancelled the question under `key`.
    fn declined(&self, key: &str) -> bool {
        let action = self
            .0
            .and_then(|answers| answers.get(key))
            .and_then(|answer| answer.get("action"));
        matches!(action.and_then(Value::as_str), Some("decline" | "cancel"))
    }
}

fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn string_arg(arguments: Option<&Map<String, Value>>, name: &str) -> Option<String> {
    arguments?.get(name)?.as_str().map(str::to_owned)
}

/// The two tools, as `tools/list` shows them.
pub fn tools() -> Vec<Tool> {
    let schema = |properties: Value, required: &[&str]| -> Map<String, Value> {
        match json!({"type": "object", "properties": properties, "required": required}) {
            Value::Object(schema) => schema,
            _ => unreachable!("a schema is an object"),
        }
    };
    vec![
        Tool::new(
            "delete_branch",
            "Delete a branch of a repository, after the person confirms this exact branch and commit.",
            schema(
                json!({"repo": {"type": "string"}, "branch": {"type": "string"}}),
                &["repo", "branch"],
            ),
        ),
        Tool::new(
            "book_trip",
            "Book a return flight: asks for the travel dates, then for a seat on the flight found.",
            schema(json!({"destination": {"type": "string"}}), &["destination"]),
        ),
    ]
}

/// A small in-memory git host: repositories, their default branch and branch heads.
pub struct GitHost {
    repos: Mutex<HashMap<String, Repository>>,
}

struct Repository {
    default_branch: &'static str,
    branches: HashMap<String, String>,
}

impl GitHost {
    /// The repositories of the Python example.
    pub fn example() -> Self {
        let repo = |default_branch, branches: &[(&str, &str)]| Repository {
            default_branch,
            branches: branches
                .iter()
                .map(|(b, h)| ((*b).to_owned(), (*h).to_owned()))
                .collect(),
        };
        let repos = HashMap::from([
            (
                "acme/api".to_owned(),
                repo(
                    "main",
                    &[
                        ("main", "9f2c1e7"),
                        ("old-feature", "4b1d0aa"),
                        ("release-1.0", "77e0c3b"),
                        ("spike/cache", "c0ffee1"),
                    ],
                ),
            ),
            (
                "acme/web".to_owned(),
                repo("main", &[("main", "1a2b3c4"), ("redesign", "5d6e7f8")]),
            ),
        ]);
        Self {
            repos: Mutex::new(repos),
        }
    }

    /// The commit `branch` points at, or a message for the person.
    fn head(&self, repo: &str, branch: &str) -> Result<String, String> {
        let repos = locked(&self.repos);
        let Some(r) = repos.get(repo) else {
            return Err(format!("There is no repository '{repo}'."));
        };
        let Some(head) = r.branches.get(branch) else {
            return Err(format!("{repo} has no branch '{branch}'."));
        };
        if branch == r.default_branch {
            return Err(format!(
                "'{branch}' is the default branch of {repo}; it cannot be deleted."
            ));
        }
        Ok(head.clone())
    }

    /// Delete `branch` if it still points at `head`.
    fn remove(&self, repo: &str, branch: &str, head: &str) -> bool {
        let mut repos = locked(&self.repos);
        match repos.get_mut(repo) {
            Some(r) if r.branches.get(branch).map(String::as_str) == Some(head) => {
                r.branches.remove(branch);
                true
            }
            _ => false,
        }
    }
}

fn confirm_delete(repo: &str, branch: &str, head: &str) -> CallToolResponse {
    let question = form(
        format!("Delete branch '{branch}' of {repo} (at commit {head})? This cannot be undone."),
        json!({"confirm": {"type": "boolean", "title": format!("Delete {branch}")}}),
        &["confirm"],
    );
    input_required("confirm", question, &json!({"head": head}))
}

/// `delete_branch`: the first call asks the person to confirm the branch and the commit it points at;
/// the retry deletes only on a yes, with a state sealed for this user, tool and arguments (checked before
/// this code runs), and only if the branch still points at the commit the person saw.
pub fn delete_branch(
    host: &GitHost,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> CallToolResponse {
    let arguments = request.arguments.as_ref();
    let (Some(repo), Some(branch)) = (
        string_arg(arguments, "repo"),
        string_arg(arguments, "branch"),
    ) else {
        return failure("delete_branch needs repo and branch strings.".into());
    };
    let head = match host.head(&repo, &branch) {
        Ok(head) => head,
        Err(problem) => return failure(problem),
    };
    let Some(state) = verified_state(context) else {
        return confirm_delete(&repo, &branch, &head);
    };
    let answers = Answers(request.input_responses.as_ref());
    let kept = format!("Kept branch '{branch}' of {repo}: the deletion was not confirmed.");
    if answers.declined("confirm") {
        return text(kept);
    }
    let Some(answer) = answers.accepted("confirm") else {
        return confirm_delete(&repo, &branch, &head); // no answer yet: ask again
    };
    if answer.get("confirm") != Some(&Value::Bool(true)) {
        return text(kept);
    }
    if state.get("head").and_then(Value::as_str) != Some(head.as_str())
        || !host.remove(&repo, &branch, &head)
    {
        return confirm_delete(&repo, &branch, &head); // the branch moved since the person saw it
    }
    text(format!(
        "Deleted branch '{branch}' of {repo} (it was at {head})."
    ))
}

/// Where the example airline flies, with the base return fare in euros, in name order.
pub(crate) const DESTINATIONS: [(&str, u32); 3] =
    [("Kyoto", 905), ("Lisbon", 212), ("Reykjavik", 348)];
const SEATS: [&str; 6] = ["1A", "1C", "2A", "2C", "3A", "3C"];

/// A calendar date (proleptic Gregorian), read only as `YYYY-MM-DD`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Date {
    year: i32,
    month: u32,
    day: u32,
}

impl Date {
    fn parse(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
            return None;
        }
        let digits = |range: std::ops::Range<usize>| -> Option<u32> {
            let part = &text[range];
            part.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| part.parse().ok())?
        };
        let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        let days = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        (year >= 1 && (1..=days).contains(&day)).then_some(Self {
            year: year as i32,
            month,
            day,
        })
    }

    /// Days since 1970-01-01 (H. Hinnant's days_from_civil).
    fn days(self) -> i64 {
        let year = i64::from(self.year) - i64::from(self.month <= 2);
        let era = year.div_euclid(400);
        let year_of_era = year - era * 400;
        let month = i64::from(self.month);
        let day_of_year = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5
            + i64::from(self.day)
            - 1;
        let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
        era * 146_097 + day_of_era - 719_468
    }

    /// Monday 1 to Sunday 7.
    fn iso_weekday(self) -> i64 {
        (self.days() + 3).rem_euclid(7) + 1 // 1970-01-01 was a Thursday
    }

    fn iso(self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

fn flight(destination: &str, depart: Date) -> String {
    let index = DESTINATIONS
        .iter()
        .position(|(name, _)| *name == destination)
        .unwrap_or(0) as i64;
    format!(
        "MR{}-{:02}{:02}",
        100 + index * 10 + depart.iso_weekday(),
        depart.month,
        depart.day
    )
}

fn fare(base: u32, depart: Date) -> u32 {
    if depart.iso_weekday() >= 6 {
        // round(base * 1.15), half up, in integers: the same number in every language.
        (base * 115 + 50) / 100
    } else {
        base
    }
}

/// Seat bookings, in memory.
#[derive(Default)]
pub struct Airline {
    inner: Mutex<Bookings>,
}

#[derive(Default)]
struct Bookings {
    taken: HashMap<String, HashSet<String>>,
    count: u32,
}

impl Airline {
    fn free_seats(&self, flight: &str) -> Vec<String> {
        let bookings = locked(&self.inner);
        let taken = bookings.taken.get(flight);
        SEATS
            .iter()
            .filter(|seat| !taken.is_some_and(|t| t.contains(**seat)))
            .map(|s| (*s).to_owned())
            .collect()
    }

    fn book(&self, flight: &str, seat: &str) -> Option<String> {
        let mut bookings = locked(&self.inner);
        if !bookings
            .taken
            .entry(flight.to_owned())
            .or_default()
            .insert(seat.to_owned())
        {
            return None;
        }
        bookings.count += 1;
        Some(format!("MRT{:05}", bookings.count))
    }
}

/// The seat round's state, in the Python example's member order.
#[derive(Serialize, serde::Deserialize)]
struct SeatOffer {
    step: String,
    flight: String,
    depart: String,
    #[serde(rename = "return")]
    back: String,
    fare_eur: u32,
    seats: Vec<String>,
}

fn ask_dates(destination: &str, problem: &str) -> CallToolResponse {
    let field = |title: &str| json!({"type": "string", "format": "date", "title": title});
    let message = format!("{problem} When do you want to fly to {destination} and back?");
    let question = form(
        message.trim().to_owned(),
        json!({"depart": field("Departure date"), "return": field("Return date")}),
        &["depart", "return"],
    );
    input_required("dates", question, &json!({"step": "dates"}))
}

fn ask_seat(offer: &SeatOffer, problem: &str) -> CallToolResponse {
    let message = format!(
        "{problem} Flight {}, {} to {}, {} EUR return. Which seat?",
        offer.flight, offer.depart, offer.back, offer.fare_eur
    );
    let question = form(
        message.trim().to_owned(),
        json!({"seat": {"type": "string", "title": "Seat", "enum": offer.seats}}),
        &["seat"],
    );
    input_required("seat", question, offer)
}

/// `book_trip`, a two-round form: dates, then a seat on the flight those dates give. What the server
/// learned travels in the sealed state, so any replica, in any language, can finish the booking, and the
/// client cannot change the fare it was quoted. The seat round books; its state is single use.
pub fn book_trip(
    airline: &Airline,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> CallToolResponse {
    let destination = string_arg(request.arguments.as_ref(), "destination").unwrap_or_default();
    let Some(&(_, base)) = DESTINATIONS.iter().find(|(name, _)| *name == destination) else {
        let names: Vec<&str> = DESTINATIONS.iter().map(|(name, _)| *name).collect();
        return failure(format!(
            "No flights to '{destination}'; we fly to {}.",
            names.join(", ")
        ));
    };
    let Some(state) = verified_state(context) else {
        return ask_dates(&destination, "");
    };
    let answers = Answers(request.input_responses.as_ref());
    if answers.declined("dates") || answers.declined("seat") {
        return text("Nothing was booked.".into());
    }
    if state.get("step").and_then(Value::as_str) == Some("dates") {
        let Some(answer) = answers.accepted("dates") else {
            return ask_dates(&destination, "");
        };
        let date = |key: &str| {
            answer
                .get(key)
                .and_then(Value::as_str)
                .and_then(Date::parse)
        };
        let (Some(depart), Some(back)) = (date("depart"), date("return")) else {
            return ask_dates(&destination, "Give both dates as YYYY-MM-DD.");
        };
        if back < depart {
            return ask_dates(
                &destination,
                "The return date is before the departure date.",
            );
        }
        let number = flight(&destination, depart);
        let free = airline.free_seats(&number);
        if free.is_empty() {
            return ask_dates(&destination, &format!("Flight {number} is full."));
        }
        let offer = SeatOffer {
            step: "seat".into(),
            flight: number,
            depart: depart.iso(),
            back: back.iso(),
            fare_eur: fare(base, depart),
            seats: free,
        };
        return ask_seat(&offer, "");
    }
    let Ok(mut offer) = serde_json::from_value::<SeatOffer>(state) else {
        return ask_dates(&destination, "");
    };
    if offer.step != "seat" {
        return ask_dates(&destination, "");
    }
    let seat = answers
        .accepted("seat")
        .and_then(|answer| {
            answer
                .get("seat")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_default();
    if !offer.seats.contains(&seat) {
        return ask_seat(&offer, "");
    }
    let Some(reference) = airline.book(&offer.flight, &seat) else {
        offer.seats = airline.free_seats(&offer.flight);
        return ask_seat(&offer, &format!("Seat {seat} was just taken."));
    };
    let traveller = context
        .extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<AuthenticatedUser>())
        .map(|user| format!(" for {}", user.as_str()))
        .unwrap_or_default();
    text(format!(
        "Booked{traveller}: {destination}, flight {}, {} to {}, seat {seat}, {} EUR. Reference {reference}.",
        offer.flight, offer.depart, offer.back, offer.fare_eur
    ))
}

/// The example's handler: the two tools over one git host and one airline.
#[derive(Clone)]
pub struct Example {
    /// The repositories `delete_branch` deletes from.
    pub git: Arc<GitHost>,
    /// The flights `book_trip` books.
    pub airline: Arc<Airline>,
}

impl Example {
    /// Run the tool the request names.
    pub fn call(
        &self,
        request: &CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match request.name.as_ref() {
            "delete_branch" => Ok(delete_branch(&self.git, request, context)),
            "book_trip" => Ok(book_trip(&self.airline, request, context)),
            other => Err(ErrorData::invalid_params(
                format!("Unknown tool: {other}"),
                None,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_weekdays_flights_and_fares_match_the_other_examples() {
        let saturday = Date::parse("2026-06-13").unwrap();
        assert_eq!(saturday.iso_weekday(), 6);
        assert_eq!(Date::parse("1970-01-01").unwrap().iso_weekday(), 4);
        assert_eq!(flight("Lisbon", saturday), "MR116-0613");
        assert_eq!(fare(212, saturday), 244); // round(212 * 1.15) = round(243.8)
        assert_eq!(fare(905, saturday), 1041); // round(1040.75)
        assert_eq!(fare(348, Date::parse("2026-06-15").unwrap()), 348);
        for bad in [
            "2026-02-29",
            "2026-13-01",
            "2026-6-13",
            "20260613xx",
            "2026-06-1a",
        ] {
            assert!(Date::parse(bad).is_none(), "{bad}");
        }
        assert!(Date::parse("2028-02-29").is_some());
    }
}
