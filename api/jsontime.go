package api

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tsekh/tsekh/internal/platform/jsontime"
)

// TimeLayout is how every time of the API is written: RFC 3339 in UTC with
// exactly three fraction digits, so that the text order of two times is
// their order in time.
const TimeLayout = jsontime.Layout

// FormatTime writes t as the API does: in UTC, truncated (never rounded) to
// the millisecond, so that a time not before another stays not before it.
func FormatTime(t time.Time) string { return jsontime.Format(t) }

// jsonSerializer is the app's Echo JSON serializer: the standard encoding,
// then every string that is an RFC 3339 time rewritten in TimeLayout. One
// place covers every response, the event payloads included, whatever Go
// type or database produced the time (time.Time writes as many fraction
// digits as are not zero, and PostgreSQL keeps microseconds).
type jsonSerializer struct{ echo.DefaultJSONSerializer }

func (jsonSerializer) Serialize(c echo.Context, v any, indent string) error {
	b, err := marshalAPI(v, indent)
	if err != nil {
		return err
	}
	_, err = c.Response().Write(b)
	return err
}

// marshalAPI encodes v as a response body (with a final newline, like
// json.Encoder) with its times in TimeLayout.
func marshalAPI(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return jsontime.Fix(buf.Bytes()), nil
}
