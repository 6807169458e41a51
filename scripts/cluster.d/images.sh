# shellcheck shell=bash
# Container images, built locally (nothing can be pulled here) under the names the upstream manifests and the
# chart use, then imported into containerd's k8s.io namespace, where the kubelet finds them.

PAUSE_IMAGE=registry.k8s.io/pause:3.10
COREDNS_IMAGE=registry.k8s.io/coredns/coredns:$COREDNS_VERSION
MINIO_IMAGE=quay.io/minio/minio:$MINIO_VERSION
ALAS_IMAGE=alas:0.1.0
# The repository the upstream manifests name the Argo images under.
ARGO_IMAGES=quay.io/argoproj
PYTHON_BASE_IMAGE=alas-local/python:3.11-bookworm

# A Debian bookworm root filesystem with python3.11 (debootstrap from Debian's packages), the local stand-in
# for the official python base image the Dockerfile names by default.
build_python_base() {
  "$DOCKER" image inspect "$PYTHON_BASE_IMAGE" >/dev/null 2>&1 && return 0
  need debootstrap
  local root="$CACHE/rootfs/bookworm-python"
  if [ ! -e "$root/.done" ]; then
    log "debootstrap of Debian bookworm with python3 into $root"
    rm -rf "$root"; mkdir -p "$CACHE/rootfs"
    debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,python-is-python3,ca-certificates \
      bookworm "$root" http://deb.debian.org/debian >"$CACHE/rootfs/debootstrap.log" 2>&1 \
      || die "debootstrap failed; see $CACHE/rootfs/debootstrap.log"
    rm -rf "$root/var/cache/apt/archives/"*.deb
    touch "$root/.done"
  fi
  log "importing $PYTHON_BASE_IMAGE"
  tar -C "$root" --exclude=./.done -c . | "$DOCKER" import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["python3"]' - "$PYTHON_BASE_IMAGE" >/dev/null
}

# image_from_binary IMAGE BINARY USER ENTRYPOINT_JSON [EXTRA_FILE:DEST ...] : a distroless-style image (the
# binary, passwd/group, CA certificates, /tmp), like the upstream images built FROM distroless/static.
image_from_binary() {
  local image=$1 binary=$2 user=$3 entry=$4; shift 4
  "$DOCKER" image inspect "$image" >/dev/null 2>&1 && return 0
  local root; root=$(mktemp -d)
  mkdir -p "$root/bin" "$root/etc/ssl/certs" "$root/tmp" "$root/home/nonroot"
  chmod 1777 "$root/tmp"
  cp "$binary" "$root/bin/"
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\nargo:x:8737:8737:argo:/home/argo:/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnonroot:x:65532:\nargo:x:8737:\n' >"$root/etc/group"
  local extra
  for extra in "$@"; do mkdir -p "$root$(dirname "${extra#*:}")"; cp "${extra%%:*}" "$root${extra#*:}"; done
  log "importing $image"
  tar -C "$root" -c . | "$DOCKER" import --change "USER $user" --change "ENTRYPOINT $entry" \
    --change 'ENV PATH=/bin' - "$image" >/dev/null
  rm -rf "$root"
}

# The project's wheels, built on the host: a build container reaches no package index here (the host's is
# reached through a proxy whose certificate authority a fresh base does not trust).
build_wheelhouse() {
  local house="$ROOT/images/wheelhouse"
  local key; key=$(sha256sum "$ROOT/pyproject.toml" | cut -c1-16)
  if [ ! -e "$CACHE/wheels/$key/.done" ]; then
    log "building the wheelhouse for pyproject.toml $key"
    rm -rf "$CACHE/wheels/$key"; mkdir -p "$CACHE/wheels/$key"
    python3 -m pip wheel -q -w "$CACHE/wheels/$key" "$ROOT[cluster]" "setuptools>=68" wheel
    rm -f "$CACHE/wheels/$key"/alas_argo-*.whl
    touch "$CACHE/wheels/$key/.done"
  fi
  find "$house" -name '*.whl' -delete
  cp "$CACHE/wheels/$key"/*.whl "$house/"
  # alas itself, from the tree as it is (never cached): built here, where a C compiler is, it carries LCRP's
  # compiled tabu search, which the image's build stage cannot compile (images/Dockerfile).
  log "building the alas wheel with its compiled tabu search"
  # setuptools' build/ keeps files deleted from the tree since the last build: start from none.
  rm -rf "$ROOT/build"
  python3 -m pip wheel -q --no-deps --no-build-isolation -w "$house" "$ROOT" \
    || die "building the alas wheel failed (a C compiler and Python headers are needed)"
  rm -rf "$ROOT/build"
  python3 -c 'import sys, zipfile; sys.exit(not any("/_tabu." in n and n.endswith(".so")
    for n in zipfile.ZipFile(sys.argv[1]).namelist()))' "$house"/alas_argo-*.whl \
    || die "the alas wheel has no compiled tabu search"
}

build_alas_image() {
  build_python_base
  build_wheelhouse
  log "building $ALAS_IMAGE from images/Dockerfile"
  DOCKER_BUILDKIT=1 "$DOCKER" build -q -f "$ROOT/images/Dockerfile" -t "$ALAS_IMAGE" \
    --build-arg PYTHON_IMAGE="$PYTHON_BASE_IMAGE" --build-arg PIP_INSTALL_ARGS=--no-index \
    --build-arg REQUIRE_COMPILED_SEARCH=1 "$ROOT" >/dev/null
  find "$ROOT/images/wheelhouse" -name '*.whl' -delete
}

build_images() {
  local k8s="$CACHE/bin/kubernetes-$K8S_VERSION" argo="$CACHE/bin/argo-$ARGO_VERSION"
  image_from_binary "$PAUSE_IMAGE" "$k8s/pause" 65535 '["/bin/pause"]'
  image_from_binary "$COREDNS_IMAGE" "$CACHE/bin/coredns-$COREDNS_VERSION/coredns" 65532 '["/bin/coredns"]'
  image_from_binary "$MINIO_IMAGE" "$CACHE/bin/minio-$MINIO_VERSION/minio" 1000 '["/bin/minio"]'
  image_from_binary "$ARGO_IMAGES/workflow-controller:$ARGO_VERSION" "$argo/workflow-controller" 8737 \
    '["workflow-controller"]' "$argo/nsswitch.conf:/etc/nsswitch.conf"
  image_from_binary "$ARGO_IMAGES/argoexec:$ARGO_VERSION" "$argo/argoexec" 8737 '["argoexec"]' \
    "$argo/nsswitch.conf:/etc/nsswitch.conf"
  image_from_binary "$ARGO_IMAGES/argocli:$ARGO_VERSION" "$argo/argo" 8737 '["argo"]' \
    "$argo/nsswitch.conf:/etc/nsswitch.conf"
  build_alas_image
}

# Copy the images build_images made into containerd's k8s.io namespace (docker keeps its own in "moby").
load_images() {
  local image
  for image in "$PAUSE_IMAGE" "$COREDNS_IMAGE" "$MINIO_IMAGE" "$ARGO_IMAGES/workflow-controller:$ARGO_VERSION" \
    "$ARGO_IMAGES/argoexec:$ARGO_VERSION" "$ARGO_IMAGES/argocli:$ARGO_VERSION" "$ALAS_IMAGE"; do
    log "loading $image into the node"
    "$DOCKER" save "$image" | ctr --address "$CONTAINERD_SOCK" -n k8s.io images import - >/dev/null
  done
}
