package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/tsekh/tsekh/api"
	"github.com/tsekh/tsekh/internal/app"
	"github.com/tsekh/tsekh/internal/events"
	"github.com/tsekh/tsekh/internal/platform/config"
)

// StreamSSEResult is the delay from an event's write to its arrival at the
// clients of GET /api/v1/events/stream.
type StreamSSEResult struct {
	LatencyStats         // over every (event, client) pair
	Clients      int     `json:"clients"`
	PaceMs       float64 `json:"pace_ms"`
	// Measured from the start of the writing transaction (its BEGIN,
	// INSERT and COMMIT travel in one round trip, so it is as good as the
	// commit) to the client's reading of the event's data line.
	From string `json:"from"`
	To   string `json:"to"`
}

const sseTo = "its data line read by an SSE client"

// sseToken is the bench administrator's token, in the bench's schema only.
const sseToken = "bench-stream-token-0123456789"

// streamSSE runs the service's HTTP app over the bench schema on a local
// port, connects StreamClients clients to the journal's stream, writes
// events one by one at the latency's pace, each in its own transaction, and
// records when each client reads each event. The stream is woken by the
// commits' NOTIFY, as on a replica.
func (r *runner) streamSSE(ctx context.Context, res *Result) error {
	n, clients := r.opt.StreamEvents, r.opt.StreamClients
	cfg, err := config.Load(func(string) string { return "" })
	if err != nil {
		return err
	}
	cfg.DatabaseURL = r.url
	cfg.StreamMaxClients = clients
	a, err := app.New(r.db, cfg, r.opt.Logger)
	if err != nil {
		return err
	}
	if _, err := a.Auth.EnsureAdmin(ctx, sseToken); err != nil {
		return err
	}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go events.ListenForCommits(runCtx, r.db, r.url, a.Stream.Wake, r.opt.Logger)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := api.HTTPServer(ln.Addr().String(), a.HTTP(), 0)
	srv.RegisterOnShutdown(a.Stream.Close)
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()

	r.p.set(fmt.Sprintf("stream-sse: connecting %d clients", clients), 0, int64(clients))
	var (
		mu   sync.Mutex
		lats []time.Duration
		got  = make([]int, clients)
		wg   sync.WaitGroup
	)
	base := "http://" + ln.Addr().String()
	for i := range clients {
		body, err := openBenchStream(runCtx, base)
		if err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { _ = body.Close() }()
			rd := bufio.NewReader(body)
			for {
				l, err := rd.ReadString('\n')
				if err != nil {
					return
				}
				data, ok := strings.CutPrefix(l, "data: ")
				if !ok {
					continue
				}
				now := time.Now()
				// Read the two numbers, not the whole event: the clients
				// share the machine with the service they measure.
				if !strings.Contains(data, `"type":"`+benchType+`"`) {
					continue
				}
				at, phase := jsonInt(data, `"at":`), jsonInt(data, `"phase":`)
				mu.Lock()
				got[i]++
				if phase == 0 {
					lats = append(lats, now.Sub(time.Unix(0, at)))
				}
				mu.Unlock()
			}
		}()
		r.p.add(1)
	}

	write := func(phase, count int) error {
		tick := time.NewTicker(r.opt.LatencyPace)
		defer tick.Stop()
		for i := range count {
			at := time.Now().UnixNano()
			err := r.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
				return events.Add(ctx, tx, events.New{Type: benchType, AggregateType: benchAggType, AggregateID: int64(i + 1),
					Payload: streamPayload{N: i, At: at, Phase: phase}})
			})
			if err != nil {
				return err
			}
			r.p.add(1)
			select {
			case <-tick.C:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	r.p.set("stream-sse: warming up", 0, warmUp)
	if err := write(-1, warmUp); err != nil {
		return err
	}
	r.p.set(fmt.Sprintf("stream-sse: events written one by one to %d clients", clients), 0, int64(n))
	if err := write(0, n); err != nil {
		return err
	}
	// Every client has every event, or the step fails.
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		done := true
		for _, g := range got {
			done = done && g >= warmUp+n
		}
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("stream-sse: the clients did not receive every event within 30s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	a.Stream.Close()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	out := StreamSSEResult{LatencyStats: latencyStats(lats), Clients: clients, PaceMs: ms(r.opt.LatencyPace), From: latencyFrom, To: sseTo}
	res.StreamSSE, res.StreamSSEP99Ms = out, out.P99Ms
	return nil
}

// openBenchStream connects one client and returns its body once the stream
// has begun (its first comment line is read).
func openBenchStream(ctx context.Context, base string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/events/stream", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+sseToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		_ = resp.Body.Close()
		return nil, fmt.Errorf("the stream answered %s", resp.Status)
	}
	first := make([]byte, len(": connected\n\n"))
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		_ = resp.Body.Close()
		return nil, err
	}
	return resp.Body, nil
}

// jsonInt reads the integer after key in a JSON text, 0 when there is none.
func jsonInt(js, key string) int64 {
	i := strings.Index(js, key)
	if i < 0 {
		return 0
	}
	v, neg := int64(0), false
	for _, c := range js[i+len(key):] {
		switch {
		case c == '-' && v == 0:
			neg = true
		case c >= '0' && c <= '9':
			v = v*10 + int64(c-'0')
		default:
			if neg {
				return -v
			}
			return v
		}
	}
	return v
}
