package sales

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"
)

// Metrics are the sales module's Prometheus metrics of its intake. A nil
// *Metrics records nothing.
type Metrics struct {
	rejections  *prometheus.CounterVec
	unauthentic prometheus.Counter
}

// RegisterMetrics registers the intake's metrics with reg: the open
// rejections of the inbox per source (read from the database at scrape
// time, so that every replica reports the same), the rejections kept, and
// the webhook deliveries refused as not authentic (counted only: never
// stored).
func (s *Service) RegisterMetrics(reg prometheus.Registerer) {
	m := &Metrics{
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tsekh_intake_rejections_total",
			Help: "Deliveries of the shop and CRM rows refused for their content and kept in the intake inbox, by source.",
		}, []string{"source"}),
		unauthentic: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "tsekh_shop_webhook_unauthentic_total",
			Help: "Shop webhook deliveries refused for a bad or missing signature or timestamp; never stored.",
		}),
	}
	reg.MustRegister(m.rejections, m.unauthentic, &openRejections{db: s.db})
	s.metrics = m
}

func (m *Metrics) rejected(source string) {
	if m != nil {
		m.rejections.WithLabelValues(source).Inc()
	}
}

// CountUnauthentic counts a webhook delivery refused as not authentic.
func (s *Service) CountUnauthentic() {
	if s.metrics != nil {
		s.metrics.unauthentic.Inc()
	}
}

var openRejectionsDesc = prometheus.NewDesc("tsekh_intake_rejections_open",
	"Rejections of the intake inbox waiting for a retry or a dismissal, by source.", []string{"source"}, nil)

// openRejections reports the open rejections per source at scrape time.
type openRejections struct{ db *gorm.DB }

func (c *openRejections) Describe(ch chan<- *prometheus.Desc) { ch <- openRejectionsDesc }

func (c *openRejections) Collect(ch chan<- prometheus.Metric) {
	counts := map[string]float64{SourceShop: 0, SourceCRM: 0}
	open, err := openRejectionsBySource(context.Background(), c.db)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(openRejectionsDesc, err)
		return
	}
	for source, n := range open {
		counts[source] = float64(n)
	}
	for source, n := range counts {
		ch <- prometheus.MustNewConstMetric(openRejectionsDesc, prometheus.GaugeValue, n, source)
	}
}
