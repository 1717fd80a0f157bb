package api_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/floor"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// BenchmarkFloorScan measures a scan through the whole app (auth, the
// order's lock, the route check, the operation completed with its event)
// with 50,000 physical parts in work on PostgreSQL: ten production orders
// of 277 three-door wardrobes (18 parts each). Each scan reports a
// different part through cutting; p50-ms and p99-ms are percentiles of one
// scan: through HTTP (auth included), and the service alone; Commit is a
// bare write transaction, the floor under both.
//
//	go test -run '^$' -bench FloorScan -benchtime 2000x ./api/
func BenchmarkFloorScan(b *testing.B) {
	env := apptest.New(b, database.Postgres, nil)
	const orders, units = 10, 277
	var codes []string
	for range orders {
		r := env.Admin(http.MethodPost, "/api/v1/orders", map[string]any{"customer": map[string]any{"name": "Склад"},
			"items": []any{map[string]any{"sku": "SHK-RASP-1200", "qty": units}}})
		if r.Status != http.StatusCreated {
			b.Fatalf("%d %s", r.Status, r.Body)
		}
		var o struct{ Items []struct{ ID int64 } }
		r.JSON(b, &o)
		env.Dispatch()
		r = env.Admin(http.MethodPost, "/api/v1/production-orders", map[string]any{"items": []int64{o.Items[0].ID}})
		if r.Status != http.StatusCreated {
			b.Fatalf("%d %s", r.Status, r.Body)
		}
		var po struct {
			ID         int64
			PartsCount int `json:"parts_count"`
		}
		r.JSON(b, &po)
		for n := 1; n <= po.PartsCount; n++ {
			codes = append(codes, fmt.Sprintf("P%d-%d", po.ID, n))
		}
	}
	if len(codes) < 49_000 {
		b.Fatalf("%d parts in work", len(codes))
	}
	next := 0
	scan := func() string {
		code := codes[(next*7919)%len(codes)] // spread over the orders
		next++
		return code
	}
	measure := func(b *testing.B, fn func(code string) error) {
		var took []time.Duration
		for b.Loop() {
			code := scan()
			start := time.Now()
			err := fn(code)
			took = append(took, time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
		}
		slices.Sort(took)
		b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
		b.ReportMetric(float64(len(codes)), "parts")
	}
	b.Run("HTTP", func(b *testing.B) {
		measure(b, func(code string) error {
			r := env.Do(http.MethodPost, "/api/v1/floor/scans", map[string]any{"code": code, "step": 1}, apptest.AdminToken)
			if r.Status != http.StatusOK {
				return fmt.Errorf("%d %s", r.Status, r.Body)
			}
			return nil
		})
	})
	b.Run("Commit", func(b *testing.B) { // the floor under every write: a transaction with an id, committed
		measure(b, func(string) error {
			return env.App.DB.Transaction(func(tx *gorm.DB) error { return tx.Exec("SELECT pg_current_xact_id()").Error })
		})
	})
	b.Run("Service", func(b *testing.B) {
		ctx := events.WithActor(context.Background(), events.Actor{ID: 1, Name: "Мастер"})
		measure(b, func(code string) error {
			_, err := env.App.Floor.ScanCode(ctx, floor.Scan{Code: code, Step: 1})
			return err
		})
	})
}
