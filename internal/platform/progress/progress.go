// Package progress shows how a long command is getting on. On a terminal it
// keeps one line up to date in place; anywhere else (a CI log, a file, a
// pipe) it prints a plain line when a stage begins and every few seconds
// while it lasts, so that a log gets a readable trace instead of thousands
// of carriage returns.
package progress

import (
	"fmt"
	"io"
	"sync"
	"time"

	"golang.org/x/term"
)

// Every is the least time between two plain lines of one stage when the
// output is not a terminal.
const Every = 5 * time.Second

// Line is one status line on w. It is safe for concurrent use.
type Line struct {
	w   io.Writer
	tty bool
	now func() time.Time

	mu      sync.Mutex
	drawn   bool      // terminal: a line is on the screen
	stage   string    // elsewhere: the stage of the last line printed
	printed time.Time // elsewhere: when that line was printed
	any     bool      // elsewhere: a line has been printed
}

// New returns a line on w, drawn in place when w is a terminal.
func New(w io.Writer) *Line {
	return &Line{w: w, tty: IsTerminal(w), now: time.Now}
}

// NewTerminal returns a line drawn in place on w, whatever w is: for tests,
// and for callers that know w is a terminal.
func NewTerminal(w io.Writer) *Line {
	return &Line{w: w, tty: true, now: time.Now}
}

// IsTerminal tells whether w is a terminal (a file whose descriptor is a
// tty; /dev/null and pipes are not).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd())) //nolint:gosec // a file descriptor fits an int
}

// Terminal tells whether the line is drawn in place.
func (l *Line) Terminal() bool { return l.tty }

// Show makes text the state of stage. On a terminal it replaces the line on
// the screen (callers limit how often); elsewhere it is printed as a line of
// its own when the stage is new or Every has passed since the last line.
func (l *Line) Show(stage, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tty {
		_, _ = fmt.Fprintf(l.w, "\r%s\033[K", text)
		l.drawn = true
		return
	}
	now := l.now()
	if l.any && stage == l.stage && now.Sub(l.printed) < Every {
		return
	}
	_, _ = fmt.Fprintln(l.w, text)
	l.stage, l.printed, l.any = stage, now, true
}

// Clear wipes the line from a terminal so that other output can take its
// place; elsewhere there is nothing to wipe.
func (l *Line) Clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tty && l.drawn {
		_, _ = fmt.Fprint(l.w, "\r\033[K")
		l.drawn = false
	}
}

// Finish shows text as the final state and ends the line, which stays.
func (l *Line) Finish(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.tty {
		_, _ = fmt.Fprintf(l.w, "\r%s\033[K\n", text)
		l.drawn = false
		return
	}
	_, _ = fmt.Fprintln(l.w, text)
	l.printed, l.any = l.now(), true
}
