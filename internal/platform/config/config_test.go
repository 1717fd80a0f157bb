package config_test

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/platform/config"
)

func vars(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoad_Defaults(t *testing.T) {
	c, err := config.Load(vars(nil))
	require.NoError(t, err)
	require.Equal(t, ":8080", c.HTTPAddr)
	require.Equal(t, time.Minute, c.DispatchInterval)
	require.Equal(t, time.Minute, c.DispatchLease)
	require.Equal(t, 10*time.Minute, c.MaintenanceInterval)
	require.Equal(t, 24*time.Hour, c.IdempotencyKeyTTL)
	require.False(t, c.UsesPostgres())
	require.Equal(t, "tsekh.db", c.SQLitePath)
	require.Equal(t, "http://localhost:8080", c.PublicURL)
}

func TestLoad_Errors(t *testing.T) {
	_, err := config.Load(vars(map[string]string{"DISPATCH_INTERVAL": "soon"}))
	require.ErrorContains(t, err, "DISPATCH_INTERVAL")
	_, err = config.Load(vars(map[string]string{"DISPATCH_LEASE": "100ms"}))
	require.ErrorContains(t, err, "DISPATCH_LEASE must be at least 1s")
	_, err = config.Load(vars(map[string]string{"MAINTENANCE_INTERVAL": "500ms", "IDEMPOTENCY_KEY_TTL": "5m"}))
	require.ErrorContains(t, err, "MAINTENANCE_INTERVAL must be at least 1s")
	require.ErrorContains(t, err, "IDEMPOTENCY_KEY_TTL must be at least 10m")
	_, err = config.Load(vars(map[string]string{
		"DATABASE_URL": "mysql://x", "LOG_FORMAT": "xml", "DISPATCH_INTERVAL": "10ms",
		"SHOP_CALLBACK_URL": "ftp://shop", "BOOTSTRAP_ADMIN_TOKEN": "short", "PUBLIC_URL": "tsekh.example.com",
	}))
	for _, name := range []string{"DATABASE_URL", "LOG_FORMAT", "DISPATCH_INTERVAL", "SHOP_CALLBACK_URL", "BOOTSTRAP_ADMIN_TOKEN", "PUBLIC_URL"} {
		require.ErrorContains(t, err, name)
	}
}

// LABEL_SIZE_MM is the labels' width and height, 58x40 by default;
// anything else is an error naming it.
func TestLoad_LabelSize(t *testing.T) {
	c, err := config.Load(vars(nil))
	require.NoError(t, err)
	w, h, err := c.LabelSize()
	require.NoError(t, err)
	require.Equal(t, [2]float64{58, 40}, [2]float64{w, h})
	c, err = config.Load(vars(map[string]string{"LABEL_SIZE_MM": " 100 X 50.5 "}))
	require.NoError(t, err)
	w, h, err = c.LabelSize()
	require.NoError(t, err)
	require.Equal(t, [2]float64{100, 50.5}, [2]float64{w, h})
	for _, bad := range []string{"58", "58x", "x40", "58*40", "30x40", "58x20", "200x40", "58x400", "wide x tall"} {
		_, err = config.Load(vars(map[string]string{"LABEL_SIZE_MM": bad}))
		require.ErrorContains(t, err, "LABEL_SIZE_MM", bad)
	}
}

func TestLoad_ShopWebhookSecretOf32Bytes(t *testing.T) {
	_, err := config.Load(vars(map[string]string{"SHOP_WEBHOOK_SECRET": "x"}))
	require.ErrorContains(t, err, "SHOP_WEBHOOK_SECRET must be at least 32 bytes (it is 1)")
	_, err = config.Load(vars(map[string]string{"SHOP_WEBHOOK_SECRET": strings.Repeat("s", 31)}))
	require.ErrorContains(t, err, "SHOP_WEBHOOK_SECRET must be at least 32 bytes (it is 31)")
	c, err := config.Load(vars(map[string]string{"SHOP_WEBHOOK_SECRET": strings.Repeat("s", 32)}))
	require.NoError(t, err)
	require.Len(t, c.ShopWebhookSecret, 32)
	_, err = config.Load(vars(nil))
	require.NoError(t, err, "no secret: the webhook is off, which is allowed")
}

func TestPrint_MasksSecrets(t *testing.T) {
	c, err := config.Load(vars(map[string]string{
		"DATABASE_URL":          "postgres://tsekh:hunter2@db:5432/tsekh?sslmode=disable&password=pgq-secret",
		"SHOP_WEBHOOK_SECRET":   "shop-secret-0123456789abcdef0123456789",
		"SHOP_CALLBACK_URL":     "https://shopuser:shoppass@shop.example/tsekh/cb?api_key=cb-key-42&v=2",
		"BOOTSTRAP_ADMIN_TOKEN": "admin-token-0123456789",
		"NATS_URL":              "nats://nats-token-77@nats:4222,nats://natsuser:natspass@nats2:4222",
	}))
	require.NoError(t, err)
	var b bytes.Buffer
	c.Print(&b)
	out := b.String()
	for _, secret := range []string{"hunter2", "pgq-secret", "shop-secret-0123456789abcdef0123456789", "admin-token-0123456789",
		"shopuser", "shoppass", "cb-key-42", "nats-token-77", "natsuser", "natspass"} {
		require.NotContains(t, out, secret)
	}
	line := func(name string) string {
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == name {
				return l
			}
		}
		t.Fatalf("%s is not printed:\n%s", name, out)
		return ""
	}
	// What tells a setting apart stays: the host, the path, the user of
	// the database, the names of the callback's query parameters.
	require.Contains(t, line("DATABASE_URL"), "postgres://tsekh:********@db:5432/tsekh?")
	require.Contains(t, line("DATABASE_URL"), "sslmode=disable")
	require.Contains(t, line("SHOP_CALLBACK_URL"), "https://********:********@shop.example/tsekh/cb?api_key=********&v=********")
	require.Contains(t, line("SHOP_WEBHOOK_SECRET"), "********")
	require.Contains(t, line("NATS_URL"), "********")
}

func TestMaskURL(t *testing.T) {
	for _, tc := range []struct {
		in    string
		parts []string
		want  string
	}{
		{"nats://tok@nats:4222", []string{"userinfo"}, "nats://********@nats:4222"},
		{"nats://nats:4222", []string{"userinfo"}, "nats://nats:4222"},
		{"postgres://postgres@127.0.0.1:5432/test?sslmode=disable", []string{"password"}, "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"},
		{"http://shop/cb?token=x", []string{"userinfo"}, "http://shop/cb?token=********"},
		{"not a url with a secret", []string{"password"}, "********"},
		{"", []string{"password"}, ""},
	} {
		require.Equal(t, tc.want, config.MaskURL(tc.in, tc.parts...), tc.in)
	}
}

func TestLoad_MetricsAddr(t *testing.T) {
	c, err := config.Load(vars(nil))
	require.NoError(t, err)
	require.Empty(t, c.MetricsAddr, "by default /metrics is on the API port, for administrators")
	c, err = config.Load(vars(map[string]string{"METRICS_ADDR": "127.0.0.1:9090"}))
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:9090", c.MetricsAddr)
	_, err = config.Load(vars(map[string]string{"METRICS_ADDR": "9090"}))
	require.ErrorContains(t, err, "METRICS_ADDR must be host:port")
	_, err = config.Load(vars(map[string]string{"METRICS_ADDR": ":8080"}))
	require.ErrorContains(t, err, "METRICS_ADDR must differ from HTTP_ADDR")
}

func TestLoad_FactoryTimezone(t *testing.T) {
	c, err := config.Load(vars(nil))
	require.NoError(t, err)
	require.Equal(t, "Europe/Moscow", c.FactoryLocation().String())
	c, err = config.Load(vars(map[string]string{"FACTORY_TIMEZONE": "Asia/Yekaterinburg"}))
	require.NoError(t, err)
	require.Equal(t, "Asia/Yekaterinburg", c.FactoryLocation().String())
	for _, bad := range []string{"Moscow", "Local", "Europe/Nowhere"} {
		_, err = config.Load(vars(map[string]string{"FACTORY_TIMEZONE": bad}))
		require.ErrorContains(t, err, "FACTORY_TIMEZONE must be an IANA time zone", bad)
	}
}

func TestLoad_BoundedWaits(t *testing.T) {
	c, err := config.Load(vars(nil))
	require.NoError(t, err)
	require.Equal(t, 30*time.Second, c.HTTPRequestTimeout)
	require.Equal(t, 5*time.Second, c.DBConnectTimeout)
	require.Equal(t, 30*time.Second, c.DBStatementTimeout)
	require.Equal(t, 10*time.Second, c.DBLockTimeout)
	require.Equal(t, 10, c.DBMaxConns)
	require.Equal(t, 4, c.DispatchDBMaxConns)
	require.Equal(t, 5*time.Second, c.DispatchCallBudget)

	c, err = config.Load(vars(map[string]string{"DB_STATEMENT_TIMEOUT": "0", "DB_LOCK_TIMEOUT": "0", "DB_MAX_CONNS": "40",
		"DISPATCH_DB_MAX_CONNS": "8", "HTTP_REQUEST_TIMEOUT": "2m", "DB_CONNECT_TIMEOUT": "1s", "DISPATCH_CALL_BUDGET": "500ms"}))
	require.NoError(t, err, "0 turns the statement and lock timeouts off")
	require.Zero(t, c.DBStatementTimeout)
	require.Equal(t, 40, c.DBMaxConns)
	require.Equal(t, 8, c.DispatchDBMaxConns)
	require.Equal(t, 2*time.Minute, c.HTTPRequestTimeout)
	require.Equal(t, 500*time.Millisecond, c.DispatchCallBudget)

	_, err = config.Load(vars(map[string]string{"DB_STATEMENT_TIMEOUT": "-1s", "DB_LOCK_TIMEOUT": "1ms", "DB_MAX_CONNS": "0",
		"DISPATCH_DB_MAX_CONNS": "1", "HTTP_REQUEST_TIMEOUT": "100ms", "DB_CONNECT_TIMEOUT": "0", "DISPATCH_CALL_BUDGET": "1ms"}))
	for _, msg := range []string{"DB_STATEMENT_TIMEOUT must be 0 (none) or at least 100ms", "DB_LOCK_TIMEOUT must be 0 (none) or at least 10ms",
		"DB_MAX_CONNS must be between 1 and 1000", "DISPATCH_DB_MAX_CONNS must be between 2 and 1000", "HTTP_REQUEST_TIMEOUT must be between 1s and 10m",
		"DB_CONNECT_TIMEOUT must be between 100ms and 5m", "DISPATCH_CALL_BUDGET must be at least 100ms"} {
		require.ErrorContains(t, err, msg)
	}
	_, err = config.Load(vars(map[string]string{"DB_MAX_CONNS": "many"}))
	require.ErrorContains(t, err, "DB_MAX_CONNS: cannot parse")
}

// Every setting has its line in the configuration table of docs/operating.md.
func TestDocs_EverySettingDocumented(t *testing.T) {
	readme, err := os.ReadFile("../../../docs/operating.md")
	require.NoError(t, err)
	var b bytes.Buffer
	config.Config{}.Print(&b)
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		name := strings.Fields(line)[0]
		require.Contains(t, string(readme), "| `"+name+"` |", "docs/operating.md's configuration table lacks %s", name)
	}
}

func TestLoad_CuttingOffcutWeight(t *testing.T) {
	c, err := config.Load(vars(nil))
	require.NoError(t, err)
	require.InDelta(t, 1.0, c.CuttingOffcutWeight, 1e-12)
	c, err = config.Load(vars(map[string]string{"CUTTING_OFFCUT_WEIGHT": "0"}))
	require.NoError(t, err, "0: no preference for larger offcuts")
	require.Zero(t, c.CuttingOffcutWeight)
	for _, bad := range []string{"-0.5", "11", "NaN"} {
		_, err = config.Load(vars(map[string]string{"CUTTING_OFFCUT_WEIGHT": bad}))
		require.ErrorContains(t, err, "CUTTING_OFFCUT_WEIGHT must be between 0 and 10", bad)
	}
}

func TestLoad_CuttingEffort(t *testing.T) {
	c, err := config.Load(vars(nil))
	require.NoError(t, err)
	require.Equal(t, int64(1_000_000), c.CuttingEffort)
	c, err = config.Load(vars(map[string]string{"CUTTING_EFFORT": "20000"}))
	require.NoError(t, err)
	require.Equal(t, int64(20_000), c.CuttingEffort)
	for _, bad := range []string{"0", "999", "100000001", "-5"} {
		_, err = config.Load(vars(map[string]string{"CUTTING_EFFORT": bad}))
		require.ErrorContains(t, err, "CUTTING_EFFORT must be between 1000 and 100000000", bad)
	}
}

// Scrap reasons are codes with Russian labels for the shop floor: by
// default, and as FLOOR_SCRAP_REASONS gives them (code=label; a code alone
// is its own label); a code or label out of bounds is refused.
func TestLoad_ScrapReasons(t *testing.T) {
	c, err := config.Load(vars(nil))
	require.NoError(t, err)
	require.Len(t, c.FloorScrapReasons, 7)
	code, label := config.SplitScrapReason(c.FloorScrapReasons[2])
	require.Equal(t, "drilling_error", code)
	require.Equal(t, "Ошибка присадки", label)

	c, err = config.Load(vars(map[string]string{"FLOOR_SCRAP_REASONS": "chipped=Скол, burnt = Прижог,other"}))
	require.NoError(t, err)
	var got [][2]string
	for _, r := range c.FloorScrapReasons {
		code, label := config.SplitScrapReason(r)
		got = append(got, [2]string{code, label})
	}
	require.Equal(t, [][2]string{{"chipped", "Скол"}, {"burnt", "Прижог"}, {"other", "other"}}, got)

	for _, bad := range []string{"Chipped=Скол", "chipped=", "chipped=" + strings.Repeat("я", 61), "=Скол"} {
		_, err = config.Load(vars(map[string]string{"FLOOR_SCRAP_REASONS": bad}))
		require.ErrorContains(t, err, "FLOOR_SCRAP_REASONS", bad)
	}
}
