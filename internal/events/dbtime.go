package events

import (
	sqldriver "database/sql/driver"
	"errors"
	"time"
)

// The times the drivers read, from either dialect.

// nullTime scans a nullable time that SQLite may hand over as text.
type nullTime struct {
	t     time.Time
	valid bool
}

func (n *nullTime) Scan(src any) error {
	if src == nil {
		*n = nullTime{}
		return nil
	}
	var t dbTime
	if err := t.Scan(src); err != nil {
		return err
	}
	*n = nullTime{t: time.Time(t), valid: true}
	return nil
}

// Value implements sqldriver.Valuer, which lets GORM scan into it.
func (n nullTime) Value() (sqldriver.Value, error) {
	if !n.valid {
		return nil, nil
	}
	return n.t, nil
}

func (n nullTime) ptr() *time.Time {
	if !n.valid {
		return nil
	}
	t := n.t.UTC()
	return &t
}

// dbTime scans a time from either dialect: PostgreSQL hands over time.Time;
// SQLite hands over time.Time for declared DATETIME columns and text for
// computed expressions.
type dbTime time.Time

var timeLayouts = []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999Z07:00"}

func (t *dbTime) Scan(src any) error {
	switch v := src.(type) {
	case time.Time:
		*t = dbTime(v.UTC())
		return nil
	case string:
		return t.parse(v)
	case []byte:
		return t.parse(string(v))
	}
	return errors.New("events: cannot scan time")
}

func (t *dbTime) parse(s string) error {
	for _, l := range timeLayouts {
		if p, err := time.Parse(l, s); err == nil {
			*t = dbTime(p.UTC())
			return nil
		}
	}
	return errors.New("events: bad time " + s)
}
