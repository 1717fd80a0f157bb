package events

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"
)

// Metrics are the dispatcher's Prometheus metrics. A nil *Metrics records
// nothing.
type Metrics struct {
	deliveries *prometheus.CounterVec
	latency    prometheus.Histogram
	duration   *prometheus.HistogramVec
	// bySub holds each subscriber's series, looked up once: a call or a
	// batch then counts without hashing its labels.
	bySub sync.Map // subscriber name → *subscriberSeries
}

// subscriberSeries are one subscriber's series.
type subscriberSeries struct {
	ok, failed prometheus.Counter
	duration   prometheus.Observer
}

func (m *Metrics) seriesOf(sub string) *subscriberSeries {
	if s, ok := m.bySub.Load(sub); ok {
		return s.(*subscriberSeries)
	}
	s, _ := m.bySub.LoadOrStore(sub, &subscriberSeries{
		ok:       m.deliveries.WithLabelValues(sub, "ok"),
		failed:   m.deliveries.WithLabelValues(sub, "error"),
		duration: m.duration.WithLabelValues(sub),
	})
	return s.(*subscriberSeries)
}

// NewMetrics registers the dispatcher's metrics with reg, including the
// pending count and the oldest pending event's age, read from db at scrape time.
func NewMetrics(reg prometheus.Registerer, db *gorm.DB) *Metrics {
	m := &Metrics{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tsekh_event_deliveries_total",
			Help: "Deliveries of events to subscribers, by subscriber and outcome (ok, error).",
		}, []string{"subscriber", "outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "tsekh_dispatch_latency_seconds",
			Help:    "Time from an event's creation to the end of its batch's dispatch.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tsekh_delivery_duration_seconds",
			Help:    "Time a subscriber took to handle one event.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}, []string{"subscriber"}),
	}
	reg.MustRegister(m.deliveries, m.latency, m.duration,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "tsekh_events_pending",
			Help: "Events not yet handed to every subscriber, plus deliveries retrying, held or failed.",
		}, func() float64 {
			s, err := pendingSummary(context.Background(), db)
			if err != nil {
				return -1
			}
			return float64(s.Pending)
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "tsekh_events_oldest_pending_age_seconds",
			Help: "Age of the oldest event not yet handed to every subscriber (0 when none).",
		}, func() float64 {
			s, err := pendingSummary(context.Background(), db)
			if err != nil || s.Oldest.IsZero() {
				return 0
			}
			return time.Since(s.Oldest).Seconds()
		}),
		&subscriberCollector{journal: NewJournal(db, nil)},
	)
	return m
}

// subscriberCollector reports each subscriber's backlog and open deliveries,
// read from the database at scrape time, so that every replica (a
// dispatching one or not) reports the same figures.
type subscriberCollector struct{ journal *Journal }

var (
	subscriberLagDesc = prometheus.NewDesc("tsekh_subscriber_lag_events",
		"Events of a subscriber's types past its lanes' positions.", []string{"subscriber", "status"}, nil)
	subscriberLagSecondsDesc = prometheus.NewDesc("tsekh_subscriber_lag_seconds",
		"Age of a subscriber's oldest pending event or open delivery (0 when none).", []string{"subscriber", "status"}, nil)
	subscriberOpenDesc = prometheus.NewDesc("tsekh_subscriber_open_deliveries",
		"A subscriber's deliveries that are retrying, held or failed.", []string{"subscriber", "delivery_status"}, nil)
)

func (c *subscriberCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- subscriberLagDesc
	ch <- subscriberLagSecondsDesc
	ch <- subscriberOpenDesc
}

func (c *subscriberCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	subs, err := c.journal.Subscribers(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(subscriberLagDesc, err)
		return
	}
	for _, s := range subs {
		ch <- prometheus.MustNewConstMetric(subscriberLagDesc, prometheus.GaugeValue, float64(s.Pending), s.Name, s.Status)
		ch <- prometheus.MustNewConstMetric(subscriberLagSecondsDesc, prometheus.GaugeValue, s.LagSeconds, s.Name, s.Status)
		for status, n := range map[string]int64{StatusRetrying: s.Retrying, StatusHeld: s.Held, StatusFailed: s.Failed} {
			ch <- prometheus.MustNewConstMetric(subscriberOpenDesc, prometheus.GaugeValue, float64(n), s.Name, status)
		}
	}
}

// observeDuration records how long one call of a subscriber took.
func (m *Metrics) observeDuration(sub string, took time.Duration) {
	if m == nil {
		return
	}
	m.seriesOf(sub).duration.Observe(took.Seconds())
}

// countDeliveries counts the outcomes of attempts: ok succeeded, failed did
// not. For a local subscriber it is called after the commit, so that a call
// rolled back and made again within one attempt counts once.
func (m *Metrics) countDeliveries(sub string, ok, failed int) {
	if m == nil {
		return
	}
	s := m.seriesOf(sub)
	if ok > 0 {
		s.ok.Add(float64(ok))
	}
	if failed > 0 {
		s.failed.Add(float64(failed))
	}
}

func (m *Metrics) observeBatch(batch []Event) {
	if m == nil {
		return
	}
	now := time.Now()
	for i := range batch {
		m.latency.Observe(now.Sub(batch[i].CreatedAt).Seconds())
	}
}
