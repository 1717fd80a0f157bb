package dbtest

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Binaries that need a template at once: one builds it, the others wait
// for it and read what it wrote.
func TestShared_OneBuildsTheOthersWaitAndRead(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(templateDirEnv, dir)
	const n = 6
	var builds atomic.Int32
	t.Cleanup(func() { sharedWaiting = nil })
	allWaiting := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	seen := 0
	sharedWaiting = func() {
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen >= n-1 {
			once.Do(func() { close(allWaiting) })
		}
	}
	build := func() ([]byte, error) {
		builds.Add(1)
		// The others are all waiting before this one finishes.
		select {
		case <-allWaiting:
		case <-time.After(time.Minute):
			return nil, errors.New("the others never waited")
		}
		return []byte("the template"), nil
	}
	var wg sync.WaitGroup
	results := make([]string, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			b, err := shared("x.db", build)
			results[i], errs[i] = string(b), err
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		require.Equal(t, "the template", results[i])
	}
	require.EqualValues(t, 1, builds.Load())
	b, err := os.ReadFile(filepath.Join(dir, "x.db"))
	require.NoError(t, err)
	require.Equal(t, "the template", string(b))
	left, err := filepath.Glob(filepath.Join(dir, "x.db.*"))
	require.NoError(t, err)
	require.Empty(t, left, "no marker or temporary file is left")
}

// A build that fails is not shared: the next binary builds again.
func TestShared_FailedBuildIsNotShared(t *testing.T) {
	t.Setenv(templateDirEnv, t.TempDir())
	_, err := shared("x.db", func() ([]byte, error) { return nil, errors.New("no server") })
	require.ErrorContains(t, err, "no server")
	b, err := shared("x.db", func() ([]byte, error) { return []byte("built"), nil })
	require.NoError(t, err)
	require.Equal(t, "built", string(b))
	b, err = shared("x.db", func() ([]byte, error) { return nil, errors.New("not called") })
	require.NoError(t, err)
	require.Equal(t, "built", string(b))
}

// Without a shared directory each binary builds its own.
func TestShared_WithoutADirectoryEachBuilds(t *testing.T) {
	t.Setenv(templateDirEnv, "")
	builds := 0
	for range 2 {
		b, err := shared("x.db", func() ([]byte, error) { builds++; return []byte("built"), nil })
		require.NoError(t, err)
		require.Equal(t, "built", string(b))
	}
	require.Equal(t, 2, builds)
}

// A template is keyed by the migrations and the server.
func TestTemplateKey(t *testing.T) {
	require.Equal(t, templateKey("a"), templateKey("a"))
	require.NotEqual(t, templateKey("a"), templateKey("b"))
	require.NotEqual(t, templateKey(), templateKey("a"))
}
