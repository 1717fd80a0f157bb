package progress

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// clock is a time that a test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// Not on a terminal (a CI log): plain lines, one when a stage begins and at
// most one per Every while it lasts, and never a carriage return.
func TestLine_NotATerminal(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := New(&buf)
	require.False(t, l.Terminal(), "a buffer is no terminal")
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	l.now = c.now

	l.Show("write", "write 0/100")
	for i := 1; i <= 40; i++ { // 40 updates over 4 seconds
		c.t = c.t.Add(100 * time.Millisecond)
		l.Show("write", "write "+string(rune('0'+i%10)))
	}
	require.Equal(t, "write 0/100\n", buf.String(), "nothing more within Every")
	c.t = c.t.Add(Every)
	l.Show("write", "write 90/100")
	l.Show("write", "write 91/100")
	l.Show("dispatch", "dispatch 0/10") // a new stage is shown at once
	l.Clear()
	l.Finish("done")
	require.Equal(t, "write 0/100\nwrite 90/100\ndispatch 0/10\ndone\n", buf.String())
	require.NotContains(t, buf.String(), "\r")
}

// On a terminal the line is redrawn in place and wiped or ended on request.
func TestLine_Terminal(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := NewTerminal(&buf)
	require.True(t, l.Terminal())
	l.Show("write", "write 1/2")
	l.Show("write", "write 2/2")
	l.Clear()
	l.Clear()
	l.Finish("done")
	require.Equal(t, "\rwrite 1/2\033[K\rwrite 2/2\033[K\r\033[K\rdone\033[K\n", buf.String())
}

func TestIsTerminal(t *testing.T) {
	t.Parallel()
	require.False(t, IsTerminal(&bytes.Buffer{}))
	devNull, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer func() { _ = devNull.Close() }()
	require.False(t, IsTerminal(devNull), "/dev/null is a character device, not a terminal")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer func() { _ = r.Close(); _ = w.Close() }()
	require.False(t, IsTerminal(w))
}
