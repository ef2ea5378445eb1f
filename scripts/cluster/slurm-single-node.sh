#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for testing job scripts
# (docs/cluster.md; run by scripts/cluster/slurm-ci.sh).
#
#   scripts/cluster/slurm-single-node.sh start  [--dir DIR]
#   scripts/cluster/slurm-single-node.sh status [--dir DIR]
#   scripts/cluster/slurm-single-node.sh stop   [--dir DIR]
#
# start: installs Debian's slurmctld, slurmd, slurm-client and munge if they
# are missing (apt-get; a policy-rc.d that exits 101 keeps the packages'
# scripts from starting any service), writes a one-node configuration under
# DIR (default /tmp/flexmb-slurm): the node is this host's short name with
# every core, process tracking and tasks without cgroups or systemd
# (proctrack/linuxproc, task/none), the daemons run as root; starts munged,
# slurmctld and slurmd from DIR's configuration, state, spool, logs and pid
# files, and waits (at most 60 s) until `sinfo` shows the node idle.
# Clients need the configuration: `export SLURM_CONF=DIR/etc/slurm.conf`
# (`start` and `status` print that line).
# stop: ends exactly the daemons that `start` started, by their pid files
# under DIR, and nothing else. Needs root.
set -euo pipefail

usage() {
    echo "usage: $0 start|stop|status [--dir DIR]" >&2
    exit 2
}

[[ $# -ge 1 ]] || usage
action=$1
shift
dir=/tmp/flexmb-slurm
while [[ $# -gt 0 ]]; do
    case $1 in
        --dir) [[ $# -ge 2 ]] || usage; dir=$2; shift 2 ;;
        --dir=*) dir=${1#--dir=}; shift ;;
        *) usage ;;
    esac
done
case $dir in /*) ;; *) dir=$PWD/$dir ;; esac

conf=$dir/etc/slurm.conf
munge_socket=$dir/munge/munge.socket.2
pids=(munged:$dir/munge/munged.pid slurmctld:$dir/run/slurmctld.pid slurmd:$dir/run/slurmd.pid)

log() { echo "slurm-single-node: $*" >&2; }
die() { log "error: $*"; exit 1; }

# The pid in FILE if that process is alive and runs the program NAME.
live_pid() {
    local name=$1 file=$2 pid
    [[ -s $file ]] || return 1
    pid=$(<"$file")
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    [[ -r /proc/$pid/comm && $(</proc/$pid/comm) == "$name" ]] || return 1
    echo "$pid"
}

install_packages() {
    local missing=()
    command -v munged >/dev/null || missing+=(munge)
    command -v slurmctld >/dev/null || missing+=(slurmctld)
    command -v slurmd >/dev/null || missing+=(slurmd)
    command -v sbatch >/dev/null || missing+=(slurm-client)
    [[ ${#missing[@]} -eq 0 ]] && return 0
    log "installing ${missing[*]}"
    # Keep the packages' maintainer scripts from starting services: a
    # policy-rc.d that exits 101 for the install, the previous one (if any)
    # put back afterwards.
    local policy=/usr/sbin/policy-rc.d saved=""
    if [[ -e $policy ]]; then
        saved=$(mktemp)
        cp -p "$policy" "$saved"
    fi
    restore_policy() {
        if [[ -n $saved ]]; then
            cp -p "$saved" "$policy" && rm -f "$saved"
        else
            rm -f "$policy"
        fi
    }
    trap restore_policy EXIT
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    apt-get clean
    restore_policy
    trap - EXIT
}

write_config() {
    local host cpus
    host=$(hostname -s)
    cpus=$(nproc)
    mkdir -p "$dir"/{etc,run,state,spool,log,munge}
    chmod 700 "$dir/munge"
    cat >"$conf" <<EOF
# Written by scripts/cluster/slurm-single-node.sh: one node, no cgroups, no systemd.
ClusterName=flexmb
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$munge_socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=10
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
    [[ $(id -u) -eq 0 ]] || die "needs root"
    for entry in "${pids[@]}"; do
        if pid=$(live_pid "${entry%%:*}" "${entry#*:}"); then
            die "${entry%%:*} already runs from $dir (pid $pid); '$0 stop --dir $dir' first"
        fi
    done
    install_packages
    write_config
    local key=/etc/munge/munge.key
    if [[ ! -s $key ]]; then
        log "creating $key"
        mungekey --create --keyfile="$key"
        chown munge:munge "$key" 2>/dev/null || true
        chmod 600 "$key"
    fi
    munged --socket="$munge_socket" --pid-file="$dir/munge/munged.pid" \
        --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" \
        --key-file="$key" --force
    # -c: no state from an earlier start (jobs, node states) is read back.
    slurmctld -c -f "$conf"
    slurmd -f "$conf"
    export SLURM_CONF=$conf
    local deadline=$((SECONDS + 60)) state=""
    while ((SECONDS < deadline)); do
        state=$(sinfo --noheader --Node --format=%T 2>/dev/null | head -1 || true)
        [[ $state == idle ]] && break
        sleep 0.5
    done
    if [[ $state != idle ]]; then
        log "node not idle after 60 s (state '${state:-none}'); logs in $dir/log"
        tail -n 20 "$dir"/log/*.log >&2 || true
        exit 1
    fi
    log "node $(hostname -s) idle ($(nproc) CPUs)"
    echo "export SLURM_CONF=$conf"
}

status() {
    local rc=0
    for entry in "${pids[@]}"; do
        if pid=$(live_pid "${entry%%:*}" "${entry#*:}"); then
            log "${entry%%:*} runs (pid $pid)"
        else
            log "${entry%%:*} does not run"
            rc=1
        fi
    done
    if [[ $rc -eq 0 ]]; then
        SLURM_CONF=$conf sinfo >&2
        echo "export SLURM_CONF=$conf"
    fi
    return $rc
}

stop() {
    # Reverse order: slurmd, slurmctld, munged; each by its own pid file.
    local i entry name file pid
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        entry=${pids[i]}
        name=${entry%%:*}
        file=${entry#*:}
        if ! pid=$(live_pid "$name" "$file"); then
            continue
        fi
        kill -TERM "$pid"
        for _ in $(seq 100); do
            [[ -d /proc/$pid ]] || break
            sleep 0.1
        done
        if [[ -d /proc/$pid ]]; then
            log "$name (pid $pid) still runs after 10 s: SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
        log "stopped $name (pid $pid)"
        rm -f "$file"
    done
}

case $action in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) usage ;;
esac
