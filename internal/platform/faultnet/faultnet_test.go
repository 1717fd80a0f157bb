package faultnet_test

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/faultnet"
)

// echo is a line echo server.
func echo(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c); _ = c.Close() }()
		}
	}()
	return l.Addr().String()
}

// roundTrip sends a line and waits up to wait for it to come back.
func roundTrip(addr string, wait time.Duration) (time.Duration, error) {
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		return 0, err
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(wait))
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return 0, err
	}
	if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

func TestProxy_Faults(t *testing.T) {
	t.Parallel()
	p := faultnet.New(t, echo(t))
	_, err := roundTrip(p.Addr(), 5*time.Second)
	require.NoError(t, err, "a clean link")

	p.Cut()
	_, err = roundTrip(p.Addr(), 5*time.Second)
	require.Error(t, err, "a cut link refuses")

	p.Silence()
	_, err = roundTrip(p.Addr(), 300*time.Millisecond)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout(), "a silent link answers nothing: %v", err)

	p.Latency(100 * time.Millisecond)
	took, err := roundTrip(p.Addr(), 5*time.Second)
	require.NoError(t, err)
	require.GreaterOrEqual(t, took, 200*time.Millisecond, "a round trip takes twice the latency")

	p.Restore()
	_, err = roundTrip(p.Addr(), 5*time.Second)
	require.NoError(t, err, "restored")

	p.Flap(200 * time.Millisecond)
	var ok, failed int
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := roundTrip(p.Addr(), time.Second); err != nil {
			failed++
		} else {
			ok++
		}
	}
	require.Positive(t, ok, "a flapping link works at times")
	require.Positive(t, failed, "and fails at times")
	p.Restore()
	_, err = roundTrip(p.Addr(), 5*time.Second)
	require.NoError(t, err, "restored after flapping")
}
