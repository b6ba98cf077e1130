// Command client_golang writes one fixed registry, built with client_golang, in Prometheus text 0.0.4 or
// OpenMetrics 1.0.0: the reference side of test/metrics/client-golang.differential.test.ts, which builds the same
// registry with ctrlmetrics' classes and compares the two renderings.
//
// Usage:
//
//	client_golang text|openmetrics|protobuf   the registry in text 0.0.4, OpenMetrics 1.0.0 (prometheus/common 0.39
//	                                          calls it FmtOpenMetrics) or length-delimited protobuf
//	client_golang decode < delimited.pb       reads length-delimited MetricFamily messages with expfmt's decoder
//	                                          and writes them in text 0.0.4
//	client_golang created < delimited.pb      the created timestamps in them, one "family{labels} seconds nanos"
//	                                          line per series (client_model 0.3 predates the field, so it is read
//	                                          from the unknown fields with protowire)
//	client_golang native-bounds               client_golang's table of native bucket bounds, one
//	                                          "schema index bits" line per entry (bits as 16 hex digits)
//	client_golang native < spec.json          a native histogram fed the spec's observations: the JSON of what
//	                                          Write() returns (schema, zero bucket, spans, deltas, count, sum)
//	client_golang native-decode < pb          the same JSON for the first histogram in a delimited protobuf stream
//
// Built in GOPATH mode against Debian's golang-github-prometheus-client-golang-dev (no module download).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	_ "unsafe"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/encoding/protowire"

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
	// controller-runtime's webhook latency: ExponentialBuckets(10e-9, 10, 12), whose 4th and 5th bounds print as
	// 9.999999999999999e-06 and 9.999999999999999e-05
	webhook := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "diff_webhook_latency_seconds", Help: "Histogram of the latency of processing admission requests", Buckets: prometheus.ExponentialBuckets(10e-9, 10, 12)}, []string{"webhook"})
	webhook.WithLabelValues("/mutate-cache-example-com-v1alpha1-memcached").Observe(0.00042)
	for _, v := range observations {
		def.WithLabelValues("get").Observe(v)
		linear.Observe(v)
		exponential.Observe(v)
		unordered.WithLabelValues("last", "first").Observe(v)
	}
	def.WithLabelValues("put").Observe(0.2)

	reg.MustRegister(requests, restarts, events, escapes, special, ratio, def, linear, exponential, unordered, webhook)
}

// client_golang's bounds for positive schemas (unexported): the reference ctrlmetrics' computed table is checked against.
//
//go:linkname nativeHistogramBounds github.com/prometheus/client_golang/prometheus.nativeHistogramBounds
var nativeHistogramBounds [][]float64

// nativeSpec is the input of the "native" mode; zero values leave client_golang's defaults.
type nativeSpec struct {
	Factor           float64   `json:"factor"`
	ZeroThreshold    float64   `json:"zeroThreshold"`
	MaxBucketNumber  uint32    `json:"maxBucketNumber"`
	MaxZeroThreshold float64   `json:"maxZeroThreshold"`
	Buckets          []float64 `json:"buckets"`
	Observations     []string  `json:"observations"` // strconv.ParseFloat syntax: JSON has no Inf or NaN
}

type span struct {
	Offset int32  `json:"offset"`
	Length uint32 `json:"length"`
}

type nativeOut struct {
	Schema        int32     `json:"schema"`
	ZeroThreshold float64   `json:"zeroThreshold"`
	ZeroCount     uint64    `json:"zeroCount"`
	Count         uint64    `json:"count"`
	Sum           string    `json:"sum"`
	PositiveSpans []span    `json:"positiveSpans"`
	PositiveDelta []int64   `json:"positiveDeltas"`
	NegativeSpans []span    `json:"negativeSpans"`
	NegativeDelta []int64   `json:"negativeDeltas"`
	Buckets       []float64 `json:"classicBounds"`
	Cumulative    []uint64  `json:"classicCounts"`
}

func spans(in []*dto.BucketSpan) []span {
	out := []span{}
	for _, s := range in {
		out = append(out, span{s.GetOffset(), s.GetLength()})
	}
	return out
}

func native() {
	var spec nativeSpec
	if err := json.NewDecoder(os.Stdin).Decode(&spec); err != nil {
		fail(err)
	}
	h := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:                            "native",
		Help:                            "native",
		Buckets:                         spec.Buckets,
		NativeHistogramBucketFactor:     spec.Factor,
		NativeHistogramZeroThreshold:    spec.ZeroThreshold,
		NativeHistogramMaxBucketNumber:  spec.MaxBucketNumber,
		NativeHistogramMaxZeroThreshold: spec.MaxZeroThreshold,
	})
	for _, s := range spec.Observations {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			fail(err)
		}
		h.Observe(v)
	}
	m := &dto.Metric{}
	if err := h.Write(m); err != nil {
		fail(err)
	}
	printNative(m.GetHistogram())
}

// printNative writes a histogram's native part (and classic buckets) as the JSON the test compares.
func printNative(x *dto.Histogram) {
	out := nativeOut{
		Schema: x.GetSchema(), ZeroThreshold: x.GetZeroThreshold(), ZeroCount: x.GetZeroCount(), Count: x.GetSampleCount(),
		Sum:           fmt.Sprint(x.GetSampleSum()),
		PositiveSpans: spans(x.GetPositiveSpan()), PositiveDelta: append([]int64{}, x.GetPositiveDelta()...),
		NegativeSpans: spans(x.GetNegativeSpan()), NegativeDelta: append([]int64{}, x.GetNegativeDelta()...),
		Buckets: []float64{}, Cumulative: []uint64{},
	}
	for _, b := range x.GetBucket() {
		out.Buckets = append(out.Buckets, b.GetUpperBound())
		out.Cumulative = append(out.Cumulative, b.GetCumulativeCount())
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// readAll decodes length-delimited MetricFamily messages from stdin as Prometheus' own code does.
func readAll() []*dto.MetricFamily {
	dec := expfmt.NewDecoder(bufio.NewReader(os.Stdin), expfmt.FmtProtoDelim)
	var out []*dto.MetricFamily
	for {
		mf := &dto.MetricFamily{}
		if err := dec.Decode(mf); err == io.EOF {
			return out
		} else if err != nil {
			fail(err)
		}
		out = append(out, mf)
	}
}

// createdIn reads a google.protobuf.Timestamp at field number `field` from a message's unknown fields.
func createdIn(unknown []byte, field protowire.Number) (int64, int32, bool) {
	for len(unknown) > 0 {
		num, typ, n := protowire.ConsumeTag(unknown)
		if n < 0 {
			fail(protowire.ParseError(n))
		}
		unknown = unknown[n:]
		if num == field && typ == protowire.BytesType {
			ts, n := protowire.ConsumeBytes(unknown)
			if n < 0 {
				fail(protowire.ParseError(n))
			}
			var sec int64
			var nanos int32
			for len(ts) > 0 {
				f, t, m := protowire.ConsumeTag(ts)
				if m < 0 || t != protowire.VarintType {
					fail(fmt.Errorf("a Timestamp field %d of wire type %d", f, t))
				}
				ts = ts[m:]
				v, m := protowire.ConsumeVarint(ts)
				if m < 0 {
					fail(protowire.ParseError(m))
				}
				ts = ts[m:]
				if f == 1 {
					sec = int64(v)
				} else if f == 2 {
					nanos = int32(v)
				}
			}
			return sec, nanos, true
		}
		n = protowire.ConsumeFieldValue(num, typ, unknown)
		if n < 0 {
			fail(protowire.ParseError(n))
		}
		unknown = unknown[n:]
	}
	return 0, 0, false
}

func printCreated(families []*dto.MetricFamily) {
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			var unknown []byte
			var field protowire.Number
			switch {
			case m.Counter != nil:
				unknown, field = m.Counter.XXX_unrecognized, 3
			case m.Histogram != nil:
				unknown, field = m.Histogram.XXX_unrecognized, 15
			case m.Summary != nil:
				unknown, field = m.Summary.XXX_unrecognized, 4
			default:
				continue
			}
			sec, nanos, ok := createdIn(unknown, field)
			if !ok {
				continue
			}
			labels := make([]string, 0, len(m.GetLabel()))
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			fmt.Printf("%s{%s} %d %d\n", mf.GetName(), strings.Join(labels, ","), sec, nanos)
		}
	}
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "decode" {
		for _, mf := range readAll() {
			if _, err := expfmt.MetricFamilyToText(os.Stdout, mf); err != nil {
				fail(err)
			}
		}
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "decode-openmetrics" {
		for _, mf := range readAll() {
			if _, err := expfmt.MetricFamilyToOpenMetrics(os.Stdout, mf); err != nil {
				fail(err)
			}
		}
		fmt.Print("# EOF\n")
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "native-bounds" {
		for s, bounds := range nativeHistogramBounds {
			for i, b := range bounds {
				fmt.Printf("%d %d %016x\n", s, i, math.Float64bits(b))
			}
		}
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "native" {
		native()
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "native-decode" {
		for _, mf := range readAll() {
			for _, m := range mf.GetMetric() {
				if m.GetHistogram() != nil {
					printNative(m.GetHistogram())
					return
				}
			}
		}
		fail(fmt.Errorf("no histogram in the stream"))
	}
	if len(os.Args) == 2 && os.Args[1] == "created" {
		printCreated(readAll())
		return
	}
	if len(os.Args) != 2 || (os.Args[1] != "text" && os.Args[1] != "openmetrics" && os.Args[1] != "protobuf") {
		fmt.Fprintln(os.Stderr, "usage: client_golang text|openmetrics|protobuf|decode|decode-openmetrics|created|native-bounds|native")
		os.Exit(2)
	}
	reg := prometheus.NewRegistry()
	build(reg)
	families, err := reg.Gather()
	if err != nil {
		fail(err)
	}
	format := expfmt.FmtText
	switch os.Args[1] {
	case "openmetrics":
		format = expfmt.FmtOpenMetrics
	case "protobuf":
		format = expfmt.FmtProtoDelim
	}
	enc := expfmt.NewEncoder(os.Stdout, format)
	for _, mf := range families {
		if err := enc.Encode(mf); err != nil {
			fail(err)
		}
	}
	if closer, ok := enc.(expfmt.Closer); ok {
		if err := closer.Close(); err != nil {
			fail(err)
		}
	}
}
