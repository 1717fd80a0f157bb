package sales_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/sales"
)

// partnerFixture is a fixture whose dispatcher calls the shop at shopURL
// with few attempts, so that a spent attempt shows.
func partnerFixture(t *testing.T, db *gorm.DB, shopURL string, retryAfterCap time.Duration) *fixture {
	t.Helper()
	f := newFixture(t, db, sales.ShopCallback(shopURL, "cb-secret", &http.Client{Timeout: 2 * time.Second}))
	f.disp = events.NewDispatcher(db, f.reg, events.DispatcherOptions{BackoffBase: 50 * time.Millisecond, BackoffMax: time.Hour,
		MaxAttempts: 2, Timeout: 3 * time.Second, RetryAfterCap: retryAfterCap})
	return f
}

// callbackOf cancels a new shop order and returns the order.status_changed
// event the shop is told of.
func callbackOf(t *testing.T, f *fixture, shopID string) int64 {
	t.Helper()
	_, err := f.disp.RunOnce(context.Background()) // the lanes exist before the order comes
	require.NoError(t, err)
	o := shopOrder(t, f, shopID)
	_, err = f.sales.CancelOrder(context.Background(), o.ID, "the customer changed their mind")
	require.NoError(t, err)
	return lastEvent(t, f.db, contracts.OrderStatusChanged.Name(), o.ID)
}

// dispatchUntil runs dispatcher passes until the shop callback's delivery of
// evID is no longer pending or retrying, and returns it.
func dispatchUntil(t *testing.T, f *fixture, evID int64, within time.Duration) events.Delivery {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		_, err := f.disp.RunOnce(context.Background())
		require.NoError(t, err)
		d := delivery(t, f, evID)
		if d.Status == events.StatusProcessed || d.Status == events.StatusFailed {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("the callback is still %s after %s: %+v", d.Status, within, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A throttled shop answers 429 with Retry-After: 1 three times, then takes
// the callback: no attempt is spent on the 429s (with two attempts allowed,
// the callback would fail otherwise), each retry comes after the second the
// shop asked for, the callback is delivered once, and the journal still
// shows the 429s after the success.
func TestShopCallback_ThrottledShop(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var calls atomic.Int32
		var mu sync.Mutex
		var times [4]time.Time
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			n := calls.Add(1)
			if n <= 4 {
				mu.Lock()
				times[n-1] = time.Now()
				mu.Unlock()
			}
			if n <= 3 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				_, _ = io.WriteString(w, "slow down")
				return
			}
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, `{"ok": true}`)
		}))
		defer srv.Close()
		f := partnerFixture(t, db, srv.URL+"/cb", 0)
		evID := callbackOf(t, f, "T-1")
		d := dispatchUntil(t, f, evID, 15*time.Second)
		require.Equal(t, events.StatusProcessed, d.Status, "%+v", d)
		require.EqualValues(t, 4, calls.Load(), "three 429s, then the callback")
		require.Equal(t, 1, d.Attempts, "only the successful attempt counts")
		mu.Lock()
		defer mu.Unlock()
		for i := 1; i < 4; i++ {
			require.GreaterOrEqual(t, times[i].Sub(times[i-1]), 900*time.Millisecond, "retry %d waited as the shop asked", i)
		}
		require.Len(t, d.Failures, 3)
		for _, fl := range d.Failures {
			require.Equal(t, http.StatusTooManyRequests, *fl.HTTPStatus)
			require.False(t, fl.Spent)
			require.Contains(t, fl.Error, "429")
			require.False(t, fl.At.IsZero())
		}
	})
}

// A shop that always throttles may put a callback off only for
// DISPATCH_RETRY_AFTER_CAP in all (here 2s: two answers of Retry-After: 1);
// past it its 429s spend attempts, and with two allowed the callback fails
// after four calls, the history showing which of them were spent.
func TestShopCallback_RetryAfterCap(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		var calls atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			calls.Add(1)
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		defer srv.Close()
		f := partnerFixture(t, db, srv.URL+"/cb", 2*time.Second)
		evID := callbackOf(t, f, "T-2")
		d := dispatchUntil(t, f, evID, 15*time.Second)
		require.Equal(t, events.StatusFailed, d.Status, "%+v", d)
		require.EqualValues(t, 4, calls.Load())
		require.Equal(t, 2, d.Attempts)
		var spent []bool
		for _, fl := range d.Failures {
			spent = append(spent, fl.Spent)
			require.Equal(t, http.StatusServiceUnavailable, *fl.HTTPStatus)
		}
		require.Equal(t, []bool{false, false, true, true}, spent)
		// An admin's retry starts the deferrals afresh.
		n, err := f.journal.Retry(context.Background(), evID)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		_, err = f.disp.RunOnce(context.Background())
		require.NoError(t, err)
		d = delivery(t, f, evID)
		require.Equal(t, events.StatusRetrying, d.Status)
		require.Zero(t, d.Attempts)
		require.False(t, d.Failures[len(d.Failures)-1].Spent)
	})
}

// A 200 status line followed by a reset (the body promised 100 bytes, three
// came) is not a delivery: it is recorded as a failure with the status, and
// retried; the next, whole answer delivers the callback.
func TestShopCallback_ResetAfterStatusLine(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer func() { _ = ln.Close() }()
		var calls atomic.Int32
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer func() { _ = conn.Close() }()
					req, err := http.ReadRequest(bufio.NewReader(conn))
					if err != nil {
						return
					}
					_, _ = io.Copy(io.Discard, req.Body)
					if calls.Add(1) == 1 {
						_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc")
						if tc, ok := conn.(*net.TCPConn); ok {
							_ = tc.SetLinger(0) // a reset, not a clean close
						}
						return
					}
					_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
				}()
			}
		}()
		f := partnerFixture(t, db, "http://"+ln.Addr().String()+"/cb", 0)
		evID := callbackOf(t, f, "T-3")
		_, err = f.disp.RunOnce(context.Background())
		require.NoError(t, err)
		first := delivery(t, f, evID)
		require.Equal(t, events.StatusRetrying, first.Status, "a cut-off answer is not a delivery: %+v", first)
		require.Equal(t, 1, first.Attempts)
		require.Contains(t, first.LastError, "broke off")
		d := dispatchUntil(t, f, evID, 10*time.Second)
		require.Equal(t, events.StatusProcessed, d.Status)
		require.EqualValues(t, 2, calls.Load())
		require.Len(t, d.Failures, 1)
		require.Equal(t, http.StatusOK, *d.Failures[0].HTTPStatus)
		require.True(t, d.Failures[0].Spent)
	})
}
