package sales_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/contracts"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/sales"
)

// shop is a local stand-in for the online shop's callback endpoint: it
// checks every request's signature, records the good ones and answers with
// the statuses it is told to, then 200.
type shop struct {
	t       *testing.T
	secret  string
	mu      sync.Mutex
	answers []int
	after   string // Retry-After sent with a 429 or 503
	got     []sales.ShopCallbackBody
	raw     []string // the bodies of got, as sent
	eventID []string
	calls   int
}

func (s *shop) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if err := sales.VerifySignature(s.secret, r.Header.Get(sales.HeaderShopTimestamp), r.Header.Get(sales.HeaderShopSignature), body, time.Now()); err != nil {
		s.t.Errorf("callback signature: %v", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if len(s.answers) > 0 {
		status := s.answers[0]
		s.answers = s.answers[1:]
		if status != http.StatusOK {
			if s.after != "" {
				w.Header().Set("Retry-After", s.after)
			}
			w.WriteHeader(status)
			_, _ = io.WriteString(w, "shop is busy")
			return
		}
	}
	var b sales.ShopCallbackBody
	if err := json.Unmarshal(body, &b); err != nil {
		s.t.Errorf("callback body: %v", err)
	}
	s.got = append(s.got, b)
	s.raw = append(s.raw, string(body))
	s.eventID = append(s.eventID, r.Header.Get(sales.HeaderEventID))
	w.WriteHeader(http.StatusNoContent)
}

func (s *shop) received() ([]sales.ShopCallbackBody, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sales.ShopCallbackBody(nil), s.got...), s.calls
}

func shopOrder(t *testing.T, f *fixture, id string) sales.Order {
	t.Helper()
	syncID := sales.SyncIDPrefix + id
	o, created, err := f.sales.ReceiveShopOrder(context.Background(), sales.NewOrder{
		Customer: sales.Customer{Name: "Анна"}, Items: []sales.NewItem{{SKU: "SHK-KUPE-1600", Qty: 1}}, SyncID: &syncID}, nil)
	require.NoError(t, err)
	require.Equal(t, sales.OutcomeCreated, created)
	return o
}

func TestShopCallback_TellsTheShop(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		sh := &shop{t: t, secret: "cb-secret"}
		srv := httptest.NewServer(sh)
		defer srv.Close()
		f := newFixture(t, db, sales.ShopCallback(srv.URL+"/tsekh/callback", "cb-secret", nil))

		o := shopOrder(t, f, "A-100")
		manual := newOrder(t, f, "SHK-KUPE-1600")
		f.production(t, contracts.ProdOrderLaunched.Name(), 1, []int64{o.Items[0].ID, manual.Items[0].ID}, "2026-12-15")
		f.production(t, contracts.ProdOrderCompleted.Name(), 1, []int64{o.Items[0].ID, manual.Items[0].ID}, "")

		got, calls := sh.received()
		require.Equal(t, 3, calls, "only the shop's order is reported, once per change")
		require.Len(t, got, 3)
		require.Equal(t, "A-100", got[0].ShopOrderID)
		require.Equal(t, "shop-A-100", got[0].SyncID)
		require.Equal(t, o.ID, got[0].OrderID)
		require.Equal(t, "in_production", got[0].Status)
		require.Equal(t, "received", got[0].PreviousStatus)
		require.Equal(t, "2026-12-15", *got[0].ETA)
		require.Equal(t, contracts.OrderStatusChanged.Name(), got[0].Type)
		require.Equal(t, "ready", got[1].Status)
		require.NotZero(t, got[1].EventID)
		require.Equal(t, itoa(got[1].EventID), sh.eventID[1])
		// Ready is told as such too, with what is left to ship.
		require.Equal(t, contracts.OrderReady.Name(), got[2].Type)
		require.Equal(t, "ready", got[2].Status)
		require.Equal(t, []contracts.ItemQty{{ItemID: o.Items[0].ID, SKU: "SHK-KUPE-1600", Qty: 1}}, got[2].Items)
		require.False(t, got[2].Partial)
		// Each carries the order's tsekh version after it, one more each time.
		require.Equal(t, []int64{2, 3, 4}, []int64{got[0].Version, got[1].Version, got[2].Version})
	})
}

// The shop is told of every version of its order, one after the other, with
// no version it never heard of between them (a cancellation is one change,
// one version), and its times are written as the API writes them.
func TestShopCallback_EveryVersionInOrder(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		sh := &shop{t: t, secret: "cb-secret"}
		srv := httptest.NewServer(sh)
		defer srv.Close()
		f := newFixture(t, db, sales.ShopCallback(srv.URL, "cb-secret", nil))
		ctx := context.Background()

		o := shopOrder(t, f, "V-1")
		phone := "+7 900 000-00-01"
		_, changed, err := f.sales.ChangeOrder(ctx, o.ID, sales.Edit{CustomerPhone: &phone})
		require.NoError(t, err)
		require.True(t, changed)
		o, err = f.sales.CancelOrder(ctx, o.ID, "the customer changed their mind")
		require.NoError(t, err)
		f.drain(t)

		got, _ := sh.received()
		require.Len(t, got, 2)
		require.Equal(t, []string{contracts.OrderChanged.Name(), contracts.OrderStatusChanged.Name()}, []string{got[0].Type, got[1].Type})
		require.Equal(t, []int64{2, 3}, []int64{got[0].Version, got[1].Version}, "versions 1, 2, 3 and no gap")
		require.Equal(t, got[1].Version, o.Version, "the shop heard of the order's version as it is")
		for _, raw := range sh.raw {
			require.Regexp(t, `"occurred_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"`, raw)
		}
	})
}

func TestShopCallback_RetriesFailures(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		sh := &shop{t: t, secret: "cb-secret", answers: []int{http.StatusServiceUnavailable, http.StatusInternalServerError}}
		srv := httptest.NewServer(sh)
		defer srv.Close()
		f := newFixture(t, db, sales.ShopCallback(srv.URL, "cb-secret", nil))
		// Back-off long enough to look at the failed delivery before its retry is due.
		f.disp = events.NewDispatcher(db, f.reg, events.DispatcherOptions{BackoffBase: 400 * time.Millisecond, BackoffMax: 800 * time.Millisecond, MaxAttempts: 5, Timeout: 2 * time.Second})
		ctx := context.Background()

		o := shopOrder(t, f, "B-7")
		_, err := f.sales.CancelOrder(ctx, o.ID, "the customer changed their mind")
		require.NoError(t, err)
		evID := lastEvent(t, db, contracts.OrderStatusChanged.Name(), o.ID)

		// The first attempt fails; the journal shows why, and when it will try again.
		// (A pass may find the event not yet dispatchable while other tests' transactions are open.)
		deadline := time.Now().Add(10 * time.Second)
		for delivery(t, f, evID).Attempts == 0 && time.Now().Before(deadline) {
			_, err = f.disp.RunOnce(ctx)
			require.NoError(t, err)
		}
		d := delivery(t, f, evID)
		require.Equal(t, "retrying", d.Status)
		require.Equal(t, 1, d.Attempts)
		require.Contains(t, d.LastError, "503")
		require.Contains(t, d.LastError, "shop is busy")
		require.NotNil(t, d.NextAttemptAt)

		// Retried with back-off until the shop takes it.
		deadline = time.Now().Add(20 * time.Second)
		for delivery(t, f, evID).Status != "processed" && time.Now().Before(deadline) {
			time.Sleep(25 * time.Millisecond)
			_, err := f.disp.RunOnce(ctx)
			require.NoError(t, err)
		}
		d = delivery(t, f, evID)
		require.Equal(t, "processed", d.Status)
		require.Equal(t, 3, d.Attempts)
		got, calls := sh.received()
		require.Equal(t, 3, calls)
		require.Len(t, got, 1)
		require.Equal(t, "cancelled", got[0].Status)
		require.Nil(t, got[0].ETA)
	})
}

// The shop's answer decides what follows: a 4xx other than 408 and 429 is
// permanent (failed at once, no retry), a 408 is retried with back-off, and
// a 429 or 503 with Retry-After is retried when the shop asked.
func TestShopCallback_AnswersDecideTheRetry(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		after    string
		want     string
		minDelay time.Duration // from the failure to the next attempt
	}{
		{"422 is permanent", http.StatusUnprocessableEntity, "", "failed", 0},
		{"404 is permanent", http.StatusNotFound, "", "failed", 0},
		{"408 is retried", http.StatusRequestTimeout, "", "retrying", 0},
		{"429 waits as asked", http.StatusTooManyRequests, "120", "retrying", 110 * time.Second},
		{"503 waits as asked", http.StatusServiceUnavailable, "90", "retrying", 80 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
				sh := &shop{t: t, secret: "cb-secret", answers: []int{tc.status}, after: tc.after}
				srv := httptest.NewServer(sh)
				defer srv.Close()
				f := newFixture(t, db, sales.ShopCallback(srv.URL, "cb-secret", nil))
				// The back-off is short: a Retry-After delay stands out from it.
				f.disp = events.NewDispatcher(db, f.reg, events.DispatcherOptions{BackoffBase: time.Second, BackoffMax: time.Hour, MaxAttempts: 5, Timeout: 2 * time.Second})
				ctx := context.Background()
				_, err := f.disp.RunOnce(ctx) // the service runs before the order comes
				require.NoError(t, err)
				o := shopOrder(t, f, "R-"+tc.name)
				_, err = f.sales.CancelOrder(ctx, o.ID, "the customer changed their mind")
				require.NoError(t, err)
				evID := lastEvent(t, db, contracts.OrderStatusChanged.Name(), o.ID)
				dctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				_, err = f.disp.Drain(dctx)
				require.NoError(t, err)
				d := delivery(t, f, evID)
				require.Equal(t, tc.want, d.Status)
				// An answer with Retry-After spends no attempt.
				spent := tc.after == ""
				require.Equal(t, map[bool]int{true: 1, false: 0}[spent], d.Attempts)
				require.Contains(t, d.LastError, strconv.Itoa(tc.status))
				require.Len(t, d.Failures, 1)
				require.Equal(t, tc.status, *d.Failures[0].HTTPStatus)
				require.Equal(t, spent, d.Failures[0].Spent)
				require.Equal(t, d.LastError, d.Failures[0].Error)
				if tc.want == "failed" {
					require.Nil(t, d.NextAttemptAt)
					return
				}
				require.NotNil(t, d.NextAttemptAt)
				require.Greater(t, time.Until(*d.NextAttemptAt), tc.minDelay-5*time.Second)
				if tc.minDelay == 0 {
					require.Less(t, time.Until(*d.NextAttemptAt), 2*time.Second, "the back-off, not a long wait")
				}
			})
		})
	}
}

func TestShopCallback_NetworkErrorIsRetried(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *gorm.DB) {
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close() // nothing listens there any more
		// Secrets in the URL (a password, a token in the query) never reach the journal.
		secretURL := strings.Replace(url, "http://", "http://shop:pw-s3cret@", 1) + "/cb?token=q-s3cret"
		f := newFixture(t, db, sales.ShopCallback(secretURL, "cb-secret", &http.Client{Timeout: time.Second}))
		o := shopOrder(t, f, "C-1")
		_, err := f.sales.CancelOrder(context.Background(), o.ID, "the customer changed their mind")
		require.NoError(t, err)
		evID := lastEvent(t, db, contracts.OrderStatusChanged.Name(), o.ID)
		deadline := time.Now().Add(10 * time.Second)
		for delivery(t, f, evID).Attempts == 0 && time.Now().Before(deadline) {
			_, err = f.disp.RunOnce(context.Background())
			require.NoError(t, err)
		}
		d := delivery(t, f, evID)
		require.Equal(t, "retrying", d.Status)
		require.Contains(t, d.LastError, "shop callback: POST")
		require.Contains(t, d.LastError, "refused")
		require.Contains(t, d.LastError, "/cb")
		require.NotContains(t, d.LastError, "s3cret")
		require.Len(t, d.Failures, 1)
		require.NotContains(t, d.Failures[0].Error, "s3cret")
		require.Nil(t, d.Failures[0].HTTPStatus, "no answer, no status")
	})
}

func lastEvent(t *testing.T, db *gorm.DB, typ string, aggID int64) int64 {
	t.Helper()
	var id int64
	require.NoError(t, database.Scan(db.Raw("SELECT max(id) FROM events WHERE type = ? AND aggregate_id = ?", typ, aggID), &id))
	require.NotZero(t, id)
	return id
}

func delivery(t *testing.T, f *fixture, evID int64) events.Delivery {
	t.Helper()
	en, err := f.journal.Get(context.Background(), evID)
	require.NoError(t, err)
	for _, d := range en.Deliveries {
		if d.Subscriber == sales.SubscriberShopCallback {
			return d
		}
	}
	t.Fatalf("event %d has no %s delivery: %+v", evID, sales.SubscriberShopCallback, en.Deliveries)
	return events.Delivery{}
}
