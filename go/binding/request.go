package binding

import (
	"encoding/json"
	"errors"
)

// Request is one request a token is sealed for or opened on: the user, the
// target and the arguments. Arguments is the request's arguments object as JSON
// text, or nil for a request whose arguments are not bound (a resource read has
// none). A tools/call or prompts/get without arguments is bound with "{}".
type Request struct {
	User      string
	Target    Target
	Arguments json.RawMessage
}

// ErrEmptyUser is returned by Request.Check for a request without a user.
var ErrEmptyUser = errors.New("the user must not be empty")

// Check refuses a request without a user or without a valid target. A token
// sealed with such a request would be bound to nobody or nothing.
func (r Request) Check() error {
	if err := r.Target.Check(); err != nil {
		return err
	}
	if r.User == "" {
		return ErrEmptyUser
	}
	return nil
}

// Aud is the aud claim of the request's target.
func (r Request) Aud() string { return r.Target.Aud() }

// Digest is the request's argument digest: "" without error when the request
// has no arguments (Arguments is nil), ErrUnbindable when they have no digest.
func (r Request) Digest() (digest string, err error) {
	if r.Arguments == nil {
		return "", nil
	}
	return Digest(r.Arguments)
}
