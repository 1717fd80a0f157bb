// Package contractstest checks, in tests, that events match the payload
// schemas their types declare (internal/contracts and every other
// events.Declare in the binary). The shared test helpers run CheckJournal
// on every test database when the test ends, so a writer whose payload
// drifts from its declaration fails the build.
package contractstest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gorm.io/gorm"

	_ "github.com/tsekh/tsekh/internal/contracts" // every module's declarations
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// maxReported is how many drifting events CheckJournal describes.
const maxReported = 10

var compiled = struct {
	sync.Mutex
	byType map[string]*jsonschema.Schema
}{byType: map[string]*jsonschema.Schema{}}

// Validate checks a payload against the schema declared for its event type,
// strictly: every object may hold only the properties its type declares
// (the published schemas allow more, for readers of older versions), and
// formats (date, date-time) are asserted. declared is false, and err nil,
// for a type no events.Declare in the binary declares, as tests' own types.
func Validate(eventType string, payload []byte) (declared bool, err error) {
	sch, declared, err := schemaOf(eventType)
	if !declared || err != nil {
		return declared, err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		return true, fmt.Errorf("payload is not JSON: %w", err)
	}
	return true, sch.Validate(v)
}

func schemaOf(eventType string) (*jsonschema.Schema, bool, error) {
	compiled.Lock()
	defer compiled.Unlock()
	if sch, ok := compiled.byType[eventType]; ok {
		return sch, true, nil
	}
	t, ok := events.DeclaredType(eventType)
	if !ok {
		return nil, false, nil
	}
	raw, err := json.Marshal(Strict(t.Schema))
	if err != nil {
		return nil, true, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, true, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	url := "urn:tsekh:event-type:" + eventType
	if err := c.AddResource(url, doc); err != nil {
		return nil, true, err
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, true, fmt.Errorf("schema of %s: %w", eventType, err)
	}
	compiled.byType[eventType] = sch
	return sch, true, nil
}

// Strict returns a copy of a JSON Schema in which every object that lists
// its properties allows no other.
func Strict(s map[string]any) map[string]any {
	out := make(map[string]any, len(s)+1)
	for k, v := range s {
		out[k] = strictValue(v)
	}
	if _, ok := out["properties"]; ok {
		if _, set := out["additionalProperties"]; !set {
			out["additionalProperties"] = false
		}
	}
	return out
}

func strictValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return Strict(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = strictValue(x)
		}
		return out
	default:
		return v
	}
}

// CheckJournal validates every event in db whose type is declared and
// returns one error per event that does not match, joined; a missing events
// table is no error (a database the test never migrated).
func CheckJournal(ctx context.Context, db *gorm.DB) error {
	exists, err := database.TableExists(ctx, db, "events")
	if err != nil {
		return fmt.Errorf("contractstest: %w", err)
	}
	if !exists {
		return nil
	}
	rows, err := db.WithContext(ctx).Raw("SELECT id, type, payload FROM events ORDER BY id").Rows()
	if err != nil {
		return fmt.Errorf("contractstest: %w", err)
	}
	defer func() { _ = rows.Close() }()
	var errs []error
	bad := 0
	for rows.Next() {
		var id int64
		var typ string
		var payload []byte
		if err := rows.Scan(&id, &typ, &payload); err != nil {
			return fmt.Errorf("contractstest: %w", err)
		}
		if _, err := Validate(typ, payload); err != nil {
			bad++
			if len(errs) < maxReported {
				errs = append(errs, fmt.Errorf("event %d (%s) %s does not match its declared schema: %w", id, typ, payload, err))
			}
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("contractstest: %w", err)
	}
	if bad > len(errs) {
		errs = append(errs, fmt.Errorf("and %d more", bad-len(errs)))
	}
	return errors.Join(errs...)
}
