#!/usr/bin/env bash
# A real single-node SLURM cluster from Debian's packages, everything under
# one scratch directory (no systemd, nothing in /etc, /run or /var), for the
# campaign test (cmd/ceres-export, TestE2EBatchSlurm).
#
#   tests/slurm/cluster.sh install        apt-get the packages if missing
#   tests/slurm/cluster.sh start  DIR     munged, slurmctld, slurmd; wait idle
#   tests/slurm/cluster.sh stop   DIR     scontrol shutdown, stop munged
#
# start prints the SLURM_CONF every client command (sbatch, squeue,
# scontrol) needs; jobs inherit it. CERES_SLURM_PORT (default 6817) moves
# slurmctld's port (slurmd takes the next) when another cluster runs.
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

start() {
	local dir=$1
	have_packages || { echo "cluster.sh: SLURM packages missing (run: $0 install)" >&2; exit 3; }
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

	local host port node
	host=$(hostname -s)
	port=${CERES_SLURM_PORT:-6817}
	node=$(slurmd -C | head -n 1)
	cat >"$dir/slurm.conf" <<CONF
ClusterName=ceres-ci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
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
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
	export SLURM_CONF=$dir/slurm.conf
	# The daemons fork; their standard streams go to a file so that nothing
	# holds the caller's pipes open.
	slurmctld -f "$SLURM_CONF" </dev/null >>"$dir/log/daemons.out" 2>&1
	slurmd -f "$SLURM_CONF" </dev/null >>"$dir/log/daemons.out" 2>&1
	local i
	for i in $(seq 1 150); do
		if [ "$(sinfo -h -o %t 2>/dev/null | head -n 1)" = idle ]; then
			echo "SLURM_CONF=$SLURM_CONF"
			return 0
		fi
		sleep 0.2
	done
	echo "cluster.sh: the node did not become idle in 30 s:" >&2
	sinfo >&2 || true
	tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
	stop "$dir"
	exit 1
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
	local dir=$1
	[ -d "$dir" ] || return 0
	dir=$(cd "$dir" && pwd)
	if [ -f "$dir/slurm.conf" ]; then
		SLURM_CONF=$dir/slurm.conf scontrol shutdown >/dev/null 2>&1 || true
	fi
	wait_gone "$dir/slurmctld.pid"
	wait_gone "$dir/slurmd.pid"
	if [ -f "$dir/munge/munged.pid" ]; then
		kill -TERM "$(cat "$dir/munge/munged.pid")" 2>/dev/null || true
		wait_gone "$dir/munge/munged.pid"
	fi
}

case "${1:-}" in
install) install ;;
start) start "${2:?usage: $0 start DIR}" ;;
stop) stop "${2:?usage: $0 stop DIR}" ;;
*) echo "usage: $0 install | start DIR | stop DIR" >&2; exit 2 ;;
esac
