# shellcheck shell=bash
# Builds every cluster component from its own upstream Go module at the version pinned in versions.env.
# Sourced by scripts/cluster. Results go to $CACHE/bin/<component>-<version>/ and are reused while that
# directory holds a .done marker, so a warm build costs nothing.

# build_go_install NAME VERSION MODULE_PATH PKG... : `go install` of packages of a module without replace
# directives, into the cache.
build_go_install() {
  local name=$1 version=$2 module=$3; shift 3
  local out="$CACHE/bin/$name-$version"
  [ -e "$out/.done" ] && return 0
  log "building $name $version from $module"
  mkdir -p "$out"
  local pkg
  for pkg in "$@"; do
    GOBIN="$out" CGO_ENABLED=0 GOFLAGS=-buildvcs=false go install -trimpath "$module$pkg@$version"
  done
  touch "$out/.done"
}

# module_dir MODULE VERSION : download a module and print its (read-only) directory in the module cache.
module_dir() {
  go mod download -json "$1@$2" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'
}

# writable_module NAME MODULE VERSION : a writable copy of a module's tree, for modules whose go.mod has
# replace directives (go install refuses them). Kept in the cache, keyed by version.
writable_module() {
  local name=$1 module=$2 version=$3
  local src="$CACHE/src/$name-$version"
  if [ ! -e "$src/.copied" ]; then
    local dir; dir=$(module_dir "$module" "$version")
    [ -n "$dir" ] || die "could not download $module@$version from the Go module proxy"
    rm -rf "$src"; mkdir -p "$CACHE/src"
    cp -r "$dir" "$src"; chmod -R u+w "$src"
    touch "$src/.copied"
  fi
  echo "$src"
}

build_kubernetes() {
  local v=$K8S_VERSION out="$CACHE/bin/kubernetes-$K8S_VERSION"
  [ -e "$out/.done" ] && return 0
  log "building Kubernetes $v (kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl)"
  local src; src=$(writable_module kubernetes k8s.io/kubernetes "$v")
  # The k8s.io/kubernetes module zip leaves out staging/ (each staging directory is a module of its own,
  # published as k8s.io/<name> v0.<minor>.<patch>) and vendor/: point the replace directives at those
  # published modules instead, at the matching version.
  local staging="v0${v#v1}"
  (
    cd "$src"
    rm -rf vendor go.work go.work.sum
    local mod
    for mod in $(sed -n 's#^\t\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' go.mod); do
      go mod edit -dropreplace="$mod" -require="$mod@$staging"
    done
    local minor=${v#v1.}; minor=${minor%%.*}
    local ld="-s -w \
      -X k8s.io/component-base/version.gitVersion=$v -X k8s.io/client-go/pkg/version.gitVersion=$v \
      -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
      -X k8s.io/component-base/version.gitTreeState=clean \
      -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z"
    mkdir -p "$out"
    GOWORK=off CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" go build -trimpath -ldflags "$ld" -o "$out/" \
      ./cmd/kube-apiserver ./cmd/kube-controller-manager ./cmd/kube-scheduler ./cmd/kubelet \
      ./cmd/kube-proxy ./cmd/kubectl
    # The pause container (the pod sandbox): Kubernetes' own C program, linked statically.
    gcc -Os -static -DVERSION="$v" -o "$out/pause" build/pause/linux/pause.c
  )
  touch "$out/.done"
}

build_argo() {
  local v=$ARGO_VERSION out="$CACHE/bin/argo-$ARGO_VERSION"
  [ -e "$out/.done" ] && return 0
  log "building Argo Workflows $v (workflow-controller, argoexec, argo)"
  local dir; dir=$(writable_module argo github.com/argoproj/argo-workflows/v3 "$v")
  # Module zips leave out symbolic links, and upstream's signal_linux.go is one (to signal_darwin.go, the
  # Unix implementation): put the link back, or the executor does not compile for Linux.
  local os_specific="$dir/workflow/executor/os-specific"
  [ -e "$os_specific/signal_linux.go" ] || ln -s signal_darwin.go "$os_specific/signal_linux.go"
  local p=github.com/argoproj/argo-workflows/v3
  # The same version stamps as upstream's Makefile: the controller derives its default executor image
  # (quay.io/argoproj/argoexec:<version>) from them.
  local ld="-s -w -X $p.version=$v -X $p.gitTag=$v -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  mkdir -p "$out"
  (
    cd "$dir"
    GOWORK=off CGO_ENABLED=0 GOFLAGS="-buildvcs=false" go build -trimpath -ldflags "$ld" -o "$out/" \
      ./cmd/workflow-controller ./cmd/argoexec ./cmd/argo
  )
  # Upstream's install manifests (kustomize bases) of the same module version.
  rm -rf "$out/manifests"; cp -r "$dir/manifests" "$out/manifests"; chmod -R u+w "$out/manifests"
  cp "$dir/hack/nsswitch.conf" "$out/nsswitch.conf"
  touch "$out/.done"
}

build_all() {
  need go gcc
  build_kubernetes
  build_argo
  build_helm
  build_coredns
  build_minio
  log "components built in $CACHE/bin"
}

build_helm() { build_go_install helm "$HELM_VERSION" helm.sh/helm/v3 /cmd/helm; }
build_coredns() { build_go_install coredns "$COREDNS_VERSION" github.com/coredns/coredns ""; }
build_minio() { build_go_install minio "$MINIO_VERSION" github.com/minio/minio ""; }
