package bench

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	statusline "github.com/tsekh/tsekh/internal/platform/progress"
)

// progress reports the step in hand: one line kept up to date on a
// terminal, a plain line now and then anywhere else (package platform/progress).
type progress struct {
	line  *statusline.Line
	mu    sync.Mutex
	step  string
	total int64
	since time.Time
	done  atomic.Int64
	quit  chan struct{}
	wg    sync.WaitGroup
}

func newProgress(w io.Writer) *progress {
	p := &progress{line: statusline.New(w), quit: make(chan struct{}), since: time.Now()}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				return
			case <-t.C:
				p.print()
			}
		}
	}()
	return p
}

// set starts a step of total units (0: no count), of which done are done.
func (p *progress) set(step string, done, total int64) {
	p.mu.Lock()
	p.step, p.total, p.since = step, total, time.Now()
	p.mu.Unlock()
	p.done.Store(done)
	p.print()
}

// add counts n more units of the step done.
func (p *progress) add(n int64) { p.done.Add(n) }

func (p *progress) print() {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := "bench: " + p.step
	if p.total > 0 {
		d := p.done.Load()
		line += fmt.Sprintf(" %d/%d (%d%%)", d, p.total, d*100/p.total)
	}
	line += fmt.Sprintf(" %.1fs", time.Since(p.since).Seconds())
	p.line.Show(p.step, line)
}

// stop ends the progress line.
func (p *progress) stop() {
	close(p.quit)
	p.wg.Wait()
	p.line.Clear()
}
