#!/usr/bin/env bash
# A real SLURM cluster of several nodes on one machine, from Debian's
# packages, everything under one scratch directory (no systemd, nothing in
# /etc, /run or /var), for the campaign tests (cmd/ceres-export/e2e:
# TestE2EBatchSlurm, TestE2ESlurmNodes*).
#
#   tests/slurm/cluster.sh install                 apt-get the packages if missing
#   tests/slurm/cluster.sh start  DIR              munged, slurmctld, one slurmd per node; wait idle
#   tests/slurm/cluster.sh stop   DIR              scontrol shutdown, stop munged
#   tests/slurm/cluster.sh kill-node    DIR NODE   SIGKILL NODE's slurmd (a lost node)
#   tests/slurm/cluster.sh restart-node DIR NODE   start NODE's slurmd again; wait idle
#   tests/slurm/cluster.sh hostname     DIR NODE   print the hostname NODE's jobs see
#
# start prints the SLURM_CONF every client command (sbatch, squeue,
# scontrol) needs; jobs inherit it. CERES_SLURM_NODES (default 3) is the
# number of nodes, n1..nN: each is its own slurmd daemon on this machine,
# each on its own port and, in a UTS namespace of its own (unshare -u, so
# root), with a hostname of its own, HOST-NODE, that its jobs see (SLURM
# still reaches every node at this machine's address). CERES_SLURM_PORT
# (default 6817) moves slurmctld's port when another cluster runs; the
# nodes take the next ones.
#
# The nodes' daemons are told apart by name (slurmd -N NODE), and their
# spool directory, pid file and log file carry the name (%n in slurm.conf):
# DIR/spool/NODE, DIR/slurmd-NODE.pid, DIR/log/slurmd-NODE.log. A node
# whose slurmd stops answering is set DOWN within about half a minute
# (SlurmdTimeout, MessageTimeout short), and its batch jobs submitted with
# --requeue go back to the queue (JobRequeue); once its slurmd answers
# again it returns to service by itself (ReturnToService=2). A killed
# slurmd leaves its jobs' processes running (they belong to slurmstepd),
# as a node cut off from the network would.
set -euo pipefail

PKGS="slurmctld slurmd slurm-client munge"

have_packages() {
	command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
		command -v sbatch >/dev/null && command -v munged >/dev/null && command -v mungekey >/dev/null
}

install() {
	if have_packages; then
		return 0
	fi
	echo "installing $PKGS"
	local sudo=""
	[ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $PKGS
}

# nodes DIR: the cluster's node names, one a line (from start's list).
nodes() {
	cat "$1/nodes"
}

# wait_idle DIR SECONDS NODE...: wait until every NODE is idle; false after
# SECONDS.
wait_idle() {
	local dir=$1 secs=$2 i n state ok
	shift 2
	for i in $(seq 1 $((secs * 5))); do
		ok=1
		for n in "$@"; do
			state=$(SLURM_CONF=$dir/slurm.conf sinfo -h -n "$n" -o %t 2>/dev/null | head -n 1)
			[ "$state" = idle ] || { ok=0; break; }
		done
		[ $ok = 1 ] && return 0
		sleep 0.2
	done
	return 1
}

# node_hostname DIR NODE: the hostname NODE's slurmd and its jobs see.
node_hostname() {
	echo "$(cat "$1/host")-$2"
}

start_slurmd() {
	local dir=$1 node=$2
	mkdir -p "$dir/spool/$node"
	# The daemons fork; their standard streams go to a file so that nothing
	# holds the caller's pipes open. Each slurmd runs in a UTS namespace of
	# its own (unshare -u) under a hostname of its own, which its jobs
	# inherit: "is this pid alive on this host" then cannot see across
	# nodes, as on a real cluster.
	unshare -u sh -c 'hostname "$1" && shift && exec "$@"' sh "$(node_hostname "$dir" "$node")" \
		slurmd -N "$node" -f "$dir/slurm.conf" </dev/null >>"$dir/log/daemons.out" 2>&1
}

start() {
	local dir=$1
	have_packages || { echo "cluster.sh: SLURM packages missing (run: $0 install)" >&2; exit 3; }
	local count=${CERES_SLURM_NODES:-3}
	case $count in '' | *[!0-9]* | 0) echo "cluster.sh: CERES_SLURM_NODES=$count: want a whole number of nodes, 1 or more" >&2; exit 2 ;; esac
	mkdir -p "$dir"/{munge,munge-key,state,spool,log}
	dir=$(cd "$dir" && pwd)
	# The key's directory is private; the socket's must be searchable by all.
	chmod 700 "$dir/munge-key"
	chmod 755 "$dir/munge"
	local sock=$dir/munge/munge.socket
	[ -f "$dir/munge-key/munge.key" ] || mungekey -c -k "$dir/munge-key/munge.key" >/dev/null
	munged --key-file="$dir/munge-key/munge.key" --socket="$sock" --pid-file="$dir/munge/munged.pid" \
		--log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" </dev/null >>"$dir/log/daemons.out" 2>&1
	munge -S "$sock" -n | unmunge -S "$sock" >/dev/null

	local host port cpus
	host=$(hostname -s)
	echo "$host" >"$dir/host"
	port=${CERES_SLURM_PORT:-6817}
	# The machine's CPUs shared out between the nodes, at least one each:
	# SLURM then runs one array task per CPU of a node at a time.
	cpus=$(( $(nproc) / count ))
	[ "$cpus" -ge 1 ] || cpus=1
	seq -f 'n%g' 1 "$count" >"$dir/nodes"
	cat >"$dir/slurm.conf" <<CONF
ClusterName=ceres-ci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MailProg=/bin/true
ReturnToService=2
MpiDefault=none
# A lost node is found quickly (seconds, not SLURM's default of minutes),
# and its --requeue batch jobs are queued again.
SlurmdTimeout=5
MessageTimeout=3
JobRequeue=1
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
NodeName=n[1-$count] NodeHostname=$host NodeAddr=127.0.0.1 Port=[$((port + 1))-$((port + count))] CPUs=$cpus RealMemory=2000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
	export SLURM_CONF=$dir/slurm.conf
	slurmctld -f "$SLURM_CONF" </dev/null >>"$dir/log/daemons.out" 2>&1
	local n
	for n in $(nodes "$dir"); do
		start_slurmd "$dir" "$n"
	done
	# shellcheck disable=SC2046
	if wait_idle "$dir" 30 $(nodes "$dir"); then
		echo "SLURM_CONF=$SLURM_CONF"
		return 0
	fi
	echo "cluster.sh: the nodes did not all become idle in 30 s:" >&2
	sinfo -N >&2 || true
	tail -n 20 "$dir/log/slurmctld.log" "$dir"/log/slurmd-*.log >&2 || true
	stop "$dir"
	exit 1
}

# node_of DIR NODE: refuse a node the cluster does not have.
node_of() {
	grep -qx -- "$2" "$1/nodes" || { echo "cluster.sh: no node $2 in $1 (have: $(nodes "$1" | tr '\n' ' '))" >&2; exit 2; }
}

kill_node() {
	local dir node=$2 pid
	dir=$(cd "$1" && pwd)
	node_of "$dir" "$node"
	pid=$(cat "$dir/slurmd-$node.pid" 2>/dev/null) || { echo "cluster.sh: $node has no slurmd running (no pid file)" >&2; exit 1; }
	kill -KILL "$pid"
	# SIGKILL leaves the pid file behind: remove it, so that restart-node
	# and stop do not mistake another process for this one.
	local i
	for i in $(seq 1 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	rm -f "$dir/slurmd-$node.pid"
}

restart_node() {
	local dir node=$2 pid
	dir=$(cd "$1" && pwd)
	node_of "$dir" "$node"
	if pid=$(cat "$dir/slurmd-$node.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null; then
		echo "cluster.sh: $node's slurmd runs already (pid $pid)" >&2
	else
		start_slurmd "$dir" "$node"
	fi
	# A node SLURM set DOWN for not responding returns by itself once its
	# slurmd registers (ReturnToService=2).
	if ! wait_idle "$dir" 60 "$node"; then
		echo "cluster.sh: $node did not become idle in 60 s:" >&2
		SLURM_CONF=$dir/slurm.conf sinfo -N -l >&2 || true
		tail -n 20 "$dir/log/slurmd-$node.log" >&2 || true
		exit 1
	fi
}

# wait_gone PIDFILE: wait up to 15 s for the process in PIDFILE to end.
wait_gone() {
	local pid i
	# The daemon removes its pid file as it exits, so the file may be gone
	# between the test and the read: gone is what we wait for.
	pid=$(cat "$1" 2>/dev/null) || return 0
	for i in $(seq 1 75); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.2
	done
	kill -TERM "$pid" 2>/dev/null || true
}

stop() {
	local dir=$1 f
	[ -d "$dir" ] || return 0
	dir=$(cd "$dir" && pwd)
	if [ -f "$dir/slurm.conf" ]; then
		SLURM_CONF=$dir/slurm.conf scontrol shutdown >/dev/null 2>&1 || true
	fi
	wait_gone "$dir/slurmctld.pid"
	for f in "$dir"/slurmd-*.pid; do
		[ -e "$f" ] && wait_gone "$f"
	done
	if [ -f "$dir/munge/munged.pid" ]; then
		kill -TERM "$(cat "$dir/munge/munged.pid")" 2>/dev/null || true
		wait_gone "$dir/munge/munged.pid"
	fi
}

usage="usage: $0 install | start DIR | stop DIR | kill-node DIR NODE | restart-node DIR NODE | hostname DIR NODE"
case "${1:-}" in
install) install ;;
start) start "${2:?$usage}" ;;
stop) stop "${2:?$usage}" ;;
kill-node) kill_node "${2:?$usage}" "${3:?$usage}" ;;
restart-node) restart_node "${2:?$usage}" "${3:?$usage}" ;;
hostname) node_of "${2:?$usage}" "${3:?$usage}" && node_hostname "$2" "$3" ;;
*) echo "$usage" >&2; exit 2 ;;
esac
