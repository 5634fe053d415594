package refusal

import "fmt"

// Reason is a reason code of the profile (spec/profile.md, section 6). Callers
// switch on it, never on a message.
type Reason string

// The reason codes, in the order of the validation procedure (profile, sections 5 and 6).
const (
	TooLarge          Reason = "too_large"
	Malformed         Reason = "malformed"
	UnsupportedHeader Reason = "unsupported_header"
	WrongType         Reason = "wrong_type"
	UnknownKey        Reason = "unknown_key"
	AlgorithmMismatch Reason = "algorithm_mismatch"
	BadSignature      Reason = "bad_signature"
	LifetimeTooLong   Reason = "lifetime_too_long"
	IssuedInFuture    Reason = "issued_in_future"
	Expired           Reason = "expired"
	WrongIssuer       Reason = "wrong_issuer"
	WrongUser         Reason = "wrong_user"
	WrongTool         Reason = "wrong_tool"
	WrongRequest      Reason = "wrong_request"
	Replayed          Reason = "replayed"
	StoreUnavailable  Reason = "store_unavailable"
)

// Reasons lists every reason code in the order of the validation procedure.
var Reasons = []Reason{
	TooLarge, Malformed, UnsupportedHeader, WrongType, UnknownKey, AlgorithmMismatch, BadSignature,
	LifetimeTooLong, IssuedInFuture, Expired, WrongIssuer, WrongUser, WrongTool, WrongRequest,
	Replayed, StoreUnavailable,
}

// messages are the sentences a client may be shown, one per code. They name no
// claim value, no key material and no part of the state; they are the Python
// reference's sentences word for word.
var messages = map[Reason]string{
	TooLarge:          "The request state is larger than this server accepts.",
	Malformed:         "The request state is not a well-formed token of this profile.",
	UnsupportedHeader: "The request state uses a header parameter or algorithm this profile forbids.",
	WrongType:         "The request state is not a token of type mrtr-state+jwt.",
	UnknownKey:        "The request state was signed with a key this server does not hold.",
	AlgorithmMismatch: "The request state's algorithm is not the algorithm of its key.",
	BadSignature:      "The request state's signature does not verify.",
	LifetimeTooLong:   "The request state was issued with a lifetime longer than this server allows.",
	IssuedInFuture:    "The request state claims to be issued in the future.",
	Expired:           "The request state has expired; start the request again.",
	WrongIssuer:       "The request state was issued by another server.",
	WrongUser:         "The request state belongs to another user.",
	WrongTool:         "The request state was issued for another tool, prompt or resource.",
	WrongRequest:      "The request state was issued for a request with other arguments.",
	Replayed:          "The request state has already been used.",
	StoreUnavailable:  "The request state could not be checked for reuse; try again later.",
}

// Valid tells whether r is one of the profile's reason codes.
func (r Reason) Valid() bool {
	_, ok := messages[r]
	return ok
}

// Message is the fixed sentence for the code, safe to show to the client.
func (r Reason) Message() string {
	if m, ok := messages[r]; ok {
		return m
	}
	return "The request state was refused."
}

// InvalidRequestState is the one error type for a refused requestState token.
// Reason is the profile's code. Error() is the code's fixed sentence, safe to
// show to a client; Detail is a short note for the server's log saying which
// rule failed. Neither ever holds the token, a claim value, the state or key
// material.
//
// Test for a refusal with errors.As, or for one code with errors.Is and a
// sentinel: errors.Is(err, refusal.ErrExpired).
type InvalidRequestState struct {
	Reason Reason
	Detail string
}

// New returns a refusal with the given code and log detail.
func New(reason Reason, detail string) *InvalidRequestState {
	return &InvalidRequestState{Reason: reason, Detail: detail}
}

// Error returns the code's fixed sentence (never the detail, never a value).
func (e *InvalidRequestState) Error() string { return e.Reason.Message() }

// String shows the code and the detail, for logs.
func (e *InvalidRequestState) String() string {
	return fmt.Sprintf("InvalidRequestState(reason=%s, detail=%q)", e.Reason, e.Detail)
}

// Is reports whether target is a refusal with the same reason code, so that
// errors.Is(err, ErrExpired) holds for every expired refusal whatever its detail.
func (e *InvalidRequestState) Is(target error) bool {
	t, ok := target.(*InvalidRequestState)
	return ok && t.Reason == e.Reason
}

// Sentinels, one per reason code, for errors.Is.
var (
	ErrTooLarge          = &InvalidRequestState{Reason: TooLarge}
	ErrMalformed         = &InvalidRequestState{Reason: Malformed}
	ErrUnsupportedHeader = &InvalidRequestState{Reason: UnsupportedHeader}
	ErrWrongType         = &InvalidRequestState{Reason: WrongType}
	ErrUnknownKey        = &InvalidRequestState{Reason: UnknownKey}
	ErrAlgorithmMismatch = &InvalidRequestState{Reason: AlgorithmMismatch}
	ErrBadSignature      = &InvalidRequestState{Reason: BadSignature}
	ErrLifetimeTooLong   = &InvalidRequestState{Reason: LifetimeTooLong}
	ErrIssuedInFuture    = &InvalidRequestState{Reason: IssuedInFuture}
	ErrExpired           = &InvalidRequestState{Reason: Expired}
	ErrWrongIssuer       = &InvalidRequestState{Reason: WrongIssuer}
	ErrWrongUser         = &InvalidRequestState{Reason: WrongUser}
	ErrWrongTool         = &InvalidRequestState{Reason: WrongTool}
	ErrWrongRequest      = &InvalidRequestState{Reason: WrongRequest}
	ErrReplayed          = &InvalidRequestState{Reason: Replayed}
	ErrStoreUnavailable  = &InvalidRequestState{Reason: StoreUnavailable}
)
