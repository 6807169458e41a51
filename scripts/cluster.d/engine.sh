# shellcheck shell=bash
# The container engine: Debian's containerd (with its CRI plugin, which the kubelet talks to) and Debian's
# docker.io engine on top of the same containerd (it builds the images). Both are started by hand: these
# machines have no init system to start them.

CONTAINERD_SOCK=/run/containerd/containerd.sock
# Debian's docker client: a newer client elsewhere on PATH asks for the buildx plugin instead of using the
# engine's built-in BuildKit.
DOCKER=/usr/bin/docker

# wait_for DESCRIPTION SECONDS COMMAND... : poll until COMMAND succeeds.
wait_for() {
  local what=$1 secs=$2; shift 2
  local i
  for ((i = 0; i < secs * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  die "timed out after ${secs}s waiting for $what"
}

# start_daemon NAME COMMAND... : run a daemon in the background with its log and pid under $STATE.
start_daemon() {
  local name=$1; shift
  mkdir -p "$STATE/log" "$STATE/run"
  if [ -e "$STATE/run/$name.pid" ] && kill -0 "$(cat "$STATE/run/$name.pid")" 2>/dev/null; then
    return 0
  fi
  log "starting $name"
  setsid "$@" >>"$STATE/log/$name.log" 2>&1 < /dev/null &
  echo $! >"$STATE/run/$name.pid"
}

stop_daemon() {
  local name=$1 pidfile="$STATE/run/$1.pid"
  [ -e "$pidfile" ] || return 0
  local pid; pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    local i
    for ((i = 0; i < 40; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
}

write_containerd_config() {
  mkdir -p "$STATE/etc" "$STATE/cni/net.d"
  cat >"$STATE/etc/containerd.toml" <<EOF
version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # Root here may not lower a process's oom_score_adj (pod sandboxes ask for -998: runc fails with
  # "failed to update /proc/self/oom_score_adj: Permission denied"); keep containers at containerd's level.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
EOF
}

engine_up() {
  need containerd runc dockerd "$DOCKER"
  write_containerd_config
  if ! [ -S "$CONTAINERD_SOCK" ] || ! ctr --address "$CONTAINERD_SOCK" version >/dev/null 2>&1; then
    start_daemon containerd containerd --config "$STATE/etc/containerd.toml"
    wait_for containerd 30 ctr --address "$CONTAINERD_SOCK" version
  fi
  if ! "$DOCKER" version >/dev/null 2>&1; then
    start_daemon dockerd dockerd --containerd "$CONTAINERD_SOCK" --iptables=true
    wait_for dockerd 60 "$DOCKER" version
  fi
}

engine_down() {
  stop_daemon dockerd
  stop_daemon containerd
}
