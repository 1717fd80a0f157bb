package api_test

import (
	"maps"
	"testing"

	"github.com/stretchr/testify/require"
)

// cancelBody is a cancellation's body: its reason is required.
var cancelBody = map[string]any{"reason": "the customer changed their mind"}

// requireOnlyKept checks that between two row counts nothing was written
// but what keeping refused deliveries in the intake inbox writes: kept new
// rejections, one intake.rejected event for each refusal kept (refusals,
// counting those that updated an open rejection), and the shop's user
// with its user.created when the refusal was its first delivery.
func requireOnlyKept(t testing.TB, before, after map[string]int64, kept, refusals int64) {
	t.Helper()
	users := after["auth_users"] - before["auth_users"]
	require.Equal(t, kept, after["sales_intake_rejections"]-before["sales_intake_rejections"], "rejections kept")
	require.Equal(t, refusals+users, after["events"]-before["events"], "one intake.rejected per refusal (and user.created for the shop's first)")
	b, a := maps.Clone(before), maps.Clone(after)
	for _, k := range []string{"sales_intake_rejections", "events", "auth_users"} {
		delete(b, k)
		delete(a, k)
	}
	require.Equal(t, b, a, "nothing but the intake inbox written")
}
