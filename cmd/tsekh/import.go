package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/tsekh/tsekh/internal/app"
	"github.com/tsekh/tsekh/internal/auth"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/progress"
	"github.com/tsekh/tsekh/internal/sales"
)

const importSummary = `Imports CRM orders from FILE.json: a JSON array of orders, or {"orders": [...]}
as POST /api/v1/imports/crm/orders takes it, each
  {"crm_order_id": "CRM-10452", "customer": {"name": ...}, "items": [{"sku": ..., "qty": ...}], "due_date": "2026-12-20"}.
The file is read as a stream, so it may be of any size; a progress bar is drawn
on a terminal, and a plain progress line every few seconds elsewhere. Each
order is imported in its own transaction, once per crm_order_id (text up to 64
characters, or a whole number); rows count from 1. Running the
import again creates nothing twice. Refused rows (invalid) and failed rows (an
unexpected error) are printed with their reasons and the rows after them are
imported; the command then exits with status 1.
The orders are recorded under the administrator "Администратор" (created if
missing), or under the user given with --user.`

// importCmd is "tsekh import crm FILE.json".
func importCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flags("import crm [--user ID] [--verbose] FILE.json", importSummary, stderr)
	userID := fs.Int64("user", 0, "the id of the user the import acts as (default: the administrator)")
	verbose := fs.Bool("verbose", false, "print every row, not only the refused ones")
	if len(args) == 0 || args[0] != "crm" { // crm is the one source so far
		fs.Usage()
		return errUsage
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	path := fs.Arg(0)
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	info, err := f.Stat()
	if err != nil {
		return err
	}

	a, err := openApp(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer func() { _ = a.Close() }()
	if ctx, err = actAs(ctx, a, *userID); err != nil {
		return err
	}

	rows := newCRMStream(f)
	bar := newProgressBar(stderr, path, info.Size())
	var rep sales.ImportReport
	for i := 0; ; i++ {
		raw, err := rows.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			bar.finish(rows.offset(), i)
			return fmt.Errorf("%s: %w (the rows before it are imported)", path, err)
		}
		row, err := a.Sales.ImportCRMOrder(ctx, i+1, raw) // rows count from 1
		if err != nil {
			bar.finish(rows.offset(), i)
			return fmt.Errorf("%s: row %d: %w (the rows before it are imported)", path, i+1, err)
		}
		rep.Add(row)
		rep.Rows = rep.Rows[:0] // counts only: a large file's report is not kept in memory
		if row.Result == sales.ImportRefused || row.Result == sales.ImportFailed || row.Result == sales.ImportConflict || *verbose {
			bar.clear()
			_, _ = fmt.Fprintln(stdout, describeRow(row))
		}
		bar.update(rows.offset(), i+1)
	}
	total := rep.Created + rep.Exists + rep.Changed + rep.Conflict + rep.Refused + rep.Failed
	bar.finish(rows.offset(), total)
	a.WakeDispatcher()
	_, _ = fmt.Fprintf(stdout, "%s: %d rows: %d created, %d already present, %d changed, %d in conflict, %d refused, %d failed\n",
		path, total, rep.Created, rep.Exists, rep.Changed, rep.Conflict, rep.Refused, rep.Failed)
	if rep.Refused+rep.Failed+rep.Conflict > 0 {
		return fmt.Errorf("%d rows refused, %d failed, %d in conflict", rep.Refused, rep.Failed, rep.Conflict)
	}
	return nil
}

func describeRow(r sales.ImportRow) string {
	s := fmt.Sprintf("row %d", r.Row)
	if r.CRMOrderID != nil {
		s += fmt.Sprintf(" (crm_order_id %s)", *r.CRMOrderID)
	}
	s += ": " + r.Result
	if r.OrderID != nil {
		s += fmt.Sprintf(", order %d", *r.OrderID)
	}
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	for _, e := range r.Errors {
		s += fmt.Sprintf("; %s %s", e.Field, e.Message)
	}
	if r.Err != nil {
		s += fmt.Sprintf(" (%v)", r.Err)
	}
	return s
}

// crmStream reads the orders of a CRM file one at a time: a JSON array, or
// an object whose "orders" member is one.
type crmStream struct {
	dec     *json.Decoder
	started bool
	done    bool
}

func newCRMStream(r io.Reader) *crmStream {
	return &crmStream{dec: json.NewDecoder(bufio.NewReaderSize(r, 1<<16))}
}

func (s *crmStream) offset() int64 { return s.dec.InputOffset() }

func (s *crmStream) next() (json.RawMessage, error) {
	if s.done {
		return nil, io.EOF
	}
	if !s.started {
		s.started = true
		if err := s.open(); err != nil {
			return nil, err
		}
	}
	if !s.dec.More() {
		s.done = true
		if _, err := s.dec.Token(); err != nil { // the closing ]
			return nil, fmt.Errorf("not valid JSON at byte %d: %w", s.dec.InputOffset(), err)
		}
		return nil, io.EOF
	}
	var raw json.RawMessage
	if err := s.dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not valid JSON at byte %d: %w", s.dec.InputOffset(), err)
	}
	return raw, nil
}

// open reads up to the opening [ of the orders.
func (s *crmStream) open() error {
	tok, err := s.dec.Token()
	if errors.Is(err, io.EOF) {
		return errors.New("the file is empty; a JSON array of orders or {\"orders\": [...]} is expected")
	}
	if err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	switch tok {
	case json.Delim('['):
		return nil
	case json.Delim('{'):
		for s.dec.More() {
			key, err := s.dec.Token()
			if err != nil {
				return fmt.Errorf("not valid JSON: %w", err)
			}
			if key == "orders" {
				tok, err := s.dec.Token()
				if err != nil || tok != json.Delim('[') {
					return errors.New(`"orders" must be an array`)
				}
				return nil
			}
			var skip json.RawMessage
			if err := s.dec.Decode(&skip); err != nil {
				return fmt.Errorf("not valid JSON: %w", err)
			}
		}
		return errors.New(`the object has no "orders" array`)
	}
	return errors.New("a JSON array of orders or {\"orders\": [...]} is expected")
}

// progressBar shows "importing FILE [=====>    ] 45% 12.3/27.1 MB, 10234 rows,
// 2100 rows/s": on a terminal redrawn in place at most five times a second,
// elsewhere (a CI log) as a plain line, without the bar, every few seconds
// and at the end.
type progressBar struct {
	line     *progress.Line
	name     string
	size     int64
	start    time.Time
	last     time.Time
	finished bool
}

func newProgressBar(w io.Writer, name string, size int64) *progressBar {
	return &progressBar{line: progress.New(w), name: name, size: size, start: time.Now()}
}

func (p *progressBar) update(done int64, rows int) {
	if time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	p.line.Show("import", p.text(done, rows))
}

func (p *progressBar) text(done int64, rows int) string {
	const width = 30
	frac := 1.0
	if p.size > 0 {
		frac = min(float64(done)/float64(p.size), 1)
	}
	rate := float64(rows) / max(time.Since(p.start).Seconds(), 0.001)
	figures := fmt.Sprintf("%3.0f%% %.1f/%.1f MB, %d rows, %.0f rows/s", frac*100, float64(done)/1e6, float64(p.size)/1e6, rows, rate)
	if !p.line.Terminal() {
		return fmt.Sprintf("importing %s: %s", p.name, figures)
	}
	filled := int(frac * width)
	bar := make([]byte, width)
	for i := range bar {
		switch {
		case i < filled:
			bar[i] = '='
		case i == filled:
			bar[i] = '>'
		default:
			bar[i] = ' '
		}
	}
	return fmt.Sprintf("importing %s [%s] %s", p.name, bar, figures)
}

// clear wipes the bar so that a line can be printed in its place.
func (p *progressBar) clear() { p.line.Clear() }

func (p *progressBar) finish(done int64, rows int) {
	if p.finished {
		return
	}
	p.finished = true
	p.line.Finish(p.text(done, rows))
}

// actAs returns ctx acting as the user with the id, or as the administrator
// for 0, so that what a command writes is journalled under that user.
func actAs(ctx context.Context, a *app.App, userID int64) (context.Context, error) {
	var (
		u   auth.User
		err error
	)
	if userID > 0 {
		u, err = a.Auth.User(ctx, userID)
		if err == nil && u.DeactivatedAt != nil {
			err = fmt.Errorf("user %d (%s) was deactivated and cannot act", u.ID, u.Name)
		}
	} else {
		u, err = a.Auth.EnsureUser(ctx, auth.AdminName, auth.RoleAdmin)
	}
	if err != nil {
		return ctx, err
	}
	return events.WithCorrelation(events.WithActor(ctx, u.Actor()), commandCorrelation()), nil
}

// commandCorrelation is a new correlation id for one run of a command: the
// events the run writes (and those its subscribers write) carry it, as a
// request's carry its X-Request-Id. "cli-" tells them from a request's.
func commandCorrelation() string { return "cli-" + rand.Text() }
