#!/usr/bin/env bash
# Installs the Debian packages the tests use, only when missing: Prometheus and promtool, curl; Go, client_golang and
# Python's prometheus_client for the differential test against client_golang (test/metrics/client-golang.differential);
# Sprig for rendering the scaffolded Helm chart as Helm does (test/helpers/helm-render);
# tmux for the terminal test of `scrape --watch`; etcd, openssl and xz for the real control plane of the real-api
# suite (a control plane started through CTRLMETRICS_SHARED_KUBE's start.sh runs kube-apiserver on Debian's etcd-server);
# wrk and openssl for the benchmark. Needs root or sudo; on a machine that already has them it does nothing.
set -euo pipefail
need=()
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
command -v go >/dev/null 2>&1 || need+=(golang-go)
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v xz >/dev/null 2>&1 || need+=(xz-utils)
[ -d /usr/share/gocode/src/github.com/prometheus/client_golang ] || need+=(golang-github-prometheus-client-golang-dev)
# Sprig and yaml.v3: the Helm template engine of test/helpers/helm-render (no Helm binary is installed)
[ -d /usr/share/gocode/src/github.com/Masterminds/sprig ] || need+=(golang-github-masterminds-sprig-dev)
[ -d /usr/share/gocode/src/gopkg.in/yaml.v3 ] || need+=(golang-gopkg-yaml.v3-dev)
/usr/bin/python3 -c 'import prometheus_client' >/dev/null 2>&1 || need+=(python3-prometheus-client)
if [ "${CTRLMETRICS_BENCH_DEPS:-0}" = 1 ]; then
  command -v wrk >/dev/null 2>&1 || need+=(wrk)
fi
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "installing Debian packages: ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
command -v kubectl >/dev/null 2>&1 || { echo "kubectl (1.32 with kustomize v5) is required on PATH for the scaffolding tests" >&2; exit 1; }
echo "test dependencies: prometheus $(prometheus --version 2>&1 | head -1 | awk '{print $3}'), $(etcd --version 2>/dev/null | head -1), $(kubectl version --client 2>/dev/null | head -1)"
