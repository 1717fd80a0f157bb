package api

import (
	"fmt"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// A resource read with GET can be sent back with PUT as it was read: the
// members tsekh computes (an id, an operation's seq, a material's unit) are
// read-only, accepted when they say what is so and refused (422 naming the
// member) when they contradict it, so that a client never has to strip them
// and never silently changes what it cannot change. A POST takes them too,
// but a new resource has no id yet: one sent is refused.

// readOnlyID checks the id sent back in a body: id is the resource's (0 on
// a create).
func readOnlyID(sent *int64, id int64) []apperr.FieldError {
	switch {
	case sent == nil:
		return nil
	case id == 0:
		return []apperr.FieldError{apperr.Field("id", "is given by tsekh when the resource is created: leave it out")}
	case *sent != id:
		return []apperr.FieldError{apperr.Field("id", "is %d, but the resource at this path is %d: an id is read-only", *sent, id)}
	}
	return nil
}

// readOnlyEqual checks a read-only member sent back against what it is.
func readOnlyEqual[T comparable](field string, sent *T, is T) []apperr.FieldError {
	if sent == nil || *sent == is {
		return nil
	}
	return []apperr.FieldError{apperr.Field(field, "is %v, but it is %v: %s is read-only (leave it out or send it as read)", *sent, is, field)}
}

// readOnlyRefused is the problem of read-only members that contradict what
// is so, or nil when there are none.
func readOnlyRefused(fields []apperr.FieldError) error {
	if len(fields) == 0 {
		return nil
	}
	return apperr.Invalid(fmt.Sprintf("%d read-only member(s) contradict the resource", len(fields)), fields...)
}
