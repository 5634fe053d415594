package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// text is a result of one text item.
func text(message string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: message}}}
}

// failure is a tool error the person should read.
func failure(message string) *mcp.CallToolResult {
	r := text(message)
	r.IsError = true
	return r
}

// inputRequired asks the client for inputs and carries state (any JSON value)
// to the next round; the middleware seals it.
func inputRequired(requests mcp.InputRequestMap, state any) *mcp.CallToolResult {
	encoded, err := json.Marshal(state)
	if err != nil {
		panic(err) // the states of this example are plain maps
	}
	return &mcp.CallToolResult{InputRequests: requests, RequestState: string(encoded)}
}

// accepted is the content of an accepted elicitation answer under key, or nil.
func accepted(req *mcp.CallToolRequest, key string) map[string]any {
	if answer, ok := req.Params.InputResponses[key].(*mcp.ElicitResult); ok && answer.Action == "accept" {
		if answer.Content == nil {
			return map[string]any{}
		}
		return answer.Content
	}
	return nil
}

// declined tells whether the person declined or cancelled the question under key.
func declined(req *mcp.CallToolRequest, key string) bool {
	answer, ok := req.Params.InputResponses[key].(*mcp.ElicitResult)
	return ok && (answer.Action == "decline" || answer.Action == "cancel")
}

// state reads the verified state (the middleware has opened it) into a map; nil on a first round.
func state(req *mcp.CallToolRequest) map[string]any {
	if req.Params.RequestState == "" {
		return nil
	}
	var s map[string]any
	if json.Unmarshal([]byte(req.Params.RequestState), &s) != nil {
		return nil
	}
	return s
}

func form(message string, properties map[string]any, required ...string) *mcp.ElicitParams {
	return &mcp.ElicitParams{Mode: "form", Message: message, RequestedSchema: map[string]any{
		"type": "object", "properties": properties, "required": required,
	}}
}

// gitHost is a small in-memory git host: repositories, their default branch and branch heads.
type gitHost struct {
	mu    sync.Mutex
	repos map[string]*repository
}

type repository struct {
	defaultBranch string
	branches      map[string]string
}

// exampleHost holds the repositories of the Python example.
func exampleHost() *gitHost {
	return &gitHost{repos: map[string]*repository{
		"acme/api": {"main", map[string]string{"main": "9f2c1e7", "old-feature": "4b1d0aa", "release-1.0": "77e0c3b", "spike/cache": "c0ffee1"}},
		"acme/web": {"main", map[string]string{"main": "1a2b3c4", "redesign": "5d6e7f8"}},
	}}
}

// head is the commit branch points at, or a message for the person.
func (g *gitHost) head(repo, branch string) (string, string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.repos[repo]
	switch {
	case r == nil:
		return "", fmt.Sprintf("There is no repository '%s'.", repo)
	case r.branches[branch] == "":
		return "", fmt.Sprintf("%s has no branch '%s'.", repo, branch)
	case branch == r.defaultBranch:
		return "", fmt.Sprintf("'%s' is the default branch of %s; it cannot be deleted.", branch, repo)
	}
	return r.branches[branch], ""
}

// remove deletes branch if it still points at head.
func (g *gitHost) remove(repo, branch, head string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	r := g.repos[repo]
	if r == nil || r.branches[branch] != head {
		return false
	}
	delete(r.branches, branch)
	return true
}

type deleteArgs struct {
	Repo   string `json:"repo"`
	Branch string `json:"branch"`
}

func confirmDelete(repo, branch, head string) *mcp.CallToolResult {
	question := form(fmt.Sprintf("Delete branch '%s' of %s (at commit %s)? This cannot be undone.", branch, repo, head),
		map[string]any{"confirm": map[string]any{"type": "boolean", "title": "Delete " + branch}}, "confirm")
	return inputRequired(mcp.InputRequestMap{"confirm": question}, map[string]string{"head": head})
}

// addGitTools registers delete_branch: the first call asks the person to confirm
// the branch and the commit it points at; the retry deletes only on a yes, with
// a state sealed for this user, tool and arguments (checked before this code
// runs), and only if the branch still points at the commit the person saw.
func addGitTools(server *mcp.Server, host *gitHost) {
	tool := &mcp.Tool{
		Name:        "delete_branch",
		Description: "Delete a branch of a repository, after the person confirms this exact branch and commit.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"repo": map[string]any{"type": "string"}, "branch": map[string]any{"type": "string"},
		}, "required": []string{"repo", "branch"}},
	}
	server.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args deleteArgs
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return failure("delete_branch needs repo and branch strings."), nil
		}
		head, problem := host.head(args.Repo, args.Branch)
		if problem != "" {
			return failure(problem), nil
		}
		s := state(req)
		kept := fmt.Sprintf("Kept branch '%s' of %s: the deletion was not confirmed.", args.Branch, args.Repo)
		if s == nil {
			return confirmDelete(args.Repo, args.Branch, head), nil
		}
		if declined(req, "confirm") {
			return text(kept), nil
		}
		answer := accepted(req, "confirm")
		if answer == nil {
			return confirmDelete(args.Repo, args.Branch, head), nil // no answer yet: ask again
		}
		if answer["confirm"] != true {
			return text(kept), nil
		}
		if s["head"] != head || !host.remove(args.Repo, args.Branch, head) {
			return confirmDelete(args.Repo, args.Branch, head), nil // the branch moved since the person saw it
		}
		return text(fmt.Sprintf("Deleted branch '%s' of %s (it was at %s).", args.Branch, args.Repo, head)), nil
	})
}

// destinations are where the example airline flies, with the base return fare in euros.
var destinations = map[string]int{"Lisbon": 212, "Reykjavik": 348, "Kyoto": 905}

var seats = []string{"1A", "1C", "2A", "2C", "3A", "3C"}

// airline holds seat bookings in memory.
type airline struct {
	mu       sync.Mutex
	taken    map[string]map[string]bool
	bookings int
}

func isoWeekday(d time.Time) int {
	if d.Weekday() == time.Sunday {
		return 7
	}
	return int(d.Weekday())
}

func sortedDestinations() []string {
	names := make([]string, 0, len(destinations))
	for name := range destinations {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func flight(destination string, depart time.Time) string {
	index := sort.SearchStrings(sortedDestinations(), destination)
	return fmt.Sprintf("MR%d-%s", 100+index*10+isoWeekday(depart), depart.Format("0102"))
}

func fare(destination string, depart time.Time) int {
	base := destinations[destination]
	if isoWeekday(depart) >= 6 {
		return int(float64(base)*1.15 + 0.5)
	}
	return base
}

func (a *airline) freeSeats(flight string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var free []string
	for _, s := range seats {
		if !a.taken[flight][s] {
			free = append(free, s)
		}
	}
	return free
}

func (a *airline) book(flight, seat string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.taken == nil {
		a.taken = map[string]map[string]bool{}
	}
	if a.taken[flight] == nil {
		a.taken[flight] = map[string]bool{}
	}
	if a.taken[flight][seat] {
		return ""
	}
	a.taken[flight][seat] = true
	a.bookings++
	return fmt.Sprintf("MRT%05d", a.bookings)
}

// seatOffer is the seat round's state, in the Python example's member order.
type seatOffer struct {
	Step    string   `json:"step"`
	Flight  string   `json:"flight"`
	Depart  string   `json:"depart"`
	Return  string   `json:"return"`
	FareEUR int      `json:"fare_eur"`
	Seats   []string `json:"seats"`
}

func askDates(destination, problem string) *mcp.CallToolResult {
	field := func(title string) map[string]any {
		return map[string]any{"type": "string", "format": "date", "title": title}
	}
	question := form(strings.TrimSpace(problem+" When do you want to fly to "+destination+" and back?"),
		map[string]any{"depart": field("Departure date"), "return": field("Return date")}, "depart", "return")
	return inputRequired(mcp.InputRequestMap{"dates": question}, map[string]string{"step": "dates"})
}

func askSeat(offer seatOffer, problem string) *mcp.CallToolResult {
	question := form(strings.TrimSpace(fmt.Sprintf("%s Flight %s, %s to %s, %d EUR return. Which seat?",
		problem, offer.Flight, offer.Depart, offer.Return, offer.FareEUR)),
		map[string]any{"seat": map[string]any{"type": "string", "title": "Seat", "enum": offer.Seats}}, "seat")
	return inputRequired(mcp.InputRequestMap{"seat": question}, offer)
}

// addTripTools registers book_trip, a two-round form: dates, then a seat on the
// flight those dates give. What the server learned travels in the sealed state,
// so any replica, in any language, can finish the booking, and the client cannot
// change the fare it was quoted. The seat round books; its state is single use.
func addTripTools(server *mcp.Server, a *airline) {
	tool := &mcp.Tool{
		Name:        "book_trip",
		Description: "Book a return flight: asks for the travel dates, then for a seat on the flight found.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{
			"destination": map[string]any{"type": "string"},
		}, "required": []string{"destination"}},
	}
	server.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Destination string `json:"destination"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &args)
		if _, ok := destinations[args.Destination]; !ok {
			return failure(fmt.Sprintf("No flights to '%s'; we fly to %s.", args.Destination, strings.Join(sortedDestinations(), ", "))), nil
		}
		s := state(req)
		if s == nil {
			return askDates(args.Destination, ""), nil
		}
		if declined(req, "dates") || declined(req, "seat") {
			return text("Nothing was booked."), nil
		}
		if s["step"] == "dates" {
			answer := accepted(req, "dates")
			if answer == nil {
				return askDates(args.Destination, ""), nil
			}
			depart, err1 := time.Parse("2006-01-02", fmt.Sprint(answer["depart"]))
			back, err2 := time.Parse("2006-01-02", fmt.Sprint(answer["return"]))
			if err1 != nil || err2 != nil {
				return askDates(args.Destination, "Give both dates as YYYY-MM-DD."), nil
			}
			if back.Before(depart) {
				return askDates(args.Destination, "The return date is before the departure date."), nil
			}
			f := flight(args.Destination, depart)
			free := a.freeSeats(f)
			if len(free) == 0 {
				return askDates(args.Destination, fmt.Sprintf("Flight %s is full.", f)), nil
			}
			return askSeat(seatOffer{"seat", f, depart.Format("2006-01-02"), back.Format("2006-01-02"), fare(args.Destination, depart), free}, ""), nil
		}
		var offer seatOffer
		if json.Unmarshal([]byte(req.Params.RequestState), &offer) != nil || offer.Step != "seat" {
			return askDates(args.Destination, ""), nil
		}
		seat, _ := accepted(req, "seat")["seat"].(string)
		offered := false
		for _, s := range offer.Seats {
			offered = offered || s == seat
		}
		if !offered {
			return askSeat(offer, ""), nil
		}
		reference := a.book(offer.Flight, seat)
		if reference == "" {
			offer.Seats = a.freeSeats(offer.Flight)
			return askSeat(offer, fmt.Sprintf("Seat %s was just taken.", seat)), nil
		}
		traveller := ""
		if req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
			traveller = " for " + req.Extra.TokenInfo.UserID
		}
		return text(fmt.Sprintf("Booked%s: %s, flight %s, %s to %s, seat %s, %d EUR. Reference %s.",
			traveller, args.Destination, offer.Flight, offer.Depart, offer.Return, seat, offer.FareEUR, reference)), nil
	})
}
