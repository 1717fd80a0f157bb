package jsontime

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Times are truncated to the millisecond, never rounded, and written in UTC;
// other text is left alone.
func TestFix(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"a":"2026-12-01T18:34:30Z"}`:                          `{"a":"2026-12-01T18:34:30.000Z"}`,
		`{"a":"2026-12-01T18:34:30.9999999Z"}`:                  `{"a":"2026-12-01T18:34:30.999Z"}`,
		`{"a":"2026-12-01T18:34:30.052+03:00","b":1}`:           `{"a":"2026-12-01T15:34:30.052Z","b":1}`,
		`["2026-12-01T18:34:30.1Z", "x\"2026-12-01T18:34:30Z"]`: `["2026-12-01T18:34:30.100Z", "x\"2026-12-01T18:34:30Z"]`,
		`{"d":"2026-12-01","s":"2026-12-01T18:34","n":"нет"}`:   `{"d":"2026-12-01","s":"2026-12-01T18:34","n":"нет"}`,
		`{"e":"a\\","t":"2026-12-01T18:34:30.000Z"}`:            `{"e":"a\\","t":"2026-12-01T18:34:30.000Z"}`,
	} {
		require.Equal(t, want, string(Fix([]byte(in))), in)
	}
}
