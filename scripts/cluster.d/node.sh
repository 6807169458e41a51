# shellcheck shell=bash
# One Kubernetes node, its control plane included, from the upstream binaries started directly on this
# machine: etcd (Debian's), kube-apiserver, kube-controller-manager, kube-scheduler, kubelet (on containerd,
# cgroupfs driver, cgroup v1) and kube-proxy (iptables). Pod networking is the CNI bridge plugin from Debian's
# containernetworking-plugins; cluster DNS is CoreDNS running as a Deployment.

SERVICE_CIDR=10.96.0.0/16
KUBERNETES_SVC_IP=10.96.0.1
DNS_SVC_IP=10.96.0.10
POD_CIDR=10.244.0.0/24
NODE_NAME=alas-control-plane

k8sbin() { echo "$CACHE/bin/kubernetes-$K8S_VERSION/$1"; }
kubectl_() { "$(k8sbin kubectl)" --kubeconfig "$STATE/pki/admin.kubeconfig" "$@"; }

host_ip() {
  ip -4 -o addr show scope global | awk '{print $4}' | cut -d/ -f1 | grep -v '^172\.17\.' | grep -v '^10\.244\.' \
    | head -1
}

# cert NAME CN O [SAN] : a key and a certificate signed by the cluster CA.
cert() {
  local name=$1 cn=$2 org=$3 san=${4:-} dir="$STATE/pki"
  [ -e "$dir/$name.crt" ] && return 0
  openssl genrsa -out "$dir/$name.key" 2048 2>/dev/null
  local subj="/CN=$cn"; [ -n "$org" ] && subj="/O=$org$subj"
  openssl req -new -key "$dir/$name.key" -subj "$subj" -out "$dir/$name.csr" 2>/dev/null
  local ext="$dir/$name.ext"
  printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n' >"$ext"
  [ -n "$san" ] && echo "subjectAltName=$san" >>"$ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 365 -extfile "$ext" -out "$dir/$name.crt" 2>/dev/null
  rm -f "$dir/$name.csr" "$ext"
}

kubeconfig() {
  local name=$1 user=$2 out="$STATE/pki/$1.kubeconfig"
  [ -e "$out" ] && return 0
  cat >"$out" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: alas
  cluster:
    certificate-authority: $STATE/pki/ca.crt
    server: https://127.0.0.1:6443
users:
- name: $user
  user:
    client-certificate: $STATE/pki/$name.crt
    client-key: $STATE/pki/$name.key
contexts:
- name: alas
  context: {cluster: alas, user: $user}
current-context: alas
EOF
  chmod 600 "$out"
}

make_pki() {
  local dir="$STATE/pki" ip; ip=$(host_ip)
  mkdir -p "$dir"; chmod 700 "$dir"
  if [ ! -e "$dir/ca.crt" ]; then
    openssl genrsa -out "$dir/ca.key" 2048 2>/dev/null
    openssl req -x509 -new -key "$dir/ca.key" -subj "/CN=alas-cluster-ca" -days 365 -out "$dir/ca.crt" 2>/dev/null
    openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
    openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
  fi
  cert apiserver kube-apiserver "" \
    "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:$KUBERNETES_SVC_IP,IP:$ip"
  cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
  cert admin kubernetes-admin system:masters
  cert controller-manager system:kube-controller-manager ""
  cert scheduler system:kube-scheduler ""
  cert kubelet "system:node:$NODE_NAME" system:nodes
  cert kube-proxy system:kube-proxy ""
  local c
  for c in admin controller-manager scheduler kubelet kube-proxy; do kubeconfig "$c" "$c"; done
}

write_cni_config() {
  cat >"$STATE/cni/net.d/10-alas.conflist" <<EOF
{
  "cniVersion": "0.4.0",
  "name": "alas",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "routes": [{"dst": "0.0.0.0/0"}],
              "dataDir": "$STATE/cni/ipam"}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
EOF
}

write_kubelet_config() {
  cat >"$STATE/etc/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# cgroup v1 on these machines (Kubernetes 1.31 still runs on it; failCgroupV1 keeps its default, false).
cgroupDriver: cgroupfs
failCgroupV1: false
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
clusterDNS: [$DNS_SVC_IP]
clusterDomain: cluster.local
failSwapOn: false
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $STATE/pki/ca.crt}
authorization: {mode: Webhook}
serializeImagePulls: false
# A small machine: keep eviction from firing on a busy disk, and let the node hold the fan-outs.
evictionHard: {memory.available: "200Mi", nodefs.available: "2%", imagefs.available: "2%"}
imageGCHighThresholdPercent: 99
maxPods: 200
EOF
}

write_kube_proxy_config() {
  cat >"$STATE/etc/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: $STATE/pki/kube-proxy.kubeconfig}
hostnameOverride: $NODE_NAME
clusterCIDR: $POD_CIDR
conntrack: {maxPerCore: 0}
EOF
}

control_plane_up() {
  local ip; ip=$(host_ip)
  [ -n "$ip" ] || die "no global IPv4 address on this machine for the API server to advertise"
  make_pki
  mkdir -p "$STATE/etcd"
  start_daemon etcd etcd --name alas --data-dir "$STATE/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380
  wait_for etcd 30 curl -fsS http://127.0.0.1:2379/health
  local pki="$STATE/pki"
  start_daemon kube-apiserver "$(k8sbin kube-apiserver)" --etcd-servers=http://127.0.0.1:2379 \
    --advertise-address="$ip" --bind-address=0.0.0.0 --secure-port=6443 \
    --service-cluster-ip-range="$SERVICE_CIDR" --service-node-port-range=30000-32767 \
    --client-ca-file="$pki/ca.crt" --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
    --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --kubelet-preferred-address-types=InternalIP,Hostname \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction --allow-privileged=true
  wait_for kube-apiserver 120 kubectl_ get --raw /readyz
  start_daemon kube-controller-manager "$(k8sbin kube-controller-manager)" \
    --kubeconfig="$pki/controller-manager.kubeconfig" --authentication-kubeconfig="$pki/controller-manager.kubeconfig" \
    --authorization-kubeconfig="$pki/controller-manager.kubeconfig" \
    --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
    --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
    --use-service-account-credentials=true --service-cluster-ip-range="$SERVICE_CIDR" --leader-elect=false
  start_daemon kube-scheduler "$(k8sbin kube-scheduler)" --kubeconfig="$pki/scheduler.kubeconfig" \
    --authentication-kubeconfig="$pki/scheduler.kubeconfig" --authorization-kubeconfig="$pki/scheduler.kubeconfig" \
    --leader-elect=false
}

node_up() {
  write_cni_config
  write_kubelet_config
  write_kube_proxy_config
  # Docker's engine sets the FORWARD policy to DROP; pod traffic crosses FORWARD (bridge-nf-call-iptables), so
  # the pod network is accepted there, at the end: after kube-proxy's jumps, which it puts first. A Service with
  # no endpoints (MinIO restarting) must meet kube-proxy's REJECT, as on any cluster. With CNI's firewall plugin
  # (gone: it accepted each pod's traffic in a chain placed above kube-proxy's) or these rules first, a pod's
  # connection to such a Service left by the default route; on these machines a transparent proxy answered it
  # with an empty 404 and the controller's store took MinIO's restart for a misrouted endpoint (500s).
  # Left by this script's earlier clusters: the firewall plugin's jump, above kube-proxy's.
  while iptables -D FORWARD -m comment --comment "CNI firewall plugin rules" -j CNI-FORWARD 2>/dev/null; do :; done
  local dir
  for dir in -s -d; do
    while iptables -D FORWARD "$dir" "$POD_CIDR" -j ACCEPT 2>/dev/null; do :; done
    iptables -A FORWARD "$dir" "$POD_CIDR" -j ACCEPT
  done
  mkdir -p "$STATE/kubelet"
  start_daemon kubelet "$(k8sbin kubelet)" --config="$STATE/etc/kubelet.yaml" \
    --kubeconfig="$STATE/pki/kubelet.kubeconfig" --hostname-override="$NODE_NAME" --root-dir="$STATE/kubelet" \
    --node-ip="$(host_ip)"
  start_daemon kube-proxy "$(k8sbin kube-proxy)" --config="$STATE/etc/kube-proxy.yaml"
  wait_for "node $NODE_NAME Ready" 180 kubectl_ wait --for=condition=Ready "node/$NODE_NAME" --timeout=2s
}

coredns_up() {
  kubectl_ apply -f - >/dev/null <<EOF
apiVersion: v1
kind: ServiceAccount
metadata: {name: coredns, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{kind: ServiceAccount, name: coredns, namespace: kube-system}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: coredns, namespace: kube-system}
data:
  Corefile: |
    .:1053 {
        errors
        health
        ready
        kubernetes cluster.local in-addr.arpa ip6.arpa {
           pods insecure
           fallthrough in-addr.arpa ip6.arpa
        }
        prometheus :9153
        cache 30
        loop
        reload
    }
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: coredns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  replicas: 1
  selector: {matchLabels: {k8s-app: kube-dns}}
  template:
    metadata: {labels: {k8s-app: kube-dns}}
    spec:
      serviceAccountName: coredns
      dnsPolicy: Default
      containers:
      - name: coredns
        image: $COREDNS_IMAGE
        imagePullPolicy: Never
        args: [-conf, /etc/coredns/Corefile]
        ports:
        # An unprivileged port: the image's binary carries no file capability to bind :53 as non-root;
        # the Service maps 53 to it.
        - {containerPort: 1053, name: dns, protocol: UDP}
        - {containerPort: 1053, name: dns-tcp, protocol: TCP}
        securityContext:
          allowPrivilegeEscalation: false
          capabilities: {drop: [ALL]}
          readOnlyRootFilesystem: true
          runAsNonRoot: true
        readinessProbe: {httpGet: {path: /ready, port: 8181}}
        livenessProbe: {httpGet: {path: /health, port: 8080}}
        volumeMounts: [{name: config, mountPath: /etc/coredns, readOnly: true}]
      volumes: [{name: config, configMap: {name: coredns}}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $DNS_SVC_IP
  selector: {k8s-app: kube-dns}
  ports:
  - {name: dns, port: 53, targetPort: 1053, protocol: UDP}
  - {name: dns-tcp, port: 53, targetPort: 1053, protocol: TCP}
  - {name: metrics, port: 9153, protocol: TCP}
EOF
  kubectl_ -n kube-system rollout status deployment/coredns --timeout=180s >/dev/null
}

node_down() {
  stop_daemon kube-proxy
  stop_daemon kubelet
  # Pods outlive the kubelet (their shims belong to containerd): remove them through containerd.
  if ctr --address "$CONTAINERD_SOCK" version >/dev/null 2>&1; then
    local c
    for c in $(ctr --address "$CONTAINERD_SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr --address "$CONTAINERD_SOCK" -n k8s.io tasks kill -s SIGKILL "$c" >/dev/null 2>&1 || true
    done
    sleep 1
    for c in $(ctr --address "$CONTAINERD_SOCK" -n k8s.io containers ls -q 2>/dev/null); do
      ctr --address "$CONTAINERD_SOCK" -n k8s.io tasks delete -f "$c" >/dev/null 2>&1 || true
      ctr --address "$CONTAINERD_SOCK" -n k8s.io containers delete "$c" >/dev/null 2>&1 || true
    done
  fi
  stop_daemon kube-scheduler
  stop_daemon kube-controller-manager
  stop_daemon kube-apiserver
  stop_daemon etcd
  # Volumes the kubelet mounted (secrets, emptyDirs) and the pods' network namespaces.
  grep " $STATE/kubelet" /proc/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  grep " /run/netns/cni-" /proc/mounts | awk '{print $2}' | xargs -r -n1 umount -l 2>/dev/null || true
  rm -f /run/netns/cni-* 2>/dev/null || true
  ip link delete cni0 2>/dev/null || true
  # kube-proxy's and the CNI plugins' iptables rules.
  if [ -x "$(k8sbin kube-proxy)" ]; then "$(k8sbin kube-proxy)" --cleanup >/dev/null 2>&1 || true; fi
}
