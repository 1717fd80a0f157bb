package api_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/config"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// The operator's way out, through the real HTTP API: a delivery that gave up
// is visible with its attempts and error, and an admin re-queues it.
func TestAdminRetry_ThroughTheAPI(t *testing.T) {
	t.Parallel()
	for _, d := range apptest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := apptest.New(t, d, func(c *config.Config) { c.DispatchMaxAttempts = 1 })
			env.FailInserts("plan_backlog", "", "")
			r := env.Admin(http.MethodPost, "/api/v1/orders", map[string]any{
				"customer": map[string]any{"name": "Иван Петров"}, "items": []map[string]any{{"sku": "SHK-KUPE-1600", "qty": 1}}})
			require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
			env.Dispatch()

			var list struct {
				Items []struct {
					ID     int64
					Status string
				}
			}
			env.Admin(http.MethodGet, "/api/v1/events?type=order.received&status=failed", nil).JSON(t, &list)
			require.Len(t, list.Items, 1, "the failed event is listed")
			id := list.Items[0].ID
			path := fmt.Sprintf("/api/v1/events/%d", id)

			var ev struct {
				Status     string
				Deliveries []struct {
					Subscriber string
					Status     string
					Attempts   int
					LastError  string `json:"last_error"`
				}
			}
			env.Admin(http.MethodGet, path, nil).JSON(t, &ev)
			require.Equal(t, "failed", ev.Status)
			found := false
			for _, dl := range ev.Deliveries {
				if dl.Subscriber == "plan.backlog" {
					found = true
					require.Equal(t, "failed", dl.Status)
					require.Equal(t, 1, dl.Attempts)
					require.Contains(t, dl.LastError, "injected failure")
				}
			}
			require.True(t, found, "plan.backlog's delivery is shown: %+v", ev)

			var subs struct {
				Items []struct {
					Name   string
					Failed int64
				}
			}
			env.Admin(http.MethodGet, "/api/v1/subscribers", nil).JSON(t, &subs)
			for _, s := range subs.Items {
				if s.Name == "plan.backlog" {
					require.EqualValues(t, 1, s.Failed)
				}
			}
			metrics := env.Admin(http.MethodGet, "/metrics", nil)
			require.Contains(t, string(metrics.Body), `tsekh_event_deliveries_total{outcome="error",subscriber="plan.backlog"} 1`)

			viewer := env.UserToken("Наблюдатель", "viewer")
			require.Equal(t, http.StatusForbidden, env.Do(http.MethodPost, path+"/retry", nil, viewer).Status)
			require.Equal(t, http.StatusNotFound, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/events/%d/retry", id+1000), nil).Status)

			// The cause is mended; the admin retries.
			if d == database.Postgres {
				require.NoError(t, env.App.DB.Exec("DROP TRIGGER fail_plan_backlog ON plan_backlog").Error)
			} else {
				require.NoError(t, env.App.DB.Exec("DROP TRIGGER fail_plan_backlog").Error)
			}
			okSeries := `tsekh_event_deliveries_total{outcome="ok",subscriber="plan.backlog"}`
			okBefore := metricValue(t, env, okSeries)
			r = env.Admin(http.MethodPost, path+"/retry", nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			require.JSONEq(t, `{"requeued": 1}`, string(r.Body))
			env.Dispatch()
			env.Admin(http.MethodGet, path, nil).JSON(t, &ev)
			require.Equal(t, "processed", ev.Status)
			require.Equal(t, okBefore+1, metricValue(t, env, okSeries), "the retry's success is counted once")
			require.Contains(t, string(env.Admin(http.MethodGet, "/metrics", nil).Body),
				`tsekh_event_deliveries_total{outcome="error",subscriber="plan.backlog"} 1`, "and the failure still once")
			require.EqualValues(t, 1, env.Count("plan_backlog"))
			require.Equal(t, http.StatusConflict, env.Admin(http.MethodPost, path+"/retry", nil).Status, "nothing left to retry")
		})
	}
}

// Subscribers as operators see them, through the HTTP API: their lanes and
// replicas, a replay that reaches one subscriber only (journalled with its
// actor), and the retirement of one that is gone for good.
func TestSubscribers_ReplayAndRetireThroughTheAPI(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, env *apptest.Env) {
		r := env.Admin(http.MethodPost, "/api/v1/orders", map[string]any{
			"customer": map[string]any{"name": "Иван Петров"}, "items": []map[string]any{{"sku": "SHK-KUPE-1600", "qty": 1}}})
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		env.Dispatch()

		var subs struct {
			Items []struct {
				Name     string
				Status   string
				Local    bool
				Lanes    []struct{ Partition int }
				Replicas []struct{ Replica string }
			}
		}
		env.Admin(http.MethodGet, "/api/v1/subscribers", nil).JSON(t, &subs)
		require.NotEmpty(t, subs.Items)
		for _, s := range subs.Items {
			require.Equal(t, "active", s.Status, s.Name)
			require.Len(t, s.Lanes, 16, s.Name)
			require.Len(t, s.Replicas, 1, s.Name)
			require.Equal(t, env.App.Dispatcher.Owner(), s.Replicas[0].Replica)
		}

		// plan.backlog's effect lives in the database and is not replayable.
		r = env.Admin(http.MethodPost, "/api/v1/subscribers/plan.backlog/replay", map[string]any{"from_event_id": 1})
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		require.Contains(t, string(r.Body), "not replayable")
		r = env.Admin(http.MethodPost, "/api/v1/subscribers/nobody/replay", map[string]any{"from_event_id": 1})
		require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
		require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
		r = env.Admin(http.MethodPost, "/api/v1/subscribers/plan.backlog/replay", map[string]any{"from_event_id": 0})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s", r.Body)
		viewer := env.UserToken("Наблюдатель", "viewer")
		require.Equal(t, http.StatusForbidden, env.Do(http.MethodDelete, "/api/v1/subscribers/plan.backlog", nil, viewer).Status)

		// Retiring one that a replica runs is refused; once no replica has
		// run it for a while it goes, journalled with the admin.
		r = env.Admin(http.MethodDelete, "/api/v1/subscribers/plan.backlog", nil)
		require.Equal(t, http.StatusConflict, r.Status, "%s", r.Body)
		require.NoError(t, env.App.DB.Exec("UPDATE events_replicas SET seen_at = "+database.NowPlus(env.App.DB, -2*time.Minute)).Error)
		r = env.Admin(http.MethodDelete, "/api/v1/subscribers/plan.backlog", nil)
		require.Equal(t, http.StatusNoContent, r.Status, "%s", r.Body)
		var journal struct {
			Items []struct {
				Type    string
				Payload map[string]any
				Actor   struct{ Name string }
			}
		}
		env.Admin(http.MethodGet, "/api/v1/events?type=subscriber.retired", nil).JSON(t, &journal)
		require.Len(t, journal.Items, 1)
		require.Equal(t, "plan.backlog", journal.Items[0].Payload["subscriber"])
		require.Equal(t, "Администратор", journal.Items[0].Actor.Name)
	})
}

// A replay to the shop's callback through the API: the shop hears of its
// order again, and nothing else is delivered again.
func TestSubscribers_ReplayToTheShopCallback(t *testing.T) {
	t.Parallel()
	var pg, lite atomic.Int64 // callbacks per dialect's order, the two run side by side
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.Contains(string(body), "replay-postgres"):
			pg.Add(1)
		case strings.Contains(string(body), "replay-sqlite"):
			lite.Add(1)
		}
	}))
	t.Cleanup(shop.Close)
	eachWith(t, func(c *config.Config) { c.ShopWebhookSecret, c.ShopCallbackURL = shopSecret, shop.URL }, func(t *testing.T, env *apptest.Env) {
		calls := &pg
		if env.Dialect == database.SQLite {
			calls = &lite
		}
		r := deliver(env, shopBody("replay-"+string(env.Dialect)), time.Now())
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		id := orderIDOf(t, r)
		env.Dispatch()
		backlog := env.Count("plan_backlog")
		require.Equal(t, http.StatusOK, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", id), cancelBody).Status)
		env.Dispatch()
		var evs struct{ Items []struct{ ID int64 } }
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events?type=order.status_changed&aggregate_id=%d", id), nil).JSON(t, &evs)
		require.Len(t, evs.Items, 1)
		before := calls.Load()

		r = env.Admin(http.MethodPost, "/api/v1/subscribers/sales.shop-callback/replay", map[string]any{"from_event_id": evs.Items[0].ID})
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Body)
		require.JSONEq(t, fmt.Sprintf(`{"subscriber": "sales.shop-callback", "from_event_id": %d}`, evs.Items[0].ID), string(r.Body))
		env.Dispatch()
		require.Equal(t, before+1, calls.Load(), "the shop hears of the cancellation once more")
		require.Equal(t, backlog-1, env.Count("plan_backlog"), "the plan's subscribers ran once: the cancelled item left the backlog once")
	})
}

// A throttled shop through the real app: with one attempt allowed, its two
// 429s with Retry-After spend none, the callback arrives once, and the
// journal's delivery still lists the two 429s after the success.
func TestEvents_ThrottledShopInTheJournal(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	answered := map[string]int{} // per dialect's shop order
	shop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		key := "sqlite"
		if strings.Contains(string(body), "throttled-postgres") {
			key = "postgres"
		}
		mu.Lock()
		answered[key]++
		n := answered[key]
		mu.Unlock()
		if n <= 2 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(shop.Close)
	eachWith(t, func(c *config.Config) {
		c.ShopWebhookSecret, c.ShopCallbackURL, c.DispatchMaxAttempts = shopSecret, shop.URL+"/cb", 1
	}, func(t *testing.T, env *apptest.Env) {
		r := deliver(env, shopBody("throttled-"+string(env.Dialect)), time.Now())
		require.Equal(t, http.StatusCreated, r.Status, "%s", r.Body)
		id := orderIDOf(t, r)
		env.Dispatch()
		require.Equal(t, http.StatusOK, env.Admin(http.MethodPost, fmt.Sprintf("/api/v1/orders/%d/cancel", id), cancelBody).Status)
		var evs struct{ Items []struct{ ID int64 } }
		env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events?type=order.status_changed&aggregate_id=%d", id), nil).JSON(t, &evs)
		require.Len(t, evs.Items, 1)
		type failure struct {
			At         time.Time `json:"at"`
			Error      string    `json:"error"`
			HTTPStatus *int      `json:"http_status"`
			Spent      bool      `json:"spent"`
		}
		var entry struct {
			Deliveries []struct {
				Subscriber string    `json:"subscriber"`
				Status     string    `json:"status"`
				Attempts   int       `json:"attempts"`
				Failures   []failure `json:"failures"`
			} `json:"deliveries"`
		}
		callback := func() (status string, attempts int, failures []failure) {
			r := env.Admin(http.MethodGet, fmt.Sprintf("/api/v1/events/%d", evs.Items[0].ID), nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Body)
			r.JSON(t, &entry)
			for _, d := range entry.Deliveries {
				require.NotNil(t, d.Failures, "failures is a list, empty or not: %s", d.Subscriber)
				if d.Subscriber == "sales.shop-callback" {
					return d.Status, d.Attempts, d.Failures
				}
			}
			t.Fatalf("no shop callback delivery: %s", r.Body)
			return
		}
		deadline := time.Now().Add(15 * time.Second)
		for {
			env.Dispatch()
			if st, _, _ := callback(); st == "processed" || st == "failed" || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		status, attempts, failures := callback()
		require.Equal(t, "processed", status)
		require.Equal(t, 1, attempts)
		require.Len(t, failures, 2)
		for _, f := range failures {
			require.Equal(t, http.StatusTooManyRequests, *f.HTTPStatus)
			require.False(t, f.Spent)
			require.Contains(t, f.Error, "429")
			require.NotContains(t, f.Error, "?")
		}
		mu.Lock()
		defer mu.Unlock()
		require.Equal(t, 3, answered[string(env.Dialect)], "two 429s, then the callback, once")
	})
}

// metricValue reads one series' value from the service's /metrics (0 when
// it has none yet).
func metricValue(t *testing.T, env *apptest.Env, series string) float64 {
	t.Helper()
	r := env.Admin(http.MethodGet, "/metrics", nil)
	require.Equal(t, http.StatusOK, r.Status)
	for line := range strings.Lines(string(r.Body)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			require.NoError(t, err, line)
			return f
		}
	}
	return 0
}
