package database

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"time"
)

// Date is a calendar day ("2026-11-15") stored as DATE on PostgreSQL and as
// text on SQLite. The zero Date is NULL.
type Date struct{ time.Time }

// DateLayout is the JSON and SQL form of a Date.
const DateLayout = "2006-01-02"

// ParseDate parses "YYYY-MM-DD".
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(DateLayout, s)
	if err != nil {
		return Date{}, fmt.Errorf("%q is not a date of the form YYYY-MM-DD", s)
	}
	return Date{t}, nil
}

// DateOf returns the day of t.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{time.Date(y, m, d, 0, 0, 0, 0, time.UTC)}
}

// String returns "YYYY-MM-DD", or "" for the zero Date.
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return d.Format(DateLayout)
}

// Value implements driver.Valuer.
func (d Date) Value() (driver.Value, error) {
	if d.IsZero() {
		return nil, nil
	}
	return d.String(), nil
}

// Scan implements sql.Scanner.
func (d *Date) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*d = Date{}
	case time.Time:
		*d = DateOf(v)
	case string:
		return d.parse(v)
	case []byte:
		return d.parse(string(v))
	default:
		return fmt.Errorf("cannot scan %T into Date", src)
	}
	return nil
}

func (d *Date) parse(s string) error {
	if len(s) > 10 {
		s = s[:10]
	}
	p, err := ParseDate(s)
	*d = p
	return err
}

// MarshalJSON writes "YYYY-MM-DD" or null.
func (d Date) MarshalJSON() ([]byte, error) {
	if d.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(d.String())
}

// UnmarshalJSON reads "YYYY-MM-DD" or null.
func (d *Date) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = Date{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a date must be a string of the form YYYY-MM-DD")
	}
	p, err := ParseDate(s)
	*d = p
	return err
}
