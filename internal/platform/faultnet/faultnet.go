// Package faultnet puts a fault proxy between a test and a TCP service
// (PostgreSQL, NATS, an HTTP partner), so that the test can cut, silence,
// slow down or flap the link while the code under test uses it. It runs
// toxiproxy in-process: no daemon, no port to agree on. For tests only.
//
//	p := faultnet.New(t, "127.0.0.1:5432") // listens on 127.0.0.1:<free port>
//	url := "postgres://postgres@" + p.Addr() + "/test?sslmode=disable"
//	p.Silence()          // bytes go nowhere; connections stay open
//	p.Restore()          // the link as it was
//	p.Cut()              // every connection reset, new ones refused
//	p.Latency(200 * time.Millisecond)
//	p.Flap(time.Second)  // cut and restored, every second, until Restore
//
// Each method returns once the fault is in place. Restore removes every
// fault; the test's cleanup stops the proxy.
package faultnet

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Proxy is a fault proxy in front of one upstream address.
type Proxy struct {
	t     testing.TB
	proxy *toxiproxy.Proxy
	addr  string

	mu       sync.Mutex
	cut      bool
	toxics   []string      // the toxics in place, by name
	flapStop chan struct{} // closed to end Flap
	flapDone chan struct{}
}

// New starts a proxy on a free port of 127.0.0.1 that forwards to upstream
// (host:port). It is stopped when the test ends.
func New(t testing.TB, upstream string) *Proxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	tp := toxiproxy.NewProxy(srv, "faultnet-"+strings.ReplaceAll(t.Name(), "/", "-"), "127.0.0.1:0", upstream)
	if err := tp.Start(); err != nil {
		t.Fatalf("faultnet: start a proxy to %s: %v", upstream, err)
	}
	p := &Proxy{t: t, proxy: tp, addr: tp.Listen}
	t.Cleanup(func() {
		p.stopFlap()
		tp.Stop()
	})
	return p
}

// Addr is where the proxy listens (127.0.0.1:port): connect there instead
// of to the upstream.
func (p *Proxy) Addr() string { return p.addr }

// Port is the port of Addr.
func (p *Proxy) Port() int {
	_, port, _ := net.SplitHostPort(p.addr)
	n, _ := strconv.Atoi(port)
	return n
}

// Cut resets every connection through the proxy and refuses new ones, as a
// link that went down, or a server that was killed, does.
func (p *Proxy) Cut() {
	p.t.Helper()
	p.clear()
	p.setCut(true)
}

// Silence lets every connection, open or new, stay open while the bytes
// sent either way go nowhere: a link that went silent (a dead route, a
// partitioned network). Only timeouts end what waits on it.
func (p *Proxy) Silence() {
	p.t.Helper()
	p.clear()
	p.addToxic("silence-up", "timeout", "upstream", `{"timeout": 0}`)
	p.addToxic("silence-down", "timeout", "downstream", `{"timeout": 0}`)
}

// Latency delays every chunk of data d each way (a round trip takes 2d
// more), on open connections and new ones.
func (p *Proxy) Latency(d time.Duration) {
	p.t.Helper()
	p.clear()
	attrs := fmt.Sprintf(`{"latency": %d, "jitter": 0}`, d.Milliseconds())
	p.addToxic("latency-up", "latency", "upstream", attrs)
	p.addToxic("latency-down", "latency", "downstream", attrs)
}

// Flap cuts the link and restores it in turn, each state lasting period,
// beginning with a cut, until Restore (or another fault) ends it.
func (p *Proxy) Flap(period time.Duration) {
	p.t.Helper()
	p.clear()
	stop, done := make(chan struct{}), make(chan struct{})
	p.mu.Lock()
	p.flapStop, p.flapDone = stop, done
	p.mu.Unlock()
	p.setCut(true)
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		cut := true
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			cut = !cut
			p.setCut(cut)
		}
	}()
}

// Restore removes every fault: the link works again for new connections
// (those cut stay closed; those silenced carry bytes again, though what
// was dropped meanwhile is lost).
func (p *Proxy) Restore() {
	p.t.Helper()
	p.clear()
}

// clear ends every fault in place: one fault replaces another.
func (p *Proxy) clear() {
	p.t.Helper()
	p.stopFlap()
	p.mu.Lock()
	names := p.toxics
	p.toxics = nil
	p.mu.Unlock()
	for _, n := range names {
		if err := p.proxy.Toxics.RemoveToxic(context.Background(), n); err != nil {
			p.t.Errorf("faultnet: remove %s: %v", n, err)
		}
	}
	p.setCut(false)
}

func (p *Proxy) stopFlap() {
	p.mu.Lock()
	stop, done := p.flapStop, p.flapDone
	p.flapStop, p.flapDone = nil, nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// setCut stops the proxy (closing its listener and every connection) or
// starts it again on the same address.
func (p *Proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut == cut {
		return
	}
	p.cut = cut
	if cut {
		p.proxy.Stop()
		return
	}
	p.proxy.Listen = p.addr
	// The port was just given up: another listener may take it for a
	// moment; try again briefly.
	var err error
	for range 50 {
		if err = p.proxy.Start(); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.t.Errorf("faultnet: listen again on %s: %v", p.addr, err)
}

func (p *Proxy) addToxic(name, typ, stream, attrs string) {
	p.t.Helper()
	body := fmt.Sprintf(`{"name": %q, "type": %q, "stream": %q, "toxicity": 1, "attributes": %s}`, name, typ, stream, attrs)
	if _, err := p.proxy.Toxics.AddToxicJson(strings.NewReader(body)); err != nil {
		p.t.Fatalf("faultnet: add %s: %v", name, err)
	}
	p.mu.Lock()
	p.toxics = append(p.toxics, name)
	p.mu.Unlock()
}
