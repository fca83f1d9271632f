#!/usr/bin/env bash
# A real single-node Kubernetes cluster for the iolens e2e test:
#   cluster.sh up      start it (prints the kubeconfig path on the last line)
#   cluster.sh down    stop it and undo every change to the host
#   cluster.sh check   fail if anything of the cluster is left on the host
#
# Every component runs in the network namespace $NETNS (entered with
# nsenter, so the mount namespace and /sys stay the host's), with the node
# IP on a veth pair whose both ends live in that namespace: no traffic can
# leave it. socat forwards host 127.0.0.1:$API_PORT to the API server.
#
# Host changes undone by 'down': processes, mounts (kubelet root, pod
# netns, overlay rootfs), the loop devices, cgroups named kubepods, the
# netns, sysctls the kubelet sets, /var/lib/cni, /run/containerd and
# /var/lib/kubelet/device-plugins when they were not there before.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
S=${IOLENS_E2E_STATE:-/var/tmp/iolens-e2e}
NETNS=${IOLENS_E2E_NETNS:-iolens-e2e}
API_PORT=${IOLENS_E2E_API_PORT:-16443}
NODE=e2e-node
NODE_IP=10.123.0.2
PEER_IP=10.123.0.1
IMAGE=${IOLENS_E2E_IMAGE:-}
AGENT_TAR=${IOLENS_E2E_AGENT_TAR:-}
PV_SIZE_MB=${IOLENS_E2E_PV_MB:-2048}
# Class local-path-b lives on its own loop device, capped at this many
# IOPS per container (0: no cap), as a capped cloud disk would be.
CAP_IOPS=${IOLENS_E2E_CAP_IOPS:-400}
# Raw loop devices for the static Block-mode PVs of class local-block.
BLOCK_DEVS=${IOLENS_E2E_BLOCK_DEVS:-2}
BLOCK_MB=${IOLENS_E2E_BLOCK_MB:-512}
SYSCTLS="vm.overcommit_memory kernel.panic kernel.panic_on_oops"
# The host as it was before 'up', for 'check' (which removes it when the
# host is back to it). It lives next to the state dir, which 'down' removes.
BASELINE=$S.baseline
HOST_PATHS="/var/lib/cni /run/containerd /var/lib/kubelet /var/lib/kubelet/device-plugins /run/netns /opt/containerd"

log() { echo "cluster: $(date +%T) $*" >&2; }
ns() { nsenter --net=/run/netns/$NETNS "$@"; }

need_pkgs() {
	local missing=()
	local p
	for p in etcd-server containerd runc containernetworking-plugins iptables conntrack socat openssl busybox-static fio e2fsprogs; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		log "apt-get install ${missing[*]}"
		# The packages must not start their own daemons on the host.
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d.iolens
		local had_policy=0
		[ -e /usr/sbin/policy-rc.d ] && had_policy=1
		[ $had_policy = 1 ] || { cp /usr/sbin/policy-rc.d.iolens /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; }
		rm -f /usr/sbin/policy-rc.d.iolens
		apt-get update -q >/dev/null || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
		[ $had_policy = 1 ] || rm -f /usr/sbin/policy-rc.d
	fi
}

# start NAME CMD...: run CMD in the netns, detached, logging to $S/logs.
start() {
	local name=$1; shift
	setsid nsenter --net=/run/netns/$NETNS "$@" > "$S/logs/$name.log" 2>&1 < /dev/null &
	echo $! > "$S/pids/$name"
}

wait_for() { # wait_for SECONDS WHAT CMD...
	local t=$1 what=$2; shift 2
	local end=$((SECONDS + t))
	until "$@" >/dev/null 2>&1; do
		if [ $SECONDS -ge $end ]; then
			log "timed out waiting for $what"
			return 1
		fi
		sleep 0.2
	done
}

pki() {
	local d=$S/pki
	mkdir -p "$d"
	cd "$d"
	# EC keys: generated in milliseconds, unlike RSA.
	key() { openssl ecparam -name prime256v1 -genkey -noout -out "$1.key" 2>/dev/null; }
	key ca
	openssl req -x509 -new -key ca.key -subj /CN=iolens-e2e-ca -days 2 -out ca.crt 2>/dev/null
	cert() { # cert NAME SUBJ [SAN]
		key "$1"
		openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
		local ext=$1.ext
		printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth,serverAuth\n' > "$ext"
		[ -n "${3:-}" ] && echo "subjectAltName=$3" >> "$ext"
		openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile "$ext" -out "$1.crt" 2>/dev/null
	}
	cert apiserver /CN=kube-apiserver "IP:$NODE_IP,IP:127.0.0.1,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:localhost"
	cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
	cert admin "/O=system:masters/CN=iolens-e2e-admin"
	cert controller-manager /CN=system:kube-controller-manager
	cert scheduler /CN=system:kube-scheduler
	cert kubelet "/O=system:nodes/CN=system:node:$NODE"
	cert kubelet-serving "/O=system:nodes/CN=system:node:$NODE" "IP:$NODE_IP,DNS:$NODE"
	key sa
	openssl ec -in sa.key -pubout -out sa.pub 2>/dev/null
	cd - >/dev/null
}

kubeconfig() { # kubeconfig NAME SERVER
	cat > "$S/$1.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    certificate-authority: $S/pki/ca.crt
    server: $2
users:
- name: $1
  user:
    client-certificate: $S/pki/$1.crt
    client-key: $S/pki/$1.key
contexts:
- name: iolens-e2e
  context: {cluster: e2e, user: $1}
current-context: iolens-e2e
EOF
}

up() {
	[ -n "$IMAGE" ] && [ -f "$AGENT_TAR" ] || { log "set IOLENS_E2E_IMAGE and IOLENS_E2E_AGENT_TAR (make image)"; exit 2; }
	if [ -e "$S/up" ]; then
		log "a cluster is already up in $S; run 'cluster.sh down' first"
		exit 1
	fi
	local t0=$SECONDS
	need_pkgs
	local bin
	bin=$("$here/build.sh" | tail -1)
	rm -rf "$S"
	mkdir -p "$S"/{logs,pids,bin,etcd,kubelet,pod-logs,cni/net.d,cni/ipam,containerd/root,containerd/state,run,pv,lpp,saved}
	touch "$S/up"
	# What was there before, so 'down' removes only what the cluster made.
	: > "$S/saved/existed"
	for p in $HOST_PATHS; do
		[ -e "$p" ] && echo "$p" >> "$S/saved/existed"
	done
	for s in $SYSCTLS; do echo "$s=$(sysctl -n "$s")"; done > "$S/saved/sysctl"
	ls /run/netns 2>/dev/null > "$S/saved/netns" || true
	host_state > "$BASELINE"

	log "network namespace $NETNS"
	ip netns add "$NETNS"
	ns ip link set lo up
	ns ip link add veth-node type veth peer name veth-peer
	ns ip addr add $NODE_IP/24 dev veth-node
	ns ip addr add $PEER_IP/24 dev veth-peer
	ns ip link set veth-node up
	ns ip link set veth-peer up
	ns ip route add default via $PEER_IP dev veth-node

	log "certificates"
	pki
	local api=https://$NODE_IP:6443
	for n in admin controller-manager scheduler kubelet; do kubeconfig $n $api; done
	kubeconfig admin https://127.0.0.1:$API_PORT
	mv "$S/admin.kubeconfig" "$S/host.kubeconfig"
	kubeconfig admin $api

	log "etcd"
	start etcd etcd --name e2e --data-dir "$S/etcd" --listen-client-urls http://127.0.0.1:2379 \
		--advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
		--initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster e2e=http://127.0.0.1:2380 \
		--unsafe-no-fsync
	wait_for 30 etcd ns bash -c "exec 3<>/dev/tcp/127.0.0.1/2379"

	log "kube-apiserver"
	local p=$S/pki
	start kube-apiserver "$bin/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
		--advertise-address=$NODE_IP --bind-address=0.0.0.0 --secure-port=6443 \
		--service-cluster-ip-range=10.96.0.0/16 --authorization-mode=Node,RBAC --allow-privileged=true \
		--client-ca-file=$p/ca.crt --tls-cert-file=$p/apiserver.crt --tls-private-key-file=$p/apiserver.key \
		--kubelet-client-certificate=$p/apiserver-kubelet-client.crt --kubelet-client-key=$p/apiserver-kubelet-client.key \
		--kubelet-certificate-authority=$p/ca.crt --kubelet-preferred-address-types=InternalIP \
		--service-account-key-file=$p/sa.pub --service-account-signing-key-file=$p/sa.key \
		--service-account-issuer=https://kubernetes.default.svc --enable-priority-and-fairness=false
	wait_for 60 kube-apiserver ns "$bin/kubectl" --kubeconfig "$S/admin.kubeconfig" get --raw /readyz

	log "controller-manager, scheduler"
	start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig="$S/controller-manager.kubeconfig" \
		--authentication-kubeconfig="$S/controller-manager.kubeconfig" --authorization-kubeconfig="$S/controller-manager.kubeconfig" \
		--service-account-private-key-file=$p/sa.key --root-ca-file=$p/ca.crt --leader-elect=false \
		--use-service-account-credentials=true --bind-address=127.0.0.1
	start kube-scheduler "$bin/kube-scheduler" --kubeconfig="$S/scheduler.kubeconfig" \
		--authentication-kubeconfig="$S/scheduler.kubeconfig" --authorization-kubeconfig="$S/scheduler.kubeconfig" \
		--leader-elect=false --bind-address=127.0.0.1

	log "containerd"
	# isGateway gives the bridge an address in the netns, as the Kubernetes
	# network model requires: the node reaches its pods (kubelet HTTP
	# probes, the API server's pod proxy). The route lets pods reach the
	# node's network, where the API server listens; nothing else.
	cat > "$S/cni/net.d/10-e2e.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "e2e", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.0.0/24"}]], "routes": [{"dst": "10.123.0.0/24"}],
            "dataDir": "$S/cni/ipam"}},
  {"type": "loopback"}]}
EOF
	cat > "$S/containerd.toml" <<EOF
version = 2
root = "$S/containerd/root"
state = "$S/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$S/run/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "localhost/pause:e2e"
  # This VM lacks CAP_SYS_RESOURCE: no negative oom_score_adj.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$S/bin/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$S/cni/net.d"
EOF
	install_runc_wrapper
	start containerd containerd --config "$S/containerd.toml"
	wait_for 30 containerd ctr -a "$S/run/containerd.sock" version

	log "images"
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$S/bin/pause" "$here/pause"
	(cd "$here/../.." && go run ./cmd/iolens-image --pause "$S/bin/pause" --ref localhost/pause:e2e --out "$S/pause.tar" >/dev/null)
	ctr -a "$S/run/containerd.sock" -n k8s.io images import "$S/pause.tar" >/dev/null
	ctr -a "$S/run/containerd.sock" -n k8s.io images import "$AGENT_TAR" >/dev/null

	log "storage: ext4 on loop devices, raw loop devices for Block"
	local c dev
	for c in a b; do
		mkdir -p "$S/pv/$c"
		truncate -s ${PV_SIZE_MB}M "$S/pv-$c.img"
		dev=$(losetup --find --show --direct-io=on "$S/pv-$c.img")
		echo "$dev" >> "$S/saved/loop"
		mkfs.ext4 -q -F "$dev"
		mount "$dev" "$S/pv/$c"
	done
	if [ "$CAP_IOPS" -gt 0 ]; then
		# The runc wrapper caps every container on the device of class b.
		echo "$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ') $CAP_IOPS" > "$S/blkio-cap"
	fi
	: > "$S/block-devices"
	for c in $(seq "$BLOCK_DEVS"); do
		truncate -s ${BLOCK_MB}M "$S/block-$c.img"
		dev=$(losetup --find --show --direct-io=on "$S/block-$c.img")
		echo "$dev" >> "$S/saved/loop"
		echo "$dev" >> "$S/block-devices"
	done

	log "kubelet"
	cat > "$S/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $p/ca.crt}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$S/run/containerd.sock
tlsCertFile: $p/kubelet-serving.crt
tlsPrivateKeyFile: $p/kubelet-serving.key
podLogsDir: $S/pod-logs
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
resolvConf: ""
serializeImagePulls: false
maxPods: 60
EOF
	start kubelet "$bin/kubelet" --config="$S/kubelet.yaml" --kubeconfig="$S/kubelet.kubeconfig" \
		--root-dir="$S/kubelet" --cert-dir="$S/kubelet/pki" --node-ip=$NODE_IP --hostname-override=$NODE
	local k=("$bin/kubectl" --kubeconfig "$S/host.kubeconfig")
	log "socat 127.0.0.1:$API_PORT -> $NODE_IP:6443"
	setsid socat TCP-LISTEN:$API_PORT,bind=127.0.0.1,reuseaddr,fork \
		EXEC:"nsenter --net=/run/netns/$NETNS socat STDIO TCP\:$NODE_IP\:6443" > "$S/logs/socat.log" 2>&1 < /dev/null &
	echo $! > "$S/pids/socat"
	wait_for 60 "node Ready" "${k[@]}" wait --for=condition=Ready node/$NODE --timeout=1s

	log "local-path-provisioner"
	cat > "$S/lpp/config.json" <<EOF
{"nodePathMap": [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": ["$S/pv/a"]}],
 "storageClassConfigs": {
   "local-path": {"nodePathMap": [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": ["$S/pv/a"]}]},
   "local-path-b": {"nodePathMap": [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": ["$S/pv/b"]}]}}}
EOF
	cat > "$S/lpp/helper-pod.yaml" <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: helper-pod
spec:
  containers:
  - name: helper-pod
    image: $IMAGE
    imagePullPolicy: IfNotPresent
EOF
	"${k[@]}" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata:
  name: local-path-storage
  labels: {pod-security.kubernetes.io/enforce: privileged}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: local-path-provisioner, namespace: local-path-storage}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: local-path-config, namespace: local-path-storage}
data:
  setup: |-
    #!/bin/sh
    set -eu
    mkdir -m 0777 -p "\$VOL_DIR"
  teardown: |-
    #!/bin/sh
    set -eu
    rm -rf "\$VOL_DIR"
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: local-path
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-path-b}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
parameters: {fsType: ext4}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-block}
provisioner: kubernetes.io/no-provisioner
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Retain
EOF
	start local-path-provisioner "$bin/local-path-provisioner" start --config "$S/lpp/config.json" \
		--kubeconfig "$S/admin.kubeconfig" --namespace local-path-storage --helper-image "$IMAGE" \
		--helper-pod-file "$S/lpp/helper-pod.yaml" --service-account-name local-path-provisioner \
		--provisioner-name rancher.io/local-path
	wait_for 60 "default service account" "${k[@]}" -n default get serviceaccount default
	log "up in $((SECONDS - t0))s"
	echo "$S/host.kubeconfig"
}

# install_runc_wrapper puts a runc in front of Debian's that can add a blkio
# throttle to containers: cgroup v1 blk-throttle is not hierarchical, so a
# limit must sit on the container's own cgroup, before it starts. The cap
# is read from $S/blkio-cap ("MAJ:MIN IOPS"), if present.
install_runc_wrapper() {
	cat > "$S/bin/runc" <<EOF
#!/bin/sh
# iolens e2e: optional blkio cap for every container, then the real runc.
cap="$S/blkio-cap"
if [ -s "\$cap" ]; then
	bundle=""
	prev=""
	create=0
	for a in "\$@"; do
		[ "\$a" = create ] && create=1
		[ "\$prev" = "--bundle" ] || [ "\$prev" = "-b" ] && bundle=\$a
		prev=\$a
	done
	if [ \$create = 1 ] && [ -n "\$bundle" ] && [ -f "\$bundle/config.json" ]; then
		"$S/bin/blkio-cap" "\$bundle/config.json" "\$(cat "\$cap")" 2>>"$S/logs/runc-wrapper.log" || true
	fi
fi
exec /usr/bin/runc "\$@"
EOF
	chmod +x "$S/bin/runc"
	CGO_ENABLED=0 go build -o "$S/bin/blkio-cap" "$here/blkiocap"
}

pids_of_shims() {
	local f
	for f in "$S"/containerd/state/io.containerd.runtime.v2.task/*/*/shim.pid; do
		[ -f "$f" ] && cat "$f"
	done
	return 0
}

shims_of_socket() {
	local e p
	for e in /proc/[0-9]*/cmdline; do
		p=${e#/proc/}; p=${p%/cmdline}
		tr '\0' ' ' < "$e" 2>/dev/null | grep -q "^/usr/bin/containerd-shim-runc-v2 .*-address $S/run/containerd.sock" && echo "$p"
	done
	return 0
}

kill_pid() { # kill_pid PID: TERM, then KILL after 10 s
	local p=$1 i
	kill -0 "$p" 2>/dev/null || return 0
	kill -TERM "$p" 2>/dev/null || true
	for i in $(seq 50); do
		kill -0 "$p" 2>/dev/null || return 0
		sleep 0.2
	done
	kill -KILL "$p" 2>/dev/null || true
	sleep 0.2
}

cgroup_dirs() {
	local m
	for m in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/unified/kubepods /sys/fs/cgroup/kubepods; do
		[ -d "$m" ] && echo "$m"
	done
	return 0
}

down() {
	[ -d "$S" ] || { log "nothing to stop"; return 0; }
	log "stopping"
	local n
	for n in local-path-provisioner socat kubelet; do
		[ -f "$S/pids/$n" ] && kill_pid "$(cat "$S/pids/$n")"
	done
	# Container processes: everything in the kubepods cgroups, then shims.
	local d
	for d in $(cgroup_dirs); do
		find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | xargs -r kill -KILL 2>/dev/null || true
	done
	for n in $(pids_of_shims); do kill_pid "$n"; done
	for n in containerd kube-scheduler kube-controller-manager kube-apiserver etcd; do
		[ -f "$S/pids/$n" ] && kill_pid "$(cat "$S/pids/$n")"
	done
	# Shims whose pid file was already gone: found by this cluster's socket.
	for n in $(shims_of_socket); do kill_pid "$n"; done
	# Mounts under the state dir and pod netns, deepest first.
	local m
	for i in 1 2 3; do
		for m in $(awk '{print $5}' /proc/self/mountinfo | grep -E "^($S|/run/netns/cni-|/var/run/netns/cni-|/run/containerd)" | sort -r); do
			umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
		done
	done
	if [ -f "$S/saved/loop" ]; then
		while read -r n; do losetup -d "$n" 2>/dev/null || true; done < "$S/saved/loop"
	fi
	for n in /run/netns/cni-*; do
		[ -e "$n" ] || continue
		grep -qx "$(basename "$n")" "$S/saved/netns" 2>/dev/null || rm -f "$n"
	done
	ip netns del "$NETNS" 2>/dev/null || true
	for d in $(cgroup_dirs); do
		find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
	done
	if [ -f "$S/saved/sysctl" ]; then
		while IFS= read -r kv; do sysctl -q -w "$kv" >/dev/null || true; done < "$S/saved/sysctl"
	fi
	for p in /var/lib/kubelet/device-plugins /var/lib/kubelet /var/lib/cni /run/containerd /opt/containerd; do
		grep -qx "$p" "$S/saved/existed" 2>/dev/null || rm -rf "$p"
	done
	if ! grep -qx /run/netns "$S/saved/existed" 2>/dev/null; then
		# ip netns bind-mounts /run/netns on itself.
		while mountpoint -q /run/netns; do umount /run/netns 2>/dev/null || umount -l /run/netns || break; done
		rmdir /run/netns 2>/dev/null || true
	fi
	rm -rf "$S"
	log "stopped"
}

# host_state prints what 'check' compares with the baseline: sysctls the
# kubelet sets, host iptables rules (filter, nat, mangle), the host paths
# the cluster may create, and network namespaces.
host_state() {
	local s p
	for s in $SYSCTLS; do echo "sysctl $s=$(sysctl -n "$s")"; done
	iptables-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9:]*\]//' | sed 's/^/iptables /' || true
	ip6tables-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9:]*\]//' | sed 's/^/ip6tables /' || true
	for p in $HOST_PATHS; do [ -e "$p" ] && echo "path $p"; done
	ip netns list 2>/dev/null | sed 's/^/netns /' || true
	return 0
}

check() {
	local bad=0
	if [ -f "$BASELINE" ]; then
		local diff
		if ! diff=$(diff <(sort "$BASELINE") <(host_state | sort)); then
			echo "left: host changes since 'up' (< before, > now):"
			echo "$diff"
			bad=1
		fi
	else
		echo "note: no baseline from 'up' ($BASELINE): sysctls and iptables not compared" >&2
	fi
	if [ -d "$S" ]; then echo "left: $S"; bad=1; fi
	if ip netns list | grep -qw "$NETNS"; then echo "left: netns $NETNS"; bad=1; fi
	if losetup -a | grep -q "$S/"; then echo "left: loop devices"; losetup -a | grep "$S/"; bad=1; fi
	if [ -d /run/netns ] && [ -z "$(ls -A /run/netns)" ] && mountpoint -q /run/netns; then
		echo "left: empty /run/netns bind mount"; bad=1
	fi
	if grep -qE "$S|/run/netns/cni-|kubelet" /proc/self/mountinfo; then echo "left: mounts"; grep -E "$S|/run/netns/cni-|kubelet" /proc/self/mountinfo; bad=1; fi
	if [ -n "$(cgroup_dirs)" ]; then echo "left: cgroups $(cgroup_dirs)"; bad=1; fi
	local p
	# Names longer than 15 characters are truncated in /proc/PID/comm:
	# match the executable's base name instead.
	local e
	for e in /proc/[0-9]*/exe; do
		p=$(readlink "$e" 2>/dev/null) || continue
		case "${p##*/}" in
		etcd | kube-apiserver | kube-controller-manager | kube-scheduler | kubelet | containerd | containerd-shim-runc-v2 | local-path-provisioner | pause)
			echo "left: process ${e//[!0-9]/} $p"; bad=1 ;;
		esac
	done
	if pgrep -f "TCP-LISTEN:$API_PORT" >/dev/null; then echo "left: socat"; bad=1; fi
	if iptables-save 2>/dev/null | grep -q KUBE; then echo "left: KUBE iptables chains on the host"; bad=1; fi
	if [ $bad = 0 ]; then
		rm -f "$BASELINE"
		echo "check: nothing left on the host" >&2
	fi
	return $bad
}

case "${1:-}" in
up) up ;;
down) down ;;
check) check ;;
*) echo "usage: $0 up|down|check" >&2; exit 2 ;;
esac
