package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/database"
	"github.com/tsekh/tsekh/internal/platform/dbtest"
	"github.com/tsekh/tsekh/internal/platform/progress"
)

func TestRun_ImportCRM(t *testing.T) {
	for _, d := range []database.Dialect{database.Postgres, database.SQLite} {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			opts := dbtest.Options(t, d)
			vars := map[string]string{"DATABASE_URL": opts.PostgresURL, "SQLITE_PATH": opts.SQLitePath}
			ctx := context.Background()
			require.NoError(t, run(ctx, []string{"seed", "--demo"}, env(vars), io.Discard, io.Discard))

			// A bare array of 300 orders, the 7th to the 10th of them bad: an
			// unknown SKU, a NUL and invalid UTF-8 in the name (PostgreSQL
			// cannot store either), a due date in year 0000.
			var rows []string
			for i := range 300 {
				sku, name, due := "SHK-KUPE-1600", fmt.Sprintf("Клиент %d", i), "2026-12-20"
				switch i {
				case 6:
					sku = "NO-SUCH"
				case 7:
					name = "Клиент\\u0000"
				case 8:
					name = "Клиент\xff"
				case 9:
					due = "0000-01-01"
				}
				rows = append(rows, fmt.Sprintf(`{"crm_order_id": %d, "customer": {"name": "%s"}, "items": [{"sku": %q, "qty": 1}], "due_date": %q}`, 5000+i, name, sku, due))
			}
			file := filepath.Join(t.TempDir(), "crm.json")
			require.NoError(t, os.WriteFile(file, []byte("[\n"+strings.Join(rows, ",\n")+"\n]"), 0o600))
			var out, errOut bytes.Buffer
			err := run(ctx, []string{"import", "crm", file}, env(vars), &out, &errOut)
			require.EqualError(t, err, "4 rows refused, 0 failed, 0 in conflict")
			require.Contains(t, out.String(), "row 7 (crm_order_id 5006): refused")
			require.Contains(t, out.String(), "items[0].sku")
			require.Contains(t, out.String(), "row 8 (crm_order_id 5007): refused: some text is not valid UTF-8, holds control characters or lone surrogates; customer.name must not contain")
			require.Contains(t, out.String(), "row 9 (crm_order_id 5008): refused: some text is not valid UTF-8, holds control characters or lone surrogates; customer.name must be valid UTF-8")
			require.Contains(t, out.String(), "row 10 (crm_order_id 5009): refused")
			require.Contains(t, out.String(), "due_date must be a date from 2000-01-01 to 2100-12-31")
			require.Contains(t, out.String(), "300 rows: 296 created, 0 already present, 0 changed, 0 in conflict, 4 refused, 0 failed")

			// Again, as {"orders": [...]} with the bad rows fixed: only they are new.
			rows[6] = strings.Replace(rows[6], "NO-SUCH", "TMB-PRIK-450", 1)
			rows[7] = strings.Replace(rows[7], "\\u0000", "", 1)
			rows[8] = strings.Replace(rows[8], "\xff", "", 1)
			rows[9] = strings.Replace(rows[9], "0000-01-01", "2027-01-01", 1)
			require.NoError(t, os.WriteFile(file, []byte(`{"source": "crm", "orders": [`+strings.Join(rows, ",")+`]}`), 0o600))
			out.Reset()
			require.NoError(t, run(ctx, []string{"import", "crm", "--verbose", file}, env(vars), &out, &errOut))
			require.Contains(t, out.String(), "row 7 (crm_order_id 5006): created")
			require.Contains(t, out.String(), "row 10 (crm_order_id 5009): created")
			require.Contains(t, out.String(), "row 11 (crm_order_id 5010): exists")
			require.Contains(t, out.String(), "300 rows: 4 created, 296 already present, 0 changed, 0 in conflict, 0 refused, 0 failed")

			// The orders' events name the administrator.
			db, err := database.Open(ctx, opts)
			require.NoError(t, err)
			defer func() { _ = database.Close(db) }()
			var actors []string
			require.NoError(t, database.Scan(db.Raw("SELECT DISTINCT actor_name FROM events WHERE type = 'order.received'"), &actors))
			require.Equal(t, []string{"Администратор"}, actors)
			// Each run of the command has a correlation id of its own, which
			// every order it wrote carries.
			var runs []struct {
				CorrelationID *string
				N             int
			}
			require.NoError(t, database.Scan(db.Raw(`SELECT correlation_id, count(*) AS n FROM events WHERE type = 'order.received'
GROUP BY correlation_id ORDER BY count(*) DESC`), &runs))
			require.Len(t, runs, 2, "%+v", runs)
			require.Equal(t, []int{296, 4}, []int{runs[0].N, runs[1].N})
			for _, r := range runs {
				require.NotNil(t, r.CorrelationID)
				require.Regexp(t, `^cli-[A-Z2-7]{26}$`, *r.CorrelationID)
			}

			// Files it cannot read.
			for name, content := range map[string]string{"empty": "", "object": `{"rows": []}`, "broken": `[{"crm_order_id": 1,`, "scalar": `42`} {
				bad := filepath.Join(t.TempDir(), name+".json")
				require.NoError(t, os.WriteFile(bad, []byte(content), 0o600))
				require.Error(t, run(ctx, []string{"import", "crm", bad}, env(vars), io.Discard, io.Discard), name)
			}
			require.Error(t, run(ctx, []string{"import", "crm", filepath.Join(t.TempDir(), "missing.json")}, env(vars), io.Discard, io.Discard))
			var usage bytes.Buffer
			require.ErrorIs(t, run(ctx, []string{"import", "erp", file}, env(vars), io.Discard, &usage), errUsage)
			require.Contains(t, usage.String(), "Usage: tsekh import crm")
			require.Error(t, run(ctx, []string{"import", "crm", "--user", "424242", file}, env(vars), io.Discard, io.Discard))
		})
	}
}

// Not on a terminal (a CI log), the import prints a plain progress line when
// it starts, every few seconds and at the end, never a carriage return.
func TestProgressBar_NotATerminal(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := newProgressBar(&buf, "crm.json", 2_000_000)
	require.False(t, p.line.Terminal(), "a buffer is no terminal")
	p.update(1_000_000, 10)
	p.last = time.Time{} // as if the redraw limit had passed
	p.update(1_500_000, 15)
	p.clear()
	p.finish(2_000_000, 20)
	p.finish(2_000_000, 20)
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	require.Len(t, lines, 2, "%q: the first line, nothing within a few seconds, the last", buf.String())
	require.True(t, strings.HasPrefix(lines[0], "importing crm.json:  50% 1.0/2.0 MB, 10 rows, "), lines[0])
	require.True(t, strings.HasPrefix(lines[1], "importing crm.json: 100% 2.0/2.0 MB, 20 rows, "), lines[1])
	require.NotContains(t, buf.String(), "\r")
	require.NotContains(t, buf.String(), "\033")
}

// On a terminal the bar is redrawn in place, at most five times a second.
func TestProgressBar_Terminal(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	p := newProgressBar(&buf, "crm.json", 2_000_000)
	p.line = progress.NewTerminal(&buf)
	p.update(1_000_000, 10)
	require.Contains(t, buf.String(), "\rimporting crm.json [===============>              ]  50% 1.0/2.0 MB, 10 rows")
	p.update(1_500_000, 15) // too soon after the last redraw
	require.NotContains(t, buf.String(), "15 rows")
	p.clear()
	p.finish(2_000_000, 20)
	require.Contains(t, buf.String(), "100% 2.0/2.0 MB, 20 rows")
	require.True(t, strings.HasSuffix(buf.String(), "\n"))
}

func TestRun_ImportProgressInALog(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "crm.json")
	require.NoError(t, os.WriteFile(file, []byte(`[{"crm_order_id": 1, "customer": {"name": "Иван"}, "items": [{"sku": "SHK-KUPE-1600", "qty": 1}]}]`), 0o600))
	vars := map[string]string{"SQLITE_PATH": filepath.Join(t.TempDir(), "tsekh.db")}
	require.NoError(t, run(context.Background(), []string{"seed", "--demo"}, env(vars), io.Discard, io.Discard))
	var stderr bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"import", "crm", file}, env(vars), io.Discard, &stderr))
	require.Contains(t, stderr.String(), "importing "+file+": 100% ")
	require.NotContains(t, stderr.String(), "\r")
}

func TestRun_ShopCallbackNeedsSecret(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"SQLITE_PATH": filepath.Join(t.TempDir(), "tsekh.db"), "SHOP_CALLBACK_URL": "https://shop.example/tsekh"}
	err := run(context.Background(), []string{"migrate"}, env(vars), io.Discard, io.Discard)
	require.ErrorContains(t, err, "SHOP_CALLBACK_URL needs SHOP_WEBHOOK_SECRET")
	vars["SHOP_WEBHOOK_SECRET"] = "s3cret"
	err = run(context.Background(), []string{"migrate"}, env(vars), io.Discard, io.Discard)
	require.ErrorContains(t, err, "SHOP_WEBHOOK_SECRET must be at least 32 bytes (it is 6)", "refused at start-up")
	vars["SHOP_WEBHOOK_SECRET"] = "s3cret-value-of-at-least-32-bytes"
	require.NoError(t, run(context.Background(), []string{"migrate"}, env(vars), io.Discard, io.Discard))
}
