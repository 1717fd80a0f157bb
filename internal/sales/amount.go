package sales

import (
	"bytes"
	"encoding/json"
	"math/big"
	"regexp"

	"github.com/tsekh/tsekh/internal/platform/apperr"
)

// Amount is a sum of money as the shop sent it: a non-negative decimal
// number, kept as the text that was sent ("12990.00" stays so) because
// tsekh computes no prices. The shop may send it as a JSON number or as a
// string holding one; it is shown as a JSON number, null when none was sent.
type Amount string

// amountPattern is what an Amount may be: up to 15 digits before the point
// and 4 after it.
var amountPattern = regexp.MustCompile(`^[0-9]{1,15}(\.[0-9]{1,4})?$`)

// UnmarshalJSON keeps the value as sent, number or string; validate
// checks it, naming its field.
func (a *Amount) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		*a = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = Amount(s)
	default:
		*a = Amount(b)
	}
	return nil
}

// MarshalJSON writes the amount as a JSON number, or null when there is none.
func (a Amount) MarshalJSON() ([]byte, error) {
	if a == "" || !amountPattern.MatchString(string(a)) {
		return []byte("null"), nil
	}
	return []byte(a), nil
}

// validate names field when the amount is not a decimal number within bounds.
func (a Amount) validate(field string) []apperr.FieldError {
	if a == "" || amountPattern.MatchString(string(a)) {
		return nil
	}
	return []apperr.FieldError{apperr.Field(field, "must be a non-negative decimal number with at most 15 digits before the point and 4 after it")}
}

// canonical is the amount's value written one way ("12990.00" and "12990"
// alike), for comparisons.
func (a Amount) canonical() string {
	if a == "" {
		return ""
	}
	r, ok := new(big.Rat).SetString(string(a))
	if !ok {
		return string(a)
	}
	return r.RatString()
}

// sameAmount tells whether two amounts are the same sum.
func sameAmount(a, b Amount) bool { return a.canonical() == b.canonical() }
