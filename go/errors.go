package mrtrstate

import "github.com/mrtr-state/mrtr-state/go/refusal"

// InvalidRequestState is the one error type of a refused token (package
// refusal holds it, so that every room can return it).
type InvalidRequestState = refusal.InvalidRequestState

// Reason is a reason code of the profile (section 6).
type Reason = refusal.Reason

// The reason codes, in the order of the validation procedure.
const (
	TooLarge          = refusal.TooLarge
	Malformed         = refusal.Malformed
	UnsupportedHeader = refusal.UnsupportedHeader
	WrongType         = refusal.WrongType
	UnknownKey        = refusal.UnknownKey
	AlgorithmMismatch = refusal.AlgorithmMismatch
	BadSignature      = refusal.BadSignature
	LifetimeTooLong   = refusal.LifetimeTooLong
	IssuedInFuture    = refusal.IssuedInFuture
	Expired           = refusal.Expired
	WrongIssuer       = refusal.WrongIssuer
	WrongUser         = refusal.WrongUser
	WrongTool         = refusal.WrongTool
	WrongRequest      = refusal.WrongRequest
	Replayed          = refusal.Replayed
	StoreUnavailable  = refusal.StoreUnavailable
)

// Sentinels for errors.Is, one per reason code.
var (
	ErrTooLarge          = refusal.ErrTooLarge
	ErrMalformed         = refusal.ErrMalformed
	ErrUnsupportedHeader = refusal.ErrUnsupportedHeader
	ErrWrongType         = refusal.ErrWrongType
	ErrUnknownKey        = refusal.ErrUnknownKey
	ErrAlgorithmMismatch = refusal.ErrAlgorithmMismatch
	ErrBadSignature      = refusal.ErrBadSignature
	ErrLifetimeTooLong   = refusal.ErrLifetimeTooLong
	ErrIssuedInFuture    = refusal.ErrIssuedInFuture
	ErrExpired           = refusal.ErrExpired
	ErrWrongIssuer       = refusal.ErrWrongIssuer
	ErrWrongUser         = refusal.ErrWrongUser
	ErrWrongTool         = refusal.ErrWrongTool
	ErrWrongRequest      = refusal.ErrWrongRequest
	ErrReplayed          = refusal.ErrReplayed
	ErrStoreUnavailable  = refusal.ErrStoreUnavailable
)
