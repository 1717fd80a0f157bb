package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// `make docs` writes what `tsekh asyncapi` prints: the committed document,
// and docs/journal.md with its table of event types, both as committed.
func TestRun_AsyncAPI(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"asyncapi"}, env(nil), &out, io.Discard))
	committed, err := os.ReadFile("../../docs/asyncapi.json")
	require.NoError(t, err)
	require.Equal(t, string(committed), out.String(), "run make docs")

	out.Reset()
	require.NoError(t, run(context.Background(), []string{"asyncapi", "--readme", "../../docs/journal.md"}, env(nil), &out, io.Discard))
	readme, err := os.ReadFile("../../docs/journal.md")
	require.NoError(t, err)
	require.Equal(t, string(readme), out.String(), "run make docs")

	noMarkers := filepath.Join(t.TempDir(), "README.md")
	require.NoError(t, os.WriteFile(noMarkers, []byte("# tsekh\n"), 0o600))
	require.ErrorContains(t, run(context.Background(), []string{"asyncapi", "--readme", noMarkers}, env(nil), io.Discard, io.Discard), "markers")
	require.Error(t, run(context.Background(), []string{"asyncapi", "extra"}, env(nil), io.Discard, io.Discard))
}
