// Package config reads tsekh's settings from the environment, validates them
// and prints them with secrets masked.
package config

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // FACTORY_TIMEZONE resolves where the system has no zone database
	"unicode"
	"unicode/utf8"

	"github.com/caarlos0/env/v11"
)

// MinShopWebhookSecret is the shortest SHOP_WEBHOOK_SECRET accepted, in
// bytes: the key of HMAC-SHA256 should be as long as its output.
const MinShopWebhookSecret = 32

// Config is every setting of the service. Each field's `env` tag names its
// variable; docs/operating.md documents them all.
type Config struct {
	DatabaseURL         string        `env:"DATABASE_URL" secret:"password"`
	SQLitePath          string        `env:"SQLITE_PATH" envDefault:"tsekh.db"`
	HTTPAddr            string        `env:"HTTP_ADDR" envDefault:":8080"`
	HTTPRequestTimeout  time.Duration `env:"HTTP_REQUEST_TIMEOUT" envDefault:"30s"`
	DBConnectTimeout    time.Duration `env:"DB_CONNECT_TIMEOUT" envDefault:"5s"`
	DBStatementTimeout  time.Duration `env:"DB_STATEMENT_TIMEOUT" envDefault:"30s"`
	DBLockTimeout       time.Duration `env:"DB_LOCK_TIMEOUT" envDefault:"10s"`
	DBMaxConns          int           `env:"DB_MAX_CONNS" envDefault:"10"`
	DispatchDBMaxConns  int           `env:"DISPATCH_DB_MAX_CONNS" envDefault:"4"`
	MetricsAddr         string        `env:"METRICS_ADDR"`
	PublicURL           string        `env:"PUBLIC_URL" envDefault:"http://localhost:8080"`
	DispatchInterval    time.Duration `env:"DISPATCH_INTERVAL" envDefault:"1m"`
	DispatchBatchSize   int           `env:"DISPATCH_BATCH_SIZE" envDefault:"1000"`
	DispatchMaxAttempts int           `env:"DISPATCH_MAX_ATTEMPTS" envDefault:"10"`
	DispatchTimeout     time.Duration `env:"DISPATCH_TIMEOUT" envDefault:"30s"`
	DispatchLease       time.Duration `env:"DISPATCH_LEASE" envDefault:"1m"`
	DispatchCallBudget  time.Duration `env:"DISPATCH_CALL_BUDGET" envDefault:"5s"`
	DispatchRetryAfter  time.Duration `env:"DISPATCH_RETRY_AFTER_CAP" envDefault:"24h"`
	MaintenanceInterval time.Duration `env:"MAINTENANCE_INTERVAL" envDefault:"10m"`
	IdempotencyKeyTTL   time.Duration `env:"IDEMPOTENCY_KEY_TTL" envDefault:"24h"`
	ShopWebhookSecret   string        `env:"SHOP_WEBHOOK_SECRET" secret:"true"`
	ShopCallbackURL     string        `env:"SHOP_CALLBACK_URL" secret:"userinfo,query"`
	ShopCallbackConc    int           `env:"SHOP_CALLBACK_CONCURRENCY" envDefault:"4"`
	ShopConflicts       string        `env:"SHOP_CONFLICTS" envDefault:"office"`
	IntakeBodyLimit     int           `env:"INTAKE_BODY_LIMIT" envDefault:"65536"`
	BootstrapAdminToken string        `env:"BOOTSTRAP_ADMIN_TOKEN" secret:"true"`
	NATSURL             string        `env:"NATS_URL" secret:"userinfo"`
	NATSRelayConc       int           `env:"NATS_RELAY_CONCURRENCY" envDefault:"16"`
	FactoryTimezone     string        `env:"FACTORY_TIMEZONE" envDefault:"Europe/Moscow"`
	FloorScrapReasons   []string      `env:"FLOOR_SCRAP_REASONS" envSeparator:"," envDefault:"chipped=Скол,wrong_size=Не тот размер,drilling_error=Ошибка присадки,edge_defect=Дефект кромки,damaged=Повреждение,material_defect=Брак материала,other=Другое"`
	StreamMaxClients    int           `env:"EVENTS_STREAM_MAX_CLIENTS" envDefault:"100"`
	StreamHeartbeat     time.Duration `env:"EVENTS_STREAM_HEARTBEAT" envDefault:"15s"`
	EdgeOverhangMM      int           `env:"EDGE_OVERHANG_MM" envDefault:"30"`
	// The panel saw's settings for cutting plans: kerf, stages (0: any
	// number), the smallest offcut kept (both sides), how much a larger
	// offcut is worth against smaller ones of the same area, the
	// optimiser's time budget per board and its effort per part.
	CuttingKerfMM       float64       `env:"CUTTING_KERF_MM" envDefault:"4.4"`
	CuttingStages       int           `env:"CUTTING_STAGES" envDefault:"3"`
	CuttingMinOffcutMM  int           `env:"CUTTING_MIN_OFFCUT_MM" envDefault:"300"`
	CuttingOffcutWeight float64       `env:"CUTTING_OFFCUT_WEIGHT" envDefault:"1"`
	CuttingTimeBudget   time.Duration `env:"CUTTING_TIME_BUDGET" envDefault:"10s"`
	CuttingEffort       int64         `env:"CUTTING_EFFORT" envDefault:"1000000"`
	// Background jobs (a cutting plan): how many one replica runs at once,
	// and how long a running job's lease lasts without renewal.
	JobsConcurrency int           `env:"JOBS_CONCURRENCY" envDefault:"1"`
	JobsLease       time.Duration `env:"JOBS_LEASE" envDefault:"30s"`
	// JobsDocumentRetention is how long a done job's document (a labels
	// job's PDF) is kept.
	JobsDocumentRetention time.Duration `env:"JOBS_DOCUMENT_RETENTION" envDefault:"168h"`
	// LabelSizeMM is the labels' width × height in mm, "58x40".
	LabelSizeMM string `env:"LABEL_SIZE_MM" envDefault:"58x40"`
	LogFormat   string `env:"LOG_FORMAT" envDefault:"text"`
	LogLevel    string `env:"LOG_LEVEL" envDefault:"info"`
}

// Load reads the configuration through getenv and validates it.
func Load(getenv func(string) string) (Config, error) {
	var c Config
	vars := map[string]string{}
	for _, name := range names() {
		if v := getenv(name); v != "" {
			vars[name] = v
		}
	}
	if err := env.ParseWithOptions(&c, env.Options{Environment: vars}); err != nil {
		return c, readable(err)
	}
	return c, c.Validate()
}

// readable names the variable of each value that could not be parsed.
func readable(err error) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return fmt.Errorf("configuration: %w", err)
	}
	t := reflect.TypeOf(Config{})
	var errs []error
	for _, e := range agg.Errors {
		var pe env.ParseError
		if errors.As(e, &pe) {
			if f, ok := t.FieldByName(pe.Name); ok {
				name := strings.Split(f.Tag.Get("env"), ",")[0]
				errs = append(errs, fmt.Errorf("%s: cannot parse %s: %w", name, pe.Type, errors.Unwrap(pe.Err)))
				continue
			}
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// Validate reports every invalid setting at once.
func (c Config) Validate() error {
	var errs []error
	if c.DatabaseURL != "" {
		u, err := url.Parse(c.DatabaseURL)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			errs = append(errs, errors.New("DATABASE_URL must be a postgres:// URL"))
		}
	} else if c.SQLitePath == "" {
		errs = append(errs, errors.New("SQLITE_PATH must not be empty when DATABASE_URL is not set"))
	}
	if c.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			errs = append(errs, errors.New("METRICS_ADDR must be host:port or :port, e.g. :9090"))
		} else if c.MetricsAddr == c.HTTPAddr {
			errs = append(errs, errors.New("METRICS_ADDR must differ from HTTP_ADDR (leave it empty to serve /metrics to administrators on the API port)"))
		}
	}
	if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		errs = append(errs, errors.New("PUBLIC_URL must be an http(s) URL without a query, e.g. https://tsekh.example.com"))
	}
	if c.DispatchInterval < time.Second {
		errs = append(errs, errors.New("DISPATCH_INTERVAL must be at least 1s"))
	}
	if c.DispatchBatchSize < 1 || c.DispatchBatchSize > 10000 {
		errs = append(errs, errors.New("DISPATCH_BATCH_SIZE must be between 1 and 10000"))
	}
	if c.ShopConflicts != "office" && c.ShopConflicts != "shop" {
		errs = append(errs, errors.New("SHOP_CONFLICTS must be office (refuse a shop delivery that changes what the office changed since: 409) or shop (apply the rest, flag the order)"))
	}
	if c.IntakeBodyLimit < 1024 || c.IntakeBodyLimit > 1<<20 {
		errs = append(errs, errors.New("INTAKE_BODY_LIMIT must be between 1024 and 1048576 (bytes)"))
	}
	if c.ShopCallbackConc < 1 || c.ShopCallbackConc > 256 {
		errs = append(errs, errors.New("SHOP_CALLBACK_CONCURRENCY must be between 1 and 256"))
	}
	if c.EdgeOverhangMM < 0 || c.EdgeOverhangMM > 500 {
		errs = append(errs, errors.New("EDGE_OVERHANG_MM must be between 0 and 500"))
	}
	if c.CuttingKerfMM < 0 || c.CuttingKerfMM > 20 {
		errs = append(errs, errors.New("CUTTING_KERF_MM must be between 0 and 20"))
	}
	if c.CuttingStages < 0 || c.CuttingStages > 20 {
		errs = append(errs, errors.New("CUTTING_STAGES must be between 0 (any number) and 20"))
	}
	if c.CuttingMinOffcutMM < 0 || c.CuttingMinOffcutMM > 10000 {
		errs = append(errs, errors.New("CUTTING_MIN_OFFCUT_MM must be between 0 and 10000"))
	}
	if !(c.CuttingOffcutWeight >= 0 && c.CuttingOffcutWeight <= 10) {
		errs = append(errs, errors.New("CUTTING_OFFCUT_WEIGHT must be between 0 and 10"))
	}
	if c.CuttingTimeBudget < 100*time.Millisecond || c.CuttingTimeBudget > 10*time.Minute {
		errs = append(errs, errors.New("CUTTING_TIME_BUDGET must be between 100ms and 10m"))
	}
	if c.CuttingEffort < 1000 || c.CuttingEffort > 100_000_000 {
		errs = append(errs, errors.New("CUTTING_EFFORT must be between 1000 and 100000000 (placements per part)"))
	}
	if c.JobsConcurrency < 1 || c.JobsConcurrency > 64 {
		errs = append(errs, errors.New("JOBS_CONCURRENCY must be between 1 and 64"))
	}
	if c.JobsLease < 3*time.Second || c.JobsLease > time.Hour {
		errs = append(errs, errors.New("JOBS_LEASE must be between 3s and 1h"))
	}
	if c.JobsDocumentRetention < time.Hour || c.JobsDocumentRetention > 8760*time.Hour {
		errs = append(errs, errors.New("JOBS_DOCUMENT_RETENTION must be between 1h and 8760h (a year)"))
	}
	if _, _, err := c.LabelSize(); err != nil {
		errs = append(errs, err)
	}
	if c.NATSRelayConc < 1 || c.NATSRelayConc > 256 {
		errs = append(errs, errors.New("NATS_RELAY_CONCURRENCY must be between 1 and 256"))
	}
	if c.DispatchRetryAfter <= 0 {
		errs = append(errs, errors.New("DISPATCH_RETRY_AFTER_CAP must be positive (a duration such as 24h)"))
	}
	if c.StreamMaxClients < 1 || c.StreamMaxClients > 100000 {
		errs = append(errs, errors.New("EVENTS_STREAM_MAX_CLIENTS must be between 1 and 100000"))
	}
	if c.StreamHeartbeat < time.Second || c.StreamHeartbeat > 10*time.Minute {
		errs = append(errs, errors.New("EVENTS_STREAM_HEARTBEAT must be between 1s and 10m"))
	}
	if c.DispatchMaxAttempts < 1 {
		errs = append(errs, errors.New("DISPATCH_MAX_ATTEMPTS must be at least 1"))
	}
	if c.DispatchTimeout <= 0 {
		errs = append(errs, errors.New("DISPATCH_TIMEOUT must be positive"))
	}
	if c.DispatchCallBudget < 100*time.Millisecond {
		errs = append(errs, errors.New("DISPATCH_CALL_BUDGET must be at least 100ms"))
	}
	if c.HTTPRequestTimeout < time.Second || c.HTTPRequestTimeout > 10*time.Minute {
		errs = append(errs, errors.New("HTTP_REQUEST_TIMEOUT must be between 1s and 10m"))
	}
	if c.DBConnectTimeout < 100*time.Millisecond || c.DBConnectTimeout > 5*time.Minute {
		errs = append(errs, errors.New("DB_CONNECT_TIMEOUT must be between 100ms and 5m"))
	}
	if c.DBStatementTimeout < 0 || (c.DBStatementTimeout > 0 && c.DBStatementTimeout < 100*time.Millisecond) {
		errs = append(errs, errors.New("DB_STATEMENT_TIMEOUT must be 0 (none) or at least 100ms"))
	}
	if c.DBLockTimeout < 0 || (c.DBLockTimeout > 0 && c.DBLockTimeout < 10*time.Millisecond) {
		errs = append(errs, errors.New("DB_LOCK_TIMEOUT must be 0 (none) or at least 10ms"))
	}
	if c.DBMaxConns < 1 || c.DBMaxConns > 1000 {
		errs = append(errs, errors.New("DB_MAX_CONNS must be between 1 and 1000"))
	}
	if c.DispatchDBMaxConns < 2 || c.DispatchDBMaxConns > 1000 {
		errs = append(errs, errors.New("DISPATCH_DB_MAX_CONNS must be between 2 and 1000 (the dispatcher's batch transactions and its reads each take one)"))
	}
	if c.DispatchLease < time.Second {
		errs = append(errs, errors.New("DISPATCH_LEASE must be at least 1s"))
	}
	if n := len(c.ShopWebhookSecret); n > 0 && n < MinShopWebhookSecret {
		errs = append(errs, fmt.Errorf("SHOP_WEBHOOK_SECRET must be at least %d bytes (it is %d): it is an HMAC-SHA256 key, make one with `openssl rand -hex 32`",
			MinShopWebhookSecret, n))
	}
	if c.MaintenanceInterval < time.Second {
		errs = append(errs, errors.New("MAINTENANCE_INTERVAL must be at least 1s"))
	}
	// A key is held in flight for up to 2 minutes (then a retry takes it
	// over): it must not expire before that.
	if c.IdempotencyKeyTTL < 10*time.Minute {
		errs = append(errs, errors.New("IDEMPOTENCY_KEY_TTL must be at least 10m"))
	}
	if c.ShopCallbackURL != "" {
		if u, err := url.Parse(c.ShopCallbackURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, errors.New("SHOP_CALLBACK_URL must be an http(s) URL"))
		}
		if c.ShopWebhookSecret == "" {
			errs = append(errs, errors.New("SHOP_CALLBACK_URL needs SHOP_WEBHOOK_SECRET, which signs the callbacks"))
		}
	}
	if _, err := time.LoadLocation(c.FactoryTimezone); err != nil || c.FactoryTimezone == "" || strings.EqualFold(c.FactoryTimezone, "Local") {
		errs = append(errs, errors.New("FACTORY_TIMEZONE must be an IANA time zone, e.g. Europe/Moscow or UTC"))
	}
	if len(c.FloorScrapReasons) == 0 || len(c.FloorScrapReasons) > 50 {
		errs = append(errs, errors.New("FLOOR_SCRAP_REASONS must list 1 to 50 reasons, separated by commas"))
	}
	for _, r := range c.FloorScrapReasons {
		code, label := SplitScrapReason(r)
		if !isReason(code) {
			errs = append(errs, fmt.Errorf("FLOOR_SCRAP_REASONS: %q is not a reason: each is a code of 1 to 40 of a-z, 0-9 and _, then =, then its label", r))
			break
		}
		if label == "" || utf8.RuneCountInString(label) > MaxScrapLabel || !utf8.ValidString(label) || strings.ContainsFunc(label, unicode.IsControl) {
			errs = append(errs, fmt.Errorf("FLOOR_SCRAP_REASONS: the label of %q must be 1 to %d characters on one line", code, MaxScrapLabel))
			break
		}
	}
	switch c.LogFormat {
	case "text", "json":
	default:
		errs = append(errs, errors.New("LOG_FORMAT must be text or json"))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, errors.New("LOG_LEVEL must be debug, info, warn or error"))
	}
	if len(c.BootstrapAdminToken) > 0 && len(c.BootstrapAdminToken) < 16 {
		errs = append(errs, errors.New("BOOTSTRAP_ADMIN_TOKEN must be at least 16 characters"))
	}
	return errors.Join(errs...)
}

// FactoryLocation is the factory's time zone (FACTORY_TIMEZONE): the days
// and shifts of the plan are in it. UTC when the setting is not valid (Load
// refuses it).
func (c Config) FactoryLocation() *time.Location {
	loc, err := time.LoadLocation(c.FactoryTimezone)
	if err != nil || c.FactoryTimezone == "" {
		return time.UTC
	}
	return loc
}

// UsesPostgres tells whether the service runs on PostgreSQL (else SQLite).
func (c Config) UsesPostgres() bool { return c.DatabaseURL != "" }

// Print writes one line per setting, secrets masked: a setting tagged
// secret:"true" is masked whole; the URLs keep their scheme, host and path
// and mask what their tag names: "password" (the password, and the values
// of query parameters that name a password, e.g. PostgreSQL's
// ?password=), "userinfo" (the user and the password: a NATS token is given
// as the user), "query" (every query value: a shop's callback may carry an
// API key there).
func (c Config) Print(w io.Writer) {
	v := reflect.ValueOf(c)
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name := strings.Split(f.Tag.Get("env"), ",")[0]
		val := fmt.Sprint(v.Field(i).Interface())
		switch tag := f.Tag.Get("secret"); tag {
		case "":
		case "true":
			if val != "" {
				val = masked
			}
		default:
			val = MaskURL(val, strings.Split(tag, ",")...)
		}
		_, _ = fmt.Fprintf(w, "  %-22s %s\n", name, val)
	}
}

const masked = "********"

// MaskURL returns the URL s (or each of a comma-separated list of URLs) with
// the parts named masked: "password", "userinfo", "query" (see Print). Text that is not a URL with a host is
// masked whole, as it may be a secret written wrongly.
func MaskURL(s string, parts ...string) string {
	if s == "" {
		return s
	}
	if strings.Count(s, "://") > 1 {
		// A list of servers (NATS_URL may name several, comma-separated).
		us := strings.Split(s, ",")
		for i, u := range us {
			us[i] = MaskURL(strings.TrimSpace(u), parts...)
		}
		return strings.Join(us, ",")
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return masked
	}
	has := func(p string) bool { return slices.Contains(parts, p) }
	if u.User != nil {
		_, hasPassword := u.User.Password()
		switch {
		case has("userinfo"):
			u.User = url.User(masked)
			if hasPassword {
				u.User = url.UserPassword(masked, masked)
			}
		case hasPassword:
			u.User = url.UserPassword(u.User.Username(), masked)
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			lk := strings.ToLower(k)
			if has("query") || strings.Contains(lk, "pass") || strings.Contains(lk, "secret") || strings.Contains(lk, "token") || strings.Contains(lk, "key") {
				q[k] = []string{masked}
			}
		}
		u.RawQuery = q.Encode()
	}
	u.Fragment = ""
	// The masks stay readable: url.String would escape the asterisks of
	// the query.
	return strings.ReplaceAll(u.String(), "%2A%2A%2A%2A%2A%2A%2A%2A", masked)
}

func names() []string {
	t := reflect.TypeOf(Config{})
	out := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		out = append(out, strings.Split(t.Field(i).Tag.Get("env"), ",")[0])
	}
	return out
}

// MaxScrapLabel is the longest label of a scrap reason, in characters.
const MaxScrapLabel = 60

// SplitScrapReason reads one reason of FLOOR_SCRAP_REASONS, "code=label"
// ("chipped=Скол"), into its code and label (blanks around each dropped);
// a reason given as its code alone is its own label.
func SplitScrapReason(s string) (code, label string) {
	code, label, ok := strings.Cut(s, "=")
	code, label = strings.TrimSpace(code), strings.TrimSpace(label)
	if !ok {
		label = code
	}
	return code, label
}

// isReason tells whether s is a scrap reason's code as FLOOR_SCRAP_REASONS
// lists them: 1 to 40 of a-z, 0-9 and _.
func isReason(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return true
}

// Bounds of LABEL_SIZE_MM: the narrowest label holds a part's code as a
// barcode with its quiet zones and a line of text, the widest is the
// print width of the common 4-inch printers.
const (
	MinLabelWidthMM  = 40
	MaxLabelWidthMM  = 104
	MinLabelHeightMM = 25
	MaxLabelHeightMM = 150
)

// LabelSize is LABEL_SIZE_MM read: the labels' width and height in mm.
func (c Config) LabelSize() (w, h float64, err error) {
	ws, hs, ok := strings.Cut(strings.ToLower(strings.TrimSpace(c.LabelSizeMM)), "x")
	if ok {
		w, err = strconv.ParseFloat(strings.TrimSpace(ws), 64)
		if err == nil {
			h, err = strconv.ParseFloat(strings.TrimSpace(hs), 64)
		}
	}
	if !ok || err != nil || w < MinLabelWidthMM || w > MaxLabelWidthMM || h < MinLabelHeightMM || h > MaxLabelHeightMM {
		return 0, 0, fmt.Errorf("LABEL_SIZE_MM must be the labels' width and height in mm, e.g. 58x40 (width %d–%d, height %d–%d)",
			MinLabelWidthMM, MaxLabelWidthMM, MinLabelHeightMM, MaxLabelHeightMM)
	}
	return w, h, nil
}
