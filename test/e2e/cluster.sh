#!/usr/bin/env bash
# A real Kubernetes cluster of one or more nodes for the iolens e2e test:
#   cluster.sh up                 start it (prints the kubeconfig path on the last line)
#   cluster.sh down               stop it and undo every change to the host
#   cluster.sh check              fail if anything of the cluster is left on the host
#   cluster.sh kubelet-stop N     stop node N's kubelet (a node that goes away)
#   cluster.sh kubelet-start N    start it again
#
# IOLENS_E2E_NODES nodes (default 2). Node 1 (e2e-node) runs the control
# plane as well; node N (e2e-node-N) has its own kubelet, containerd,
# kube-proxy, state directory and cgroup root. Each node lives in its own
# network namespace (entered with nsenter, so the mount namespace and /sys
# stay the host's), with its node IP on a veth pair whose other end sits on
# a bridge in one more namespace, the nodes' switch: no traffic can leave
# them. socat forwards host 127.0.0.1:$API_PORT to the API server.
#
# Storage, each node on loop devices of its own: node 1 has class
# local-path uncapped and class local-path-b capped at $CAP_IOPS IOPS per
# container; every other node has both classes on one device capped at
# $CAP2_IOPS, so the same class measures differently there (a node with a
# noisy neighbour, or another disk). Block PVs (class local-block) are on
# node 1.
#
# Host changes undone by 'down': processes, mounts (kubelet roots, pod
# netns, overlay rootfs), the loop devices, cgroups named kubepods and the
# other nodes' cgroup roots, the network namespaces, sysctls the kubelet
# sets, /var/lib/cni, /run/containerd, /var/log/containers and
# /var/lib/kubelet/device-plugins when they were not there before.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
S=${IOLENS_E2E_STATE:-/var/tmp/iolens-e2e}
NETNS=${IOLENS_E2E_NETNS:-iolens-e2e}
SWITCH=$NETNS-sw
NODES=${IOLENS_E2E_NODES:-2}
API_PORT=${IOLENS_E2E_API_PORT:-16443}
GW_IP=10.123.0.1
IMAGE=${IOLENS_E2E_IMAGE:-}
AGENT_TAR=${IOLENS_E2E_AGENT_TAR:-}
PV_SIZE_MB=${IOLENS_E2E_PV_MB:-2048}
# Class local-path-b lives on its own loop device of node 1, capped at this
# many IOPS per container (0: no cap), as a capped cloud disk would be.
CAP_IOPS=${IOLENS_E2E_CAP_IOPS:-400}
# The other nodes' storage, capped at this many IOPS per container.
CAP2_IOPS=${IOLENS_E2E_CAP2_IOPS:-$CAP_IOPS}
# Raw loop devices for the static Block-mode PVs of class local-block.
BLOCK_DEVS=${IOLENS_E2E_BLOCK_DEVS:-2}
BLOCK_MB=${IOLENS_E2E_BLOCK_MB:-512}
SYSCTLS="vm.overcommit_memory kernel.panic kernel.panic_on_oops"
# The host as it was before 'up', for 'check' (which removes it when the
# host is back to it). It lives next to the state dir, which 'down' removes.
BASELINE=$S.baseline
HOST_PATHS="/var/lib/cni /run/containerd /var/lib/kubelet /var/lib/kubelet/device-plugins /run/netns /opt/containerd /var/log/containers"

# Per node: name, IP, network namespace, state directory, pod CIDR and
# cgroup root (node 1's pods go to /kubepods, as on any node).
node_name() { if [ "$1" = 1 ]; then echo e2e-node; else echo "e2e-node-$1"; fi; }
node_ip() { echo "10.123.0.$(($1 + 1))"; }
node_ns() { if [ "$1" = 1 ]; then echo "$NETNS"; else echo "$NETNS-$1"; fi; }
node_dir() { if [ "$1" = 1 ]; then echo "$S"; else echo "$S/n$1"; fi; }
node_cidr() { echo "10.244.$(($1 - 1)).0/24"; }
node_cgroot() { if [ "$1" = 1 ]; then echo /; else echo "/iolens-e2e-n$1"; fi; }

log() { echo "cluster: $(date +%T) $*" >&2; }
ns() { nsenter --net=/run/netns/$NETNS "$@"; }
ns_of() { local n=$1; shift; nsenter --net=/run/netns/"$n" "$@"; }

need_pkgs() {
	local missing=()
	local p
	for p in etcd-server containerd runc containernetworking-plugins iptables conntrack socat openssl busybox-static fio e2fsprogs util-linux; do
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

# start NAME CMD...: run CMD in node 1's netns, detached, logging to $S/logs.
start() { start_in "$NETNS" "$@"; }

# start_in NETNS NAME CMD...: the same in another node's netns.
start_in() {
	local n=$1 name=$2; shift 2
	setsid nsenter --net=/run/netns/"$n" "$@" > "$S/logs/$name.log" 2>&1 < /dev/null &
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
	local i ips=""
	for i in $(seq "$NODES"); do ips="$ips,IP:$(node_ip "$i")"; done
	cert apiserver /CN=kube-apiserver "IP:127.0.0.1,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:localhost$ips"
	cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
	cert admin "/O=system:masters/CN=iolens-e2e-admin"
	# A user with no rights of its own: the e2e test binds it to the Roles
	# of deploy/rbac.yaml, to prove they are enough.
	cert user "/CN=iolens-e2e-user"
	cert controller-manager /CN=system:kube-controller-manager
	cert scheduler /CN=system:kube-scheduler
	cert kube-proxy /CN=system:kube-proxy
	for i in $(seq "$NODES"); do
		cert "kubelet-$i" "/O=system:nodes/CN=system:node:$(node_name "$i")"
		cert "kubelet-serving-$i" "/O=system:nodes/CN=system:node:$(node_name "$i")" "IP:$(node_ip "$i"),DNS:$(node_name "$i")"
	done
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

# network sets up the switch and every node's namespace: node IPs on one
# L2 segment, each node's pod CIDR routed to it, nothing routed outside.
network() {
	ip netns add "$SWITCH"
	ns_of "$SWITCH" ip link set lo up
	ns_of "$SWITCH" ip link add br0 type bridge
	# The gateway address leads nowhere: the switch forwards nothing.
	ns_of "$SWITCH" ip addr add $GW_IP/24 dev br0
	ns_of "$SWITCH" ip link set br0 up
	local i j n
	for i in $(seq "$NODES"); do
		n=$(node_ns "$i")
		ip netns add "$n"
		ns_of "$n" ip link set lo up
		# Both ends are made inside namespaces: nothing touches the host's.
		ns_of "$SWITCH" ip link add "port$i" type veth peer name veth-node netns "$n"
		ns_of "$SWITCH" ip link set "port$i" master br0 up
		ns_of "$n" ip addr add "$(node_ip "$i")/24" dev veth-node
		ns_of "$n" ip link set veth-node up
		ns_of "$n" ip route add default via $GW_IP dev veth-node
	done
	for i in $(seq "$NODES"); do
		for j in $(seq "$NODES"); do
			[ "$i" = "$j" ] || ns_of "$(node_ns "$i")" ip route add "$(node_cidr "$j")" via "$(node_ip "$j")"
		done
	done
}

# cgroup_root_make creates a node's cgroup root in every hierarchy: the
# kubelet wants it there before it starts, and cpuset needs its CPUs and
# memory nodes set before a task may join.
cgroup_root_make() {
	local root=$1 d
	[ "$root" = / ] && return 0
	for d in /sys/fs/cgroup/*/; do
		[ -d "$d" ] || continue
		mkdir -p "$d${root#/}"
		if [ -f "$d/cpuset.cpus" ]; then
			cat "$d/cpuset.cpus" > "$d${root#/}/cpuset.cpus"
			cat "$d/cpuset.mems" > "$d${root#/}/cpuset.mems"
		fi
	done
}

# node_storage I: node I's loop devices, mounted under its state dir.
node_storage() {
	local i=$1 nd dev c
	nd=$(node_dir "$i")
	if [ "$i" = 1 ]; then
		for c in a b; do
			mkdir -p "$nd/pv/$c"
			truncate -s ${PV_SIZE_MB}M "$nd/pv-$c.img"
			dev=$(losetup --find --show --direct-io=on "$nd/pv-$c.img")
			echo "$dev" >> "$S/saved/loop"
			mkfs.ext4 -q -F "$dev"
			mount "$dev" "$nd/pv/$c"
		done
		if [ "$CAP_IOPS" -gt 0 ]; then
			# The runc wrapper caps every container on the device of class b.
			echo "$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ') $CAP_IOPS" > "$nd/blkio-cap"
		fi
		: > "$S/block-devices"
		for c in $(seq "$BLOCK_DEVS"); do
			truncate -s ${BLOCK_MB}M "$S/block-$c.img"
			dev=$(losetup --find --show --direct-io=on "$S/block-$c.img")
			echo "$dev" >> "$S/saved/loop"
			echo "$dev" >> "$S/block-devices"
		done
		return 0
	fi
	mkdir -p "$nd/pv"
	truncate -s ${PV_SIZE_MB}M "$nd/pv.img"
	dev=$(losetup --find --show --direct-io=on "$nd/pv.img")
	echo "$dev" >> "$S/saved/loop"
	mkfs.ext4 -q -F "$dev"
	mount "$dev" "$nd/pv"
	mkdir -p "$nd/pv/a" "$nd/pv/b"
	if [ "$CAP2_IOPS" -gt 0 ]; then
		echo "$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ') $CAP2_IOPS" > "$nd/blkio-cap"
	fi
}

# node_runtime I: node I's containerd, with its images.
node_runtime() {
	local i=$1 nd n
	nd=$(node_dir "$i")
	n=$(node_ns "$i")
	mkdir -p "$nd"/{cni/net.d,cni/ipam,containerd/root,containerd/state,run,bin}
	# isGateway gives the bridge an address in the netns, as the Kubernetes
	# network model requires: the node reaches its pods (kubelet HTTP
	# probes, the API server's pod proxy). The routes let pods reach the
	# nodes' network, where the API server listens, the service range,
	# which kube-proxy maps to it, and the other nodes' pods; nothing else.
	cat > "$nd/cni/net.d/10-e2e.conflist" <<CONF
{"cniVersion": "0.4.0", "name": "e2e", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$(node_cidr "$i")"}]],
            "routes": [{"dst": "10.123.0.0/24"}, {"dst": "10.96.0.0/16"}, {"dst": "10.244.0.0/16"}],
            "dataDir": "$nd/cni/ipam"}},
  {"type": "loopback"}]}
CONF
	cat > "$nd/containerd.toml" <<CONF
version = 2
root = "$nd/containerd/root"
state = "$nd/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.internal.v1.opt", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$nd/run/containerd.sock"
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
        BinaryName = "$nd/bin/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$nd/cni/net.d"
CONF
	install_runc_wrapper "$nd"
	start_in "$n" "containerd-$i" containerd --config "$nd/containerd.toml"
	wait_for 30 "containerd of node $i" ctr -a "$nd/run/containerd.sock" version
	ctr -a "$nd/run/containerd.sock" -n k8s.io images import "$S/pause.tar" >/dev/null
	ctr -a "$nd/run/containerd.sock" -n k8s.io images import "$AGENT_TAR" >/dev/null
}

# node_kubelet I: node I's kubelet (its command kept for kubelet-start).
node_kubelet() {
	local i=$1 nd p=$S/pki
	nd=$(node_dir "$i")
	mkdir -p "$nd/kubelet" "$nd/pod-logs"
	cgroup_root_make "$(node_cgroot "$i")"
	# The node status and lease come often, and the controller-manager's
	# grace period is short, so that a stopped kubelet shows in seconds.
	cat > "$nd/kubelet.yaml" <<CONF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $p/ca.crt}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
cgroupRoot: $(node_cgroot "$i")
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$nd/run/containerd.sock
tlsCertFile: $p/kubelet-serving-$i.crt
tlsPrivateKeyFile: $p/kubelet-serving-$i.key
podLogsDir: $nd/pod-logs
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
resolvConf: ""
serializeImagePulls: false
maxPods: 60
nodeStatusUpdateFrequency: 2s
nodeLeaseDurationSeconds: 8
CONF
	kubelet_start "$i"
}

# kubelet_start I: start node I's kubelet (again).
kubelet_start() {
	local i=$1 nd
	nd=$(node_dir "$i")
	start_in "$(node_ns "$i")" "kubelet-$i" "$S/bin/k8s/kubelet" --config="$nd/kubelet.yaml" \
		--kubeconfig="$S/kubelet-$i.kubeconfig" --root-dir="$nd/kubelet" --cert-dir="$nd/kubelet/pki" \
		--node-ip="$(node_ip "$i")" --hostname-override="$(node_name "$i")"
}

# node_proxy I: node I's kube-proxy, whose iptables rules live in the
# node's netns only. It maps the API server's service address, which
# agents use to read their start gate. It sets no global sysctl and no
# conntrack table size.
node_proxy() {
	local i=$1 nd
	nd=$(node_dir "$i")
	cat > "$nd/kube-proxy.yaml" <<CONF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $S/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: 10.244.0.0/16
hostnameOverride: $(node_name "$i")
bindAddress: $(node_ip "$i")
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
iptables: {localhostNodePorts: false}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s, udpTimeout: 0s, udpStreamTimeout: 0s}
CONF
	start_in "$(node_ns "$i")" "kube-proxy-$i" "$S/bin/k8s/kube-proxy" --config="$nd/kube-proxy.yaml"
}

up() {
	[ -n "$IMAGE" ] && [ -f "$AGENT_TAR" ] || { log "set IOLENS_E2E_IMAGE and IOLENS_E2E_AGENT_TAR (make image)"; exit 2; }
	if [ -e "$S/up" ]; then
		log "a cluster is already up in $S; run 'cluster.sh down' first"
		exit 1
	fi
	local t0=$SECONDS
	# No cluster is up, so namespaces of ours are a crashed run's leftovers
	# (on a host whose /run outlives a reboot, plain files): remove them
	# before the baseline, or 'ip netns add' and 'check' trip on them.
	local stale
	for stale in $(our_netns); do
		log "removing the leftover network namespace $stale"
		rm_netns "$stale"
	done
	need_pkgs
	local bin
	bin=$("$here/build.sh" | tail -1)
	rm -rf "$S"
	mkdir -p "$S"/{logs,pids,bin,etcd,lpp,saved}
	ln -s "$bin" "$S/bin/k8s"
	echo "$NODES" > "$S/nodes"
	touch "$S/up"
	# What was there before, so 'down' removes only what the cluster made.
	: > "$S/saved/existed"
	for p in $HOST_PATHS; do
		[ -e "$p" ] && echo "$p" >> "$S/saved/existed"
	done
	for s in $SYSCTLS; do echo "$s=$(sysctl -n "$s")"; done > "$S/saved/sysctl"
	ls /run/netns 2>/dev/null > "$S/saved/netns" || true
	host_state > "$BASELINE"

	log "network: $NODES node namespaces on switch $SWITCH"
	network

	log "certificates"
	pki
	local api i n
	api=https://$(node_ip 1):6443
	for n in admin controller-manager scheduler kube-proxy; do kubeconfig $n "$api"; done
	for i in $(seq "$NODES"); do kubeconfig "kubelet-$i" "$api"; done
	kubeconfig admin https://127.0.0.1:$API_PORT
	mv "$S/admin.kubeconfig" "$S/host.kubeconfig"
	kubeconfig user https://127.0.0.1:$API_PORT
	mv "$S/user.kubeconfig" "$S/host-user.kubeconfig"
	kubeconfig admin "$api"

	log "etcd"
	start etcd etcd --name e2e --data-dir "$S/etcd" --listen-client-urls http://127.0.0.1:2379 \
		--advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
		--initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster e2e=http://127.0.0.1:2380 \
		--unsafe-no-fsync
	wait_for 30 etcd ns bash -c "exec 3<>/dev/tcp/127.0.0.1/2379"

	log "kube-apiserver"
	local p=$S/pki
	start kube-apiserver "$bin/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
		--advertise-address="$(node_ip 1)" --bind-address=0.0.0.0 --secure-port=6443 \
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
		--use-service-account-credentials=true --bind-address=127.0.0.1 \
		--node-monitor-period=2s --node-monitor-grace-period=12s
	start kube-scheduler "$bin/kube-scheduler" --kubeconfig="$S/scheduler.kubeconfig" \
		--authentication-kubeconfig="$S/scheduler.kubeconfig" --authorization-kubeconfig="$S/scheduler.kubeconfig" \
		--leader-elect=false --bind-address=127.0.0.1

	log "images"
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$S/bin/pause" "$here/pause"
	(cd "$here/../.." && go run ./cmd/iolens-image --pause "$S/bin/pause" --ref localhost/pause:e2e --out "$S/pause.tar" >/dev/null)
	CGO_ENABLED=0 go build -o "$S/bin/blkio-cap" "$here/blkiocap"

	for i in $(seq "$NODES"); do
		log "node $i ($(node_name "$i"), $(node_ip "$i")): storage, containerd, kubelet, kube-proxy"
		node_storage "$i"
		node_runtime "$i"
		node_kubelet "$i"
		node_proxy "$i"
	done
	local k=("$bin/kubectl" --kubeconfig "$S/host.kubeconfig")
	log "socat 127.0.0.1:$API_PORT -> $(node_ip 1):6443"
	setsid socat TCP-LISTEN:$API_PORT,bind=127.0.0.1,reuseaddr,fork \
		EXEC:"nsenter --net=/run/netns/$NETNS socat STDIO TCP\:$(node_ip 1)\:6443" > "$S/logs/socat.log" 2>&1 < /dev/null &
	echo $! > "$S/pids/socat"
	for i in $(seq "$NODES"); do
		wait_for 60 "node $(node_name "$i") Ready" "${k[@]}" wait --for=condition=Ready "node/$(node_name "$i")" --timeout=1s
	done

	log "local-path-provisioner"
	local mapA="" mapB="" sep=""
	for i in $(seq "$NODES"); do
		mapA="$mapA$sep{\"node\": \"$(node_name "$i")\", \"paths\": [\"$(node_dir "$i")/pv/a\"]}"
		mapB="$mapB$sep{\"node\": \"$(node_name "$i")\", \"paths\": [\"$(node_dir "$i")/pv/b\"]}"
		sep=", "
	done
	cat > "$S/lpp/config.json" <<CONF
{"nodePathMap": [$mapA],
 "storageClassConfigs": {
   "local-path": {"nodePathMap": [$mapA]},
   "local-path-b": {"nodePathMap": [$mapB]}}}
CONF
	cat > "$S/lpp/helper-pod.yaml" <<CONF
apiVersion: v1
kind: Pod
metadata:
  name: helper-pod
spec:
  containers:
  - name: helper-pod
    image: $IMAGE
    imagePullPolicy: IfNotPresent
CONF
	"${k[@]}" apply -f - >/dev/null <<CONF
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
CONF
	start local-path-provisioner "$bin/local-path-provisioner" start --config "$S/lpp/config.json" \
		--kubeconfig "$S/admin.kubeconfig" --namespace local-path-storage --helper-image "$IMAGE" \
		--helper-pod-file "$S/lpp/helper-pod.yaml" --service-account-name local-path-provisioner \
		--provisioner-name rancher.io/local-path
	wait_for 60 "default service account" "${k[@]}" -n default get serviceaccount default
	log "up in $((SECONDS - t0))s"
	echo "$S/host.kubeconfig"
}

# install_runc_wrapper DIR puts a runc in front of Debian's that can add a
# blkio throttle to containers: cgroup v1 blk-throttle is not hierarchical,
# so a limit must sit on the container's own cgroup, before it starts. The
# cap is read from DIR/blkio-cap ("MAJ:MIN IOPS"), if present.
install_runc_wrapper() {
	local nd=$1
	cat > "$nd/bin/runc" <<CONF
#!/bin/sh
# iolens e2e: optional blkio cap for every container, then the real runc.
cap="$nd/blkio-cap"
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
CONF
	chmod +x "$nd/bin/runc"
}

# nodes_up lists the nodes of the cluster in $S (as 'up' recorded them).
nodes_up() {
	local n=$NODES
	[ -f "$S/nodes" ] && n=$(cat "$S/nodes")
	seq "$n"
}

pids_of_shims() {
	local f i
	for i in $(nodes_up); do
		for f in "$(node_dir "$i")"/containerd/state/io.containerd.runtime.v2.task/*/*/shim.pid; do
			[ -f "$f" ] && cat "$f"
		done
	done
	return 0
}

shims_of_socket() {
	local e p
	for e in /proc/[0-9]*/cmdline; do
		p=${e#/proc/}; p=${p%/cmdline}
		{ tr '\0' ' ' < "$e"; } 2>/dev/null | grep -q "^/usr/bin/containerd-shim-runc-v2 .*-address $S/.*containerd.sock" && echo "$p"
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

# cgroup_dirs lists the cgroups of the cluster's pods: node 1's kubepods,
# and the other nodes' cgroup roots.
cgroup_dirs() {
	local m
	for m in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/unified/kubepods /sys/fs/cgroup/kubepods /sys/fs/cgroup/*/iolens-e2e-n*; do
		[ -d "$m" ] && echo "$m"
	done
	return 0
}

# stop_pid NAME...: stop the processes 'up' started under these names, all
# at once: TERM, then KILL what is still there after 10 s.
stop_pid() {
	local n p pids=() i
	for n in "$@"; do
		[ -f "$S/pids/$n" ] || continue
		p=$(cat "$S/pids/$n")
		kill -TERM "$p" 2>/dev/null && pids+=("$p")
	done
	for i in $(seq 50); do
		local alive=0
		for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive = 0 ] && return 0
		sleep 0.2
	done
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
	sleep 0.2
	return 0
}

# our_netns lists the network namespaces of this cluster's nodes and
# switch that are on the host, whether or not the state dir says so (a
# crashed 'up' or 'down' may have lost it).
our_netns() {
	local f
	for f in /run/netns/*; do
		[ -e "$f" ] || continue
		f=${f##*/}
		case "$f" in "$NETNS" | "$SWITCH" | "$NETNS"-[0-9] | "$NETNS"-[0-9][0-9]) echo "$f" ;; esac
	done
	return 0
}

# rm_netns NAME: delete a named network namespace. 'ip netns del' unmounts
# the namespace file once and unlinks it; a file that mount propagation
# mounted twice is still busy after that, so unmount and unlink again.
rm_netns() {
	local f=/run/netns/$1 i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ -e "$f" ] || return 0
		ip netns del "$1" 2>/dev/null || true
		[ -e "$f" ] || return 0
		umount -l "$f" 2>/dev/null || true
		rm -f "$f" 2>/dev/null || true
		sleep 0.2
	done
	log "could not delete network namespace $1"
	return 0
}

down() {
	if [ ! -d "$S" ]; then
		# No state: only leftovers of a crash can be ours.
		local n
		for n in $(our_netns); do rm_netns "$n"; done
		log "nothing to stop"
		return 0
	fi
	log "stopping"
	local n i
	local agents=(local-path-provisioner socat) daemons=(kube-scheduler kube-controller-manager kube-apiserver etcd)
	for i in $(nodes_up); do agents+=("kubelet-$i" "kube-proxy-$i"); done
	stop_pid "${agents[@]}"
	# Container processes: everything in the pods' cgroups, then shims.
	local d
	for d in $(cgroup_dirs); do
		find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | xargs -r kill -KILL 2>/dev/null || true
	done
	# A killed process keeps its mount and network namespaces until it is
	# gone: wait (up to 5 s) for the pods' cgroups to empty.
	for i in $(seq 25); do
		[ -z "$(for d in $(cgroup_dirs); do find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null; done)" ] && break
		sleep 0.2
	done
	for n in $(pids_of_shims); do kill_pid "$n"; done
	for i in $(nodes_up); do daemons+=("containerd-$i"); done
	stop_pid "${daemons[@]}"
	# Shims whose pid file was already gone: found by this cluster's sockets.
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
	for n in $(our_netns); do rm_netns "$n"; done
	for d in $(cgroup_dirs); do
		find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
	done
	if [ -f "$S/saved/sysctl" ]; then
		while IFS= read -r kv; do sysctl -q -w "$kv" >/dev/null || true; done < "$S/saved/sysctl"
	fi
	for p in /var/lib/kubelet/device-plugins /var/lib/kubelet /var/lib/cni /run/containerd /opt/containerd /var/log/containers; do
		grep -qx "$p" "$S/saved/existed" 2>/dev/null || rm -rf "$p"
	done
	if ! grep -qx /run/netns "$S/saved/existed" 2>/dev/null; then
		# ip netns bind-mounts /run/netns on itself.
		while mountpoint -q /run/netns; do umount /run/netns 2>/dev/null || umount -l /run/netns || break; done
	fi
	# A namespace file mounted twice (mount propagation) survives one
	# unmount: sweep again now that the bind mount is gone.
	for n in $(our_netns); do rm_netns "$n"; done
	grep -qx /run/netns "$S/saved/existed" 2>/dev/null || rmdir /run/netns 2>/dev/null || true
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
	if [ -n "$(our_netns)" ]; then echo "left: netns $(our_netns | tr '\n' ' ')"; bad=1; fi
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
		etcd | kube-apiserver | kube-controller-manager | kube-scheduler | kubelet | kube-proxy | containerd | containerd-shim-runc-v2 | local-path-provisioner | pause)
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

# kubelet_stop I: stop node I's kubelet, as a node that goes away; its
# containers keep running, as they would on a node cut off the network.
kubelet_stop() {
	[ -e "$S/up" ] || { log "no cluster in $S"; exit 1; }
	stop_pid "kubelet-$1"
	log "kubelet of $(node_name "$1") stopped"
}

case "${1:-}" in
up) up ;;
down) down ;;
check) check ;;
kubelet-stop) kubelet_stop "${2:?node number}" ;;
kubelet-start)
	[ -e "$S/up" ] || { log "no cluster in $S"; exit 1; }
	kubelet_start "${2:?node number}"
	log "kubelet of $(node_name "$2") started"
	;;
*) echo "usage: $0 up|down|check|kubelet-stop N|kubelet-start N" >&2; exit 2 ;;
esac
