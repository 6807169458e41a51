# shellcheck shell=bash
# What runs on the node: Argo Workflows (upstream manifests), a volume for MinIO, the alas chart, and
# Prometheus (Debian's) scraping the chart's services the way its ServiceMonitor describes.

ALAS_NAMESPACE=alas
ARGO_NAMESPACE=argo
PROM_PORT=9090

helm_() { "$CACHE/bin/helm-$HELM_VERSION/helm" --kubeconfig "$STATE/pki/admin.kubeconfig" "$@"; }

# Upstream's install manifests of the pinned module version, applied unmodified. A release's install.yaml
# is these kustomize bases with the image tags set to the release (upstream's `make manifests`); the overlay
# does the same and nothing else.
argo_up() {
  local argo="$CACHE/bin/argo-$ARGO_VERSION" overlay="$STATE/argo"
  mkdir -p "$overlay"
  rm -rf "$overlay/upstream"; cp -r "$argo/manifests" "$overlay/upstream"
  cat >"$overlay/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [upstream/cluster-install]
images:
- {name: quay.io/argoproj/workflow-controller, newTag: $ARGO_VERSION}
- {name: quay.io/argoproj/argocli, newTag: $ARGO_VERSION}
EOF
  kubectl_ create namespace "$ARGO_NAMESPACE" --dry-run=client -o yaml | kubectl_ apply -f - >/dev/null
  log "installing Argo Workflows $ARGO_VERSION"
  kubectl_ apply -k "$overlay" >/dev/null
  # The chart README's local-cluster settings, as written there: server auth mode (still TLS: upstream's
  # readiness probe asks for https, so --secure=false would leave the patched pod unready for good), and the
  # UI on the NodePort kind maps.
  kubectl_ -n "$ARGO_NAMESPACE" patch deployment argo-server --type=json \
    -p='[{"op":"replace","path":"/spec/template/spec/containers/0/args","value":["server","--auth-mode=server"]}]' >/dev/null
  kubectl_ -n "$ARGO_NAMESPACE" patch service argo-server \
    -p '{"spec":{"type":"NodePort","ports":[{"port":2746,"targetPort":2746,"nodePort":32746}]}}' >/dev/null
  # The rollout, not Available: the unpatched pod keeps the deployment Available while the patched one fails.
  local d
  for d in argo-server workflow-controller; do
    kubectl_ -n "$ARGO_NAMESPACE" rollout status "deployment/$d" --timeout=300s >/dev/null \
      || { diagnose "$ARGO_NAMESPACE"; die "Argo's $d did not roll out (its pods are described above)"; }
  done
}

# What a failed install leaves to read: every pod that is not Ready, its recent events and the last lines of
# its containers' logs (CI keeps only this output).
diagnose() {
  local ns=$1 pod
  for pod in $(kubectl_ -n "$ns" get pods -o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' \
               | awk '$2 != "True" {print $1}'); do
    echo "---- $ns/$pod: not Ready" >&2
    kubectl_ -n "$ns" get events --field-selector "involvedObject.name=$pod" 2>&1 | tail -n 8 >&2 || true
    kubectl_ -n "$ns" logs "$pod" --all-containers --tail=30 2>&1 | sed 's/^/    /' >&2 || true
  done
}

# A single node has no volume provisioner: a hostPath PersistentVolume without a storage class, which the
# chart's MinIO claim (no class asked for) binds to.
minio_volume_up() {
  local dir="$STATE/volumes/minio"
  mkdir -p "$dir"; chown 1000:1000 "$dir"
  kubectl_ apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata: {name: alas-minio-data}
spec:
  capacity: {storage: 5Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  hostPath: {path: $dir, type: Directory}
EOF
}

chart_up() {
  log "helm install of charts/alas (values-kind.yaml, --wait)"
  local started=$SECONDS
  helm_ upgrade --install alas "$ROOT/charts/alas" --namespace "$ALAS_NAMESPACE" --create-namespace \
    -f "$ROOT/charts/alas/values-kind.yaml" --set "minio.image.tag=$MINIO_VERSION" \
    --wait --timeout 10m >/dev/null \
    || { diagnose "$ALAS_NAMESPACE"; die "helm install of charts/alas failed (pods that are not Ready are described above)"; }
  log "chart installed, every pod Ready, in $((SECONDS - started)) s"
  echo "$((SECONDS - started))" >"$STATE/run/install-seconds"
}

# Debian's Prometheus is built without Kubernetes service discovery, so the targets come from the API server
# here: the release's Services labelled alas.dev/metrics=true (what the chart's ServiceMonitor selects), on
# their "http" (controller) and "metrics" (operator) ports, scraped through their cluster IPs (kube-proxy
# routes this machine's own traffic to them too).
write_prometheus_targets() {
  kubectl_ -n "$ALAS_NAMESPACE" get services -l alas.dev/metrics=true -o json \
    | python3 "$HERE/cluster.d/prometheus_targets.py" >"$STATE/etc/prometheus-targets.json.tmp"
  mv "$STATE/etc/prometheus-targets.json.tmp" "$STATE/etc/prometheus-targets.json"
}

prometheus_up() {
  need prometheus
  mkdir -p "$STATE/prometheus"
  write_prometheus_targets
  cat >"$STATE/etc/prometheus.yml" <<EOF
global: {scrape_interval: 5s, evaluation_interval: 5s}
rule_files: [$ROOT/observability/rules/alas.rules.yaml]
scrape_configs:
- job_name: alas
  metrics_path: /metrics
  file_sd_configs:
  - files: [$STATE/etc/prometheus-targets.json]
EOF
  start_daemon prometheus prometheus --config.file="$STATE/etc/prometheus.yml" \
    --storage.tsdb.path="$STATE/prometheus" --web.listen-address="127.0.0.1:$PROM_PORT"
  wait_for prometheus 60 curl -fsS "http://127.0.0.1:$PROM_PORT/-/ready"
}

write_env() {
  cat >"$STATE/env" <<EOF
export KUBECONFIG=$STATE/pki/admin.kubeconfig
export PATH=$CACHE/bin/kubernetes-$K8S_VERSION:$CACHE/bin/argo-$ARGO_VERSION:$CACHE/bin/helm-$HELM_VERSION:\$PATH
export ARGO_NAMESPACE=$ALAS_NAMESPACE
export ALAS_CLUSTER_HOME=$STATE
export ALAS_CLUSTER_PROMETHEUS=http://127.0.0.1:$PROM_PORT
EOF
}

require_root() { [ "$(id -u)" = 0 ] || die "needs root (kubelet, containerd, iptables)"; }

cluster_up() {
  require_root
  local t0=$SECONDS
  build_all
  engine_up
  build_images
  load_images
  local t1=$SECONDS
  control_plane_up
  node_up
  coredns_up
  log "Kubernetes $K8S_VERSION up in $((SECONDS - t1)) s"
  argo_up
  minio_volume_up
  chart_up
  prometheus_up
  write_env
  log "cluster up in $((SECONDS - t0)) s (components and images $((t1 - t0)) s); state in $STATE"
  echo "source $STATE/env   # PATH for kubectl, argo, helm"
  echo "export KUBECONFIG=$STATE/pki/admin.kubeconfig"
}

cluster_down() {
  require_root
  stop_daemon prometheus
  node_down
  engine_down
  rm -rf "$STATE"
  log "cluster down; builds and images kept in $CACHE and the engine's store"
}

cluster_status() {
  local d
  for d in containerd dockerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy prometheus; do
    if [ -e "$STATE/run/$d.pid" ] && kill -0 "$(cat "$STATE/run/$d.pid")" 2>/dev/null; then
      echo "$d: running (pid $(cat "$STATE/run/$d.pid"))"
    else
      echo "$d: not running"
    fi
  done
  [ -e "$STATE/pki/admin.kubeconfig" ] && kubectl_ get nodes,pods -A 2>/dev/null || true
}

cluster_e2e() {
  [ -e "$STATE/env" ] || die "no cluster is up (scripts/cluster up)"
  # shellcheck disable=SC1091
  . "$STATE/env"
  cd "$ROOT"
  ALAS_CLUSTER_TESTS=1 python3 -m pytest -m cluster -p no:cacheprovider "$@" tests/cluster
}
