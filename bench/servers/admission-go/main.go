// The Go floor of an admission server for the benchmark (bench/lib/admission.ts): net/http and encoding/json of the
// standard library only (controller-runtime's modules cannot be fetched where the benchmark runs), the same
// certificate, the same AdmissionReview decoded into structs and the same JSON Patch answered. Prints
// "WEBHOOK <port>" once serving. Environment: CERT_DIR.
package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

type status struct {
	Metadata struct{} `json:"metadata"`
	Code     int      `json:"code"`
}

type response struct {
	UID       string  `json:"uid"`
	Allowed   bool    `json:"allowed"`
	Status    *status `json:"status,omitempty"`
	Patch     string  `json:"patch,omitempty"`
	PatchType string  `json:"patchType,omitempty"`
}

type review struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
	Request    *struct {
		UID    string          `json:"uid"`
		Object json.RawMessage `json:"object"`
	} `json:"request,omitempty"`
	Response *response `json:"response,omitempty"`
}

func main() {
	dir := os.Getenv("CERT_DIR")
	patch := base64.StdEncoding.EncodeToString([]byte(`[{"op":"add","path":"/spec/image","value":"memcached:1.6.26-alpine3.19"}]`))
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 7<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var in review
		if err := json.Unmarshal(body, &in); err != nil || in.Request == nil {
			http.Error(w, "bad review", http.StatusBadRequest)
			return
		}
		var obj map[string]interface{}
		_ = json.Unmarshal(in.Request.Object, &obj)
		out := review{Kind: "AdmissionReview", APIVersion: "admission.k8s.io/v1", Response: &response{UID: in.Request.UID, Allowed: true, Status: &status{Code: 200}, Patch: patch, PatchType: "JSONPatch"}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Printf("WEBHOOK %d\n", ln.Addr().(*net.TCPAddr).Port)
	srv := &http.Server{Handler: mux, MaxHeaderBytes: 1 << 20, IdleTimeout: 90 * time.Second, ReadHeaderTimeout: 32 * time.Second}
	panic(srv.ServeTLS(ln, filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")))
}
