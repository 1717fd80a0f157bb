package api_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/tsekh/tsekh/internal/app/apptest"
	"github.com/tsekh/tsekh/internal/platform/database"
)

// BenchmarkShopWebhook measures a webhook delivery through the whole app:
// verification, the idempotent insert, items and event (New) or the
// conflict and the read of the existing order (Redelivery).
//
//	go test -run '^$' -bench ShopWebhook ./api/
func BenchmarkShopWebhook(b *testing.B) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		b.Run(string(d), func(b *testing.B) {
			env := apptest.New(b, d, withShopSecret)
			b.Run("New", func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					if r := deliver(env, shopBody("bench-"+strconv.Itoa(i)), time.Now()); r.Status != http.StatusCreated {
						b.Fatalf("%d %s", r.Status, r.Body)
					}
				}
			})
			b.Run("Redelivery", func(b *testing.B) {
				body := shopBody("bench-0")
				for b.Loop() {
					if r := deliver(env, body, time.Now()); r.Status != http.StatusOK {
						b.Fatalf("%d %s", r.Status, r.Body)
					}
				}
			})
		})
	}
}
