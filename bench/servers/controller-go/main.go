// The Go floor of the controller benchmark (bench/lib/controller.ts): what controller-runtime's manager does for
// the benchmark's controller, with Go's standard library only (controller-runtime and client-go cannot be fetched
// where the benchmark runs) — list then watch the namespace's ConfigMaps into a cache of typed objects, a
// de-duplicating priority queue (the initial list behind watch events, as controller-runtime v0.24), workers that read a deep copy from the cache and, when the object is labelled
// bench=1 without the annotation bench/seen, send one JSON merge patch and decode the answer. No metrics, events,
// rate limiter or leader election: a floor under controller-runtime, not controller-runtime.
//
// Prints JSON lines as bench/servers/controller-manager.ts does: first-reconcile and all-annotated, with this
// process's CPU (ms; the Go runtime's threads are all "main"), its kernel share and RSS (MB).
// Environment: CONTROLLER_GO_CONFIG = {server, ca, cert, key, token, namespace, expected, workers} (PEM strings).
package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

type config struct {
	Server    string `json:"server"`
	CA        string `json:"ca"`
	Cert      string `json:"cert"`
	Key       string `json:"key"`
	Token     string `json:"token"`
	Namespace string `json:"namespace"`
	Expected  int    `json:"expected"`
	Workers   int    `json:"workers"`
}

type managedFieldsEntry struct {
	Manager     string          `json:"manager,omitempty"`
	Operation   string          `json:"operation,omitempty"`
	APIVersion  string          `json:"apiVersion,omitempty"`
	Time        string          `json:"time,omitempty"`
	FieldsType  string          `json:"fieldsType,omitempty"`
	FieldsV1    json.RawMessage `json:"fieldsV1,omitempty"`
	Subresource string          `json:"subresource,omitempty"`
}

type objectMeta struct {
	Name              string               `json:"name,omitempty"`
	Namespace         string               `json:"namespace,omitempty"`
	UID               string               `json:"uid,omitempty"`
	ResourceVersion   string               `json:"resourceVersion,omitempty"`
	CreationTimestamp string               `json:"creationTimestamp,omitempty"`
	Labels            map[string]string    `json:"labels,omitempty"`
	Annotations       map[string]string    `json:"annotations,omitempty"`
	ManagedFields     []managedFieldsEntry `json:"managedFields,omitempty"`
}

type configMap struct {
	Kind       string            `json:"kind,omitempty"`
	APIVersion string            `json:"apiVersion,omitempty"`
	Metadata   objectMeta        `json:"metadata"`
	Data       map[string]string `json:"data,omitempty"`
}

// deepCopy is what controller-runtime's cache hands a reader: a copy it may change.
func (c *configMap) deepCopy() *configMap {
	out := *c
	out.Metadata.Labels = copyMap(c.Metadata.Labels)
	out.Metadata.Annotations = copyMap(c.Metadata.Annotations)
	out.Data = copyMap(c.Data)
	if c.Metadata.ManagedFields != nil {
		out.Metadata.ManagedFields = make([]managedFieldsEntry, len(c.Metadata.ManagedFields))
		for i, e := range c.Metadata.ManagedFields {
			e.FieldsV1 = append(json.RawMessage(nil), e.FieldsV1...)
			out.Metadata.ManagedFields[i] = e
		}
	}
	return &out
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// queue is controller-runtime v0.24's priority queue in small (what our manager's controllers use): an item is
// queued once; items of the initial list wait behind those of watch events (low priority); an item re-added while
// it is processed waits for done.
type queue struct {
	mu         sync.Mutex
	cond       *sync.Cond
	high, low  []string
	dirty      map[string]int
	processing map[string]bool
}

const lowPriority = -100

func newQueue() *queue {
	q := &queue{dirty: map[string]int{}, processing: map[string]bool{}}
	q.cond = sync.NewCond(&q.mu)
	return q
}

func (q *queue) push(k string, priority int) {
	if priority == lowPriority {
		q.low = append(q.low, k)
	} else {
		q.high = append(q.high, k)
	}
	q.cond.Signal()
}

func (q *queue) add(k string, priority int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if p, ok := q.dirty[k]; ok {
		// a higher priority moves it up; its stale low entry is skipped when reached
		if priority > p {
			q.dirty[k] = priority
			if !q.processing[k] {
				q.push(k, priority)
			}
		}
		return
	}
	q.dirty[k] = priority
	if !q.processing[k] {
		q.push(k, priority)
	}
}

func (q *queue) get() string {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for len(q.high) == 0 && len(q.low) == 0 {
			q.cond.Wait()
		}
		var k string
		fromLow := len(q.high) == 0
		if fromLow {
			k, q.low = q.low[0], q.low[1:]
		} else {
			k, q.high = q.high[0], q.high[1:]
		}
		p, ok := q.dirty[k]
		if !ok || q.processing[k] || (fromLow && p != lowPriority) {
			continue // taken through its other entry, or moved up
		}
		q.processing[k] = true
		delete(q.dirty, k)
		return k
	}
}

func (q *queue) done(k string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, k)
	if p, ok := q.dirty[k]; ok {
		q.push(k, p)
	}
}

type cache struct {
	mu      sync.RWMutex
	objects map[string]*configMap
}

func (c *cache) put(o *configMap) {
	c.mu.Lock()
	c.objects[o.Metadata.Namespace+"/"+o.Metadata.Name] = o
	c.mu.Unlock()
}

func (c *cache) get(k string) *configMap {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if o := c.objects[k]; o != nil {
		return o.deepCopy()
	}
	return nil
}

type client struct {
	http  *http.Client
	base  string
	token string
}

func (c *client) do(method, path, contentType string, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return c.http.Do(req)
}

func cpuMs() (total, system float64) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	ms := func(t syscall.Timeval) float64 { return float64(t.Sec)*1000 + float64(t.Usec)/1000 }
	return ms(ru.Utime) + ms(ru.Stime), ms(ru.Stime)
}

func rssMb() float64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseFloat(f[1], 64)
	return pages * float64(os.Getpagesize()) / (1 << 20)
}

var reconciles int64

func say(event string) {
	total, system := cpuMs()
	line, _ := json.Marshal(map[string]any{"event": event, "at": time.Now().UnixMilli(), "cpuMs": total, "mainCpuMs": total, "systemCpuMs": system, "rssMb": rssMb(), "reconciles": atomic.LoadInt64(&reconciles)})
	fmt.Println(string(line))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func main() {
	var cfg config
	if err := json.Unmarshal([]byte(os.Getenv("CONTROLLER_GO_CONFIG")), &cfg); err != nil {
		fail(fmt.Errorf("CONTROLLER_GO_CONFIG: %w", err))
	}
	tlsConfig := &tls.Config{RootCAs: x509.NewCertPool()}
	tlsConfig.RootCAs.AppendCertsFromPEM([]byte(cfg.CA))
	if cfg.Cert != "" {
		pair, err := tls.X509KeyPair([]byte(cfg.Cert), []byte(cfg.Key))
		if err != nil {
			fail(err)
		}
		tlsConfig.Certificates = []tls.Certificate{pair}
	}
	c := &client{
		http:  &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig, MaxIdleConnsPerHost: 32, ForceAttemptHTTP2: true}},
		base:  strings.TrimSuffix(cfg.Server, "/"),
		token: cfg.Token,
	}
	collection := "/api/v1/namespaces/" + cfg.Namespace + "/configmaps"
	store := &cache{objects: map[string]*configMap{}}
	q := newQueue()

	// the informer: list, then watch from the list's resourceVersion
	res, err := c.do("GET", collection, "", nil)
	if err != nil {
		fail(err)
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []*configMap `json:"items"`
	}
	if err := json.NewDecoder(res.Body).Decode(&list); err != nil {
		fail(err)
	}
	res.Body.Close()
	for _, o := range list.Items {
		store.put(o)
		q.add(o.Metadata.Namespace+"/"+o.Metadata.Name, lowPriority)
	}
	go func() {
		w, err := c.do("GET", collection+"?watch=1&allowWatchBookmarks=true&resourceVersion="+list.Metadata.ResourceVersion, "", nil)
		if err != nil {
			fail(err)
		}
		dec := json.NewDecoder(bufio.NewReader(w.Body))
		for {
			var ev struct {
				Type   string     `json:"type"`
				Object *configMap `json:"object"`
			}
			if err := dec.Decode(&ev); err != nil {
				fail(fmt.Errorf("watch: %w", err))
			}
			if ev.Type == "BOOKMARK" || ev.Object == nil {
				continue
			}
			k := ev.Object.Metadata.Namespace + "/" + ev.Object.Metadata.Name
			if ev.Type == "DELETED" {
				store.mu.Lock()
				delete(store.objects, k)
				store.mu.Unlock()
			} else {
				store.put(ev.Object)
			}
			q.add(k, 0)
		}
	}()

	var annotated int64
	patch := []byte(`{"metadata":{"annotations":{"bench/seen":"1"}}}`)
	reconcile := func(k string) {
		if atomic.AddInt64(&reconciles, 1) == 1 {
			say("first-reconcile")
		}
		o := store.get(k)
		if o == nil || o.Metadata.Labels["bench"] != "1" {
			return
		}
		if _, seen := o.Metadata.Annotations["bench/seen"]; seen {
			return
		}
		res, err := c.do("PATCH", collection+"/"+o.Metadata.Name, "application/merge-patch+json", patch)
		if err != nil {
			fail(err)
		}
		var out configMap
		err = json.NewDecoder(res.Body).Decode(&out)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 {
			fail(fmt.Errorf("patch %s: status %d %v", k, res.StatusCode, err))
		}
		if atomic.AddInt64(&annotated, 1) == int64(cfg.Expected) {
			say("all-annotated")
		}
	}
	for i := 0; i < cfg.Workers; i++ {
		go func() {
			for {
				k := q.get()
				reconcile(k)
				q.done(k)
			}
		}()
	}
	select {}
}
