package contracts

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// MaxCRMOrderID is the longest CRM order id, in characters.
const MaxCRMOrderID = 64

// CRMOrderID is the CRM's order id: text, as the CRM names its orders
// ("CRM-5001", "10452"). Events written while it was a whole number carry
// a JSON number, which reads as its decimal text, so that old events and
// new ones decode alike.
type CRMOrderID string

// UnmarshalJSON reads a JSON string, or a whole number as its decimal text.
func (c *CRMOrderID) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*c = CRMOrderID(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		if _, err := n.Int64(); err == nil {
			*c = CRMOrderID(n.String())
			return nil
		}
	}
	return &json.UnmarshalTypeError{Value: describeJSON(b), Type: reflect.TypeFor[string]()}
}

// CRMOrderIDOf is a CRM order id as events carry it; nil stays nil.
func CRMOrderIDOf(s *string) *CRMOrderID {
	if s == nil {
		return nil
	}
	c := CRMOrderID(*s)
	return &c
}

// describeJSON names the kind of a JSON value, as encoding/json's type
// errors do ("number 1.5", "bool", "object").
func describeJSON(b []byte) string {
	switch {
	case len(b) == 0:
		return "nothing"
	case b[0] == '{':
		return "object"
	case b[0] == '[':
		return "array"
	case b[0] == 't' || b[0] == 'f':
		return "bool"
	}
	return fmt.Sprintf("number %s", b)
}
