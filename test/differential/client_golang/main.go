// Command client_golang writes one fixed registry, built with client_golang, in Prometheus text 0.0.4 or
// OpenMetrics 1.0.0: the reference side of test/metrics/client-golang.differential.test.ts, which builds the same
// registry with ctrlmetrics' classes and compares the two renderings.
//
// Usage: client_golang text|openmetrics (OpenMetrics 1.0.0 text; prometheus/common 0.39 calls the format FmtOpenMetrics)
//
// Built in GOPATH mode against Debian's golang-github-prometheus-client-golang-dev (no module download).
package main

import (
	"fmt"
	"math"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// Observed by every histogram, in this order (the sums are accumulated in the same order on both sides).
var observations = []float64{0.0005, 0.003, 0.04, 0.1, 0.3, 0.7, 0.8, 1, 2, 7.5, 12, 100}

func build(reg *prometheus.Registry) {
	// A counter with _total, labels declared out of order, and HELP with every character that is escaped.
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "diff_requests_total",
		Help: "Requests, with \"quotes\", a \\ backslash\nand a newline",
	}, []string{"method", "code"})
	requests.WithLabelValues("POST", "500").Add(1.5)
	requests.WithLabelValues("GET", "200").Add(3)
	requests.WithLabelValues("GET", "404").Inc()
	requests.WithLabelValues("get", "200").Inc()

	// Counters without _total: with and without labels.
	restarts := prometheus.NewCounter(prometheus.CounterOpts{Name: "diff_restarts", Help: "Restarts"})
	restarts.Add(2)
	events := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "diff_events", Help: "Events"}, []string{"z", "a"})
	events.WithLabelValues("2", "1").Inc()
	events.WithLabelValues("1", "2").Add(4)

	// Label values that need escaping, and non-ASCII ones.
	escapes := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "diff_escapes", Help: "Escaped label values"}, []string{"value"})
	for i, v := range []string{"back\\slash", "say \"hi\"", "two\nlines", "ünïcødé ✓", "", "a,b=c", "{}"} {
		escapes.WithLabelValues(v).Set(float64(i))
	}

	// Special and awkward values, computed at run time (Go's constant arithmetic is exact: 0.1+0.2 would be 0.3).
	point1, point2, ten := 0.1, 0.2, 10.0
	special := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "diff_special", Help: "Special values"}, []string{"case"})
	special.WithLabelValues("nan").Set(math.NaN())
	special.WithLabelValues("plus_inf").Set(math.Inf(1))
	special.WithLabelValues("minus_inf").Set(math.Inf(-1))
	special.WithLabelValues("minus_zero").Set(math.Copysign(0, -1))
	special.WithLabelValues("e21").Set(math.Pow(ten, 21))
	special.WithLabelValues("sum").Set(point1 + point2)
	special.WithLabelValues("tiny").Set(point1 * 1e-6)
	special.WithLabelValues("million").Set(ten * 1e5)
	special.WithLabelValues("big").Set(123456789)
	special.WithLabelValues("minus_one").Set(-1)
	special.WithLabelValues("one").Set(1)
	special.WithLabelValues("fraction").Set(point1 / 3)

	// Colons in metric names.
	ratio := prometheus.NewGauge(prometheus.GaugeOpts{Name: "diff:ratio:gauge", Help: "A recording-rule style name"})
	ratio.Set(0.25)

	// Histograms: default, linear and exponential buckets; one with labels declared out of order.
	def := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "diff_default_seconds", Help: "Default buckets"}, []string{"op"})
	linear := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "diff_linear", Help: "Linear buckets", Buckets: prometheus.LinearBuckets(0.1, 0.1, 10)})
	exponential := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "diff_exponential", Help: "Exponential buckets", Buckets: prometheus.ExponentialBuckets(0.001, 2.5, 8)})
	unordered := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "diff_unordered_seconds", Help: "Labels declared z, a", Buckets: []float64{0.5, 1}}, []string{"z", "a"})
	for _, v := range observations {
		def.WithLabelValues("get").Observe(v)
		linear.Observe(v)
		exponential.Observe(v)
		unordered.WithLabelValues("last", "first").Observe(v)
	}
	def.WithLabelValues("put").Observe(0.2)

	reg.MustRegister(requests, restarts, events, escapes, special, ratio, def, linear, exponential, unordered)
}

func main() {
	if len(os.Args) != 2 || (os.Args[1] != "text" && os.Args[1] != "openmetrics") {
		fmt.Fprintln(os.Stderr, "usage: client_golang text|openmetrics")
		os.Exit(2)
	}
	reg := prometheus.NewRegistry()
	build(reg)
	families, err := reg.Gather()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	format := expfmt.FmtText
	if os.Args[1] == "openmetrics" {
		format = expfmt.FmtOpenMetrics
	}
	enc := expfmt.NewEncoder(os.Stdout, format)
	for _, mf := range families {
		if err := enc.Encode(mf); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	if closer, ok := enc.(expfmt.Closer); ok {
		if err := closer.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
