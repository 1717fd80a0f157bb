package catalog

import (
	"database/sql/driver"
	"encoding/json"
	"fmt"
)

// IntList is a list of integers stored as a JSON array in a text column.
type IntList []int

// Value implements driver.Valuer.
func (l IntList) Value() (driver.Value, error) { return jsonValue(l) }

// Scan implements sql.Scanner.
func (l *IntList) Scan(src any) error { return jsonScan(src, l) }

// StringList is a list of strings stored as a JSON array in a text column.
type StringList []string

// Value implements driver.Valuer.
func (l StringList) Value() (driver.Value, error) { return jsonValue(l) }

// Scan implements sql.Scanner.
func (l *StringList) Scan(src any) error { return jsonScan(src, l) }

func jsonValue(v any) (driver.Value, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if string(b) == "null" {
		return "[]", nil
	}
	return string(b), nil
}

func jsonScan(src, dst any) error {
	switch v := src.(type) {
	case string:
		return json.Unmarshal([]byte(v), dst)
	case []byte:
		return json.Unmarshal(v, dst)
	case nil:
		return nil
	}
	return fmt.Errorf("catalog: cannot scan %T", src)
}
