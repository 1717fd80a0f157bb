package events_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/events"
)

// What the journal keeps of an error names a URL's scheme, host and path
// only.
func TestErrorText_RedactsURLs(t *testing.T) {
	for in, want := range map[string]string{
		`Post "https://u:p@shop.example/cb?key=K1#f": dial tcp: refused`: `Post "https://shop.example/cb": dial tcp: refused`,
		`nats: nats://s3cr3t@nats:4222 unreachable`:                      `nats: nats://nats:4222 unreachable`,
		`postgres://app:pw@db/tsekh?sslmode=disable&password=x failed`:   `postgres://db/tsekh failed`,
		`plain https://shop.example/cb stays`:                            `plain https://shop.example/cb stays`,
		`no url here: 42`:                                                `no url here: 42`,
	} {
		require.Equal(t, want, events.ErrorText(errors.New(in)), in)
	}
	// A client's *url.Error, wrapped.
	resp, err := http.Get("http://user:pass@127.0.0.1:1/hook?api_key=K2")
	if resp != nil {
		_ = resp.Body.Close()
	}
	require.Error(t, err)
	got := events.ErrorText(fmt.Errorf("shop callback: %w", err))
	require.Contains(t, got, "http://127.0.0.1:1/hook")
	require.NotContains(t, got, "K2")
	require.NotContains(t, got, "user")
	require.Empty(t, events.ErrorText(nil))
}
