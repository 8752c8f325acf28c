# A throwaway one-node Slurm cluster for tests: its own munged, slurmctld and slurmd,
# everything (key, config, state, spool, logs, pid files) in one fresh folder, on free
# ports, so it neither needs nor touches a system Slurm or munge. Source it from bash:
#
#   source tests/cluster/local_slurm.sh
#   trap slurm_stop EXIT                # and trap 'exit 130' INT; trap 'exit 143' TERM
#   slurm_start "$(mktemp -d)"          # exports SLURM_CONF; the node is idle on return
#   slurm_run_array 4 job.sh [sbatch options...]   # fails if any array task fails
#   slurm_stop                          # stops the daemons, removes the folder
#
# The daemons run under tests/cluster/slurm_supervisor.py, which reaps them and the jobs
# and stops the cluster by itself if the calling shell dies without calling slurm_stop.
# The daemons and the jobs run as the caller (SlurmUser: root, or a plain user, which
# works too for a cluster of one user). Needs munge, slurmctld, slurmd and slurm-client
# (scripts/setup.sh) and python3; no cgroups, systemd or accounting database. The functions
# are safe under set -eu (a failure is their return status, not an exit).
#
# Settings (environment): LOCAL_SLURM_START_TIMEOUT (s, default 60): how long slurm_start
# waits for the node; LOCAL_SLURM_RUN_TIMEOUT (s, default 3600): how long slurm_run_array
# waits for the array before it cancels it.

_LOCAL_SLURM_LIB=$(readlink -f "${BASH_SOURCE[0]}")
_LOCAL_SLURM_PROGRAMS=(munged slurmctld slurmd sbatch scontrol sinfo squeue scancel)
# The daemons are in sbin, which a user's PATH may lack.
_LOCAL_SLURM_PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

# slurm_binaries_missing: prints the Slurm and munge programs that are not installed;
# returns 0 when some are missing.
slurm_binaries_missing() {
  local p missing=()
  for p in "${_LOCAL_SLURM_PROGRAMS[@]}"; do
    PATH=$_LOCAL_SLURM_PATH command -v "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -gt 0 ] && echo "${missing[*]}"
}

# The tails of the cluster's logs, to stderr.
slurm_logs() {
  local dir=${_LOCAL_SLURM_DIR:-} f
  [ -n "$dir" ] && [ -d "$dir/log" ] || return 0
  for f in "$dir"/log/*; do
    [ -s "$f" ] || continue
    echo "----- ${f#"$dir"/} (last 25 lines) -----" >&2
    tail -n 25 "$f" >&2
  done
}

# A message and the logs' tails, to stderr.
_slurm_report() {
  echo "local_slurm: $*" >&2
  slurm_logs
}

# A TCP port in 20000-40000 that nothing listens on or has bound (python3 binds it to see).
_slurm_free_port() {
  python3 - "$@" <<'EOF'
import random, socket, sys
taken = set(int(p) for p in sys.argv[1:])
for _ in range(200):
    port = random.randint(20000, 40000)
    if port in taken:
        continue
    with socket.socket() as s:
        try:
            s.bind(("", port))
        except OSError:
            continue
    print(port)
    sys.exit(0)
sys.exit("no free port found in 20000-40000")
EOF
}

# Run by the supervisor (bash local_slurm.sh _slurm_launch DIR): munged, then slurmctld,
# then (when the controller answers) slurmd. Each forks into the background by itself.
_slurm_launch() {
  local dir=$1 i
  munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
         --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
         --seed-file="$dir/munge/munged.seed" || { echo "munged failed: $?"; return 1; }
  slurmctld -f "$dir/slurm.conf" || { echo "slurmctld failed: $?"; return 1; }
  for ((i = 0; i < 300; i++)); do
    scontrol ping 2>/dev/null | grep -q 'is UP' && break
    sleep 0.1
  done
  [ "$i" -lt 300 ] || { echo "slurmctld does not answer after 30 s"; return 1; }
  slurmd -f "$dir/slurm.conf" || { echo "slurmd failed: $?"; return 1; }
}

# slurm_start DIR: a one-node cluster in DIR (an empty folder, made if absent); exports
# SLURM_CONF=DIR/slurm.conf and returns when the node is idle. On failure it prints the
# logs, stops what it started and returns 1.
slurm_start() {
  local dir=${1:?usage: slurm_start DIR}
  if [ -n "${_LOCAL_SLURM_DIR:-}" ]; then
    echo "local_slurm: a cluster is already running in $_LOCAL_SLURM_DIR" >&2
    return 1
  fi
  local missing
  if missing=$(slurm_binaries_missing); then
    echo "local_slurm: not found: $missing (scripts/setup.sh installs them)" >&2
    return 1
  fi
  command -v python3 >/dev/null || { echo "local_slurm: python3 not found" >&2; return 1; }
  mkdir -p "$dir" && dir=$(cd "$dir" && pwd -P) || return 1
  if [ -n "$(ls -A "$dir")" ]; then
    echo "local_slurm: $dir is not empty (slurm_stop removes it: give a fresh folder)" >&2
    return 1
  fi
  if [ $((${#dir} + 40)) -gt 107 ]; then  # sun_path: munged's and slurmstepd's sockets
    echo "local_slurm: $dir is too long a path for the daemons' sockets (108 bytes)" >&2
    return 1
  fi
  # munged wants every folder above its socket searchable by all, none writable by others.
  chmod 0711 "$dir" || return 1
  mkdir -m 0755 "$dir/munge" && mkdir "$dir/log" "$dir/state" "$dir/spool" "$dir/jobs" || return 1
  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none &&
    chmod 0400 "$dir/munge/munge.key" || return 1

  local ctld_port slurmd_port node cpus mem_mb user
  ctld_port=$(_slurm_free_port) && slurmd_port=$(_slurm_free_port "$ctld_port") || return 1
  node=$(hostname -s)
  cpus=$(nproc)
  [ "$cpus" -ge 1 ] 2>/dev/null || cpus=1
  mem_mb=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
  [ "${mem_mb:-0}" -ge 1000 ] 2>/dev/null && mem_mb=1000
  user=$(id -un)
  cat >"$dir/slurm.conf" <<EOF
# Written by tests/cluster/local_slurm.sh for a throwaway test cluster.
ClusterName=localtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
# Schedule as soon as a job is submitted or ends (the default waits up to 3 s).
SchedulerParameters=batch_sched_delay=0
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
# Keep finished jobs' records for a day (slurm_run_array reads their states: there is no
# accounting). 22.05 refuses 0, "no purging" in its man page, and takes 2 s instead.
MinJobAge=86400
NodeName=$node NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF

  _LOCAL_SLURM_DIR=$dir
  if [ "${SLURM_CONF+set}" = set ]; then _LOCAL_SLURM_OLD_CONF=$SLURM_CONF; else unset _LOCAL_SLURM_OLD_CONF; fi
  export SLURM_CONF=$dir/slurm.conf
  # (Read here: in the command run with & below it would be the new process's own pid.)
  local owner=$BASHPID
  python3 "$(dirname "$_LOCAL_SLURM_LIB")/slurm_supervisor.py" --dir "$dir" --owner "$owner" \
    --stop-first "$dir/slurmd.pid" --stop-first "$dir/slurmctld.pid" \
    --stop-last "$dir/munge/munged.pid" \
    -- env PATH="$_LOCAL_SLURM_PATH" bash "$_LOCAL_SLURM_LIB" _slurm_launch "$dir" \
    </dev/null >"$dir/log/launch.log" 2>&1 &
  _LOCAL_SLURM_SUPERVISOR=$!

  local deadline=$((SECONDS + ${LOCAL_SLURM_START_TIMEOUT:-60})) state=
  while :; do
    if [ -s "$dir/launch.rc" ] && [ "$(cat "$dir/launch.rc")" != 0 ]; then
      _slurm_report "the daemons did not start"
      break
    fi
    if ! kill -0 "$_LOCAL_SLURM_SUPERVISOR" 2>/dev/null; then
      _slurm_report "the supervisor exited"
      break
    fi
    if [ -s "$dir/launch.rc" ]; then
      state=$(sinfo -h -o %t 2>/dev/null) || state=unreachable
      case $state in
        idle) return 0 ;;
        inval | drain* | drng | fail*) _slurm_report "node $node is '$state'"; break ;;
      esac
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      _slurm_report "node $node not idle after ${LOCAL_SLURM_START_TIMEOUT:-60} s (state '$state')"
      break
    fi
    sleep 0.05
  done
  slurm_stop
  return 1
}

# slurm_stop: stops the cluster slurm_start made (jobs, slurmd, slurmctld, munged), waits
# until they have exited, removes its folder and restores SLURM_CONF. Does nothing when no
# cluster runs, so it can be called twice and from an EXIT trap.
slurm_stop() {
  local sup=${_LOCAL_SLURM_SUPERVISOR:-} dir=${_LOCAL_SLURM_DIR:-} i
  [ -n "$dir" ] || return 0
  if [ -n "$sup" ] && kill -TERM "$sup" 2>/dev/null; then
    wait "$sup" 2>/dev/null || true
    # wait returns early on a trapped signal, and does not wait for another shell's child.
    for ((i = 0; i < 600; i++)); do
      if [ ! -e "/proc/$sup" ] || grep -q '^[^)]*) Z' "/proc/$sup/stat" 2>/dev/null; then
        break
      fi
      sleep 0.05
    done
  fi
  rm -rf "$dir"
  if [ "${_LOCAL_SLURM_OLD_CONF+set}" = set ]; then
    export SLURM_CONF=$_LOCAL_SLURM_OLD_CONF
  else
    unset SLURM_CONF
  fi
  unset _LOCAL_SLURM_DIR _LOCAL_SLURM_SUPERVISOR _LOCAL_SLURM_OLD_CONF
  return 0
}

# slurm_run_array N SCRIPT [sbatch options...]: runs SCRIPT as the array 0..N-1 and waits
# for every task. Returns 0 when all of them COMPLETED with exit code 0; otherwise prints
# each failed task's state, exit code and output file (with its last lines) and returns 1
# (124 after LOCAL_SLURM_RUN_TIMEOUT seconds, the array cancelled). The tasks' output goes
# to DIR/jobs/JOB_TASK.out unless the options give --output (they must not give --array).
# Polls scontrol instead of sbatch --wait, whose polls grow to 2, 8 and 32 s apart.
slurm_run_array() {
  local n=${1:?usage: slurm_run_array N SCRIPT [sbatch options...]}
  local script=${2:?usage: slurm_run_array N SCRIPT [sbatch options...]}
  shift 2
  local dir=${_LOCAL_SLURM_DIR:-}
  [ -n "$dir" ] || { echo "local_slurm: no cluster (call slurm_start first)" >&2; return 1; }
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "local_slurm: N must be a positive count, not '$n'" >&2; return 1; }

  local start=$SECONDS id
  id=$(sbatch --parsable --array=0-$((n - 1)) --output="$dir/jobs/%A_%a.out" "$@" "$script") ||
    { _slurm_report "sbatch refused the array"; return 1; }
  id=${id%%;*}

  local -A state=() code=() output=()
  local deadline=$((SECONDS + ${LOCAL_SLURM_RUN_TIMEOUT:-3600})) delay=0.05 line task s
  while :; do
    while IFS= read -r line; do
      [[ $line =~ (^|\ )ArrayTaskId=([0-9]+)(\ |$) ]] || continue
      task=${BASH_REMATCH[2]}
      [[ $line =~ (^|\ )JobState=([A-Z_]+) ]] || continue
      s=${BASH_REMATCH[2]}
      case $s in
        COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | PREEMPTED | BOOT_FAIL | DEADLINE | OUT_OF_MEMORY) ;;
        *) continue ;;
      esac
      state[$task]=$s
      [[ $line =~ (^|\ )ExitCode=([0-9:]+) ]] && code[$task]=${BASH_REMATCH[2]}
      [[ $line =~ (^|\ )StdOut=([^ ]*) ]] && output[$task]=${BASH_REMATCH[2]}
    done < <(scontrol -o show job "$id" 2>/dev/null)
    [ ${#state[@]} -ge "$n" ] && break
    if [ "$SECONDS" -ge "$deadline" ]; then
      scancel "$id" 2>/dev/null || true
      echo "local_slurm: array job $id: ${#state[@]} of $n tasks ended in ${LOCAL_SLURM_RUN_TIMEOUT:-3600} s; cancelled" >&2
      squeue -h -j "$id" -o '%i %T %R' >&2 2>/dev/null || true
      slurm_logs
      return 124
    fi
    sleep "$delay"
    case $delay in 0.05) delay=0.1 ;; 0.1) delay=0.2 ;; 0.2) delay=0.5 ;; esac
  done

  local failed=0
  for ((task = 0; task < n; task++)); do
    [ "${state[$task]:-}" = COMPLETED ] && [ "${code[$task]:-}" = 0:0 ] && continue
    failed=$((failed + 1))
    echo "local_slurm: array job $id task $task: ${state[$task]:-not seen} exit code ${code[$task]:-?} output ${output[$task]:-?}" >&2
    if [ -f "${output[$task]:-}" ]; then
      echo "----- ${output[$task]} (last 40 lines) -----" >&2
      tail -n 40 "${output[$task]}" >&2
    fi
  done
  if [ "$failed" -gt 0 ]; then
    echo "local_slurm: array job $id: $failed of $n tasks failed" >&2
    return 1
  fi
  echo "local_slurm: array job $id: $n tasks completed in $((SECONDS - start)) s" >&2
}

# Run as a program only by the supervisor: bash local_slurm.sh _slurm_launch DIR.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  case ${1:-} in
    _slurm_launch) export SLURM_CONF=$2/slurm.conf; _slurm_launch "$2" ;;
    *) echo "usage: source ${0##*/} (see its first lines)" >&2; exit 2 ;;
  esac
fi
