#!/usr/bin/env bash
# A throwaway 3-node MariaDB Galera cluster on loopback, for the Galera test suite.
#
#   galera.sh start   DIR [BASE_PORT]   initialise and start 3 nodes, wait until all are Synced
#   galera.sh stop    DIR               stop every node of DIR (SIGTERM, then SIGKILL after a deadline)
#   galera.sh kill    NODE DIR          SIGKILL one node's mariadbd (NODE is 1, 2 or 3)
#   galera.sh restart NODE DIR          start a killed/stopped node; it rejoins the others by IST or SST
#   galera.sh status  DIR               one line per node: pid, SQL port, wsrep state
#   galera.sh clean   DIR               stop, then delete DIR (only if it holds a cluster of ours)
#   galera.sh check                     fail with one line naming the Debian packages this machine lacks
#   galera.sh missing                   print those packages on one line (nothing when none is missing)
#
# Ports, for node i = 1..3 and BASE_PORT (default 3311):
#   SQL BASE+i-1 (3311-3313)   group BASE+10+i-1 (3321-3323)
#   IST BASE+20+i-1 (3331-3333)   SST (rsync daemon) BASE+30+i-1 (3341-3343)
# Everything of node i lives in DIR/node<i>: my.cnf, data/, tmp/, error.log, the socket and pid.
# Node 1 bootstraps the cluster and is the only one initialised with mariadb-install-db; nodes 2
# and 3 start empty and receive node 1's data by rsync SST (cheaper than initialising three times).
# Clients: mysql://root@127.0.0.1:<SQL port>/test (root@'127.0.0.1' and root@'%', no password).
# Progress lines go to stdout prefixed "[galera]"; errors to stderr, with the node's error log tail.
#
# Environment: GALERA_JOIN_TIMEOUT_S (default 120) bounds each wait for a node.
# GALERA_CLOCK_OFFSET (e.g. +20s, -5s) starts the node(s) of this command with a wall clock that
# far off, through Debian's libfaketime (apt-get install libfaketime): NOW() on that node moves, its
# monotonic clock (Galera's timers) does not. `GALERA_CLOCK_OFFSET=+20s galera.sh restart 3 DIR`.
set -euo pipefail

readonly NODES=3
readonly MARIADBD=${MARIADBD:-/usr/sbin/mariadbd}
readonly PROVIDER=${GALERA_PROVIDER:-/usr/lib/galera/libgalera_smm.so}
readonly JOIN_TIMEOUT_S=${GALERA_JOIN_TIMEOUT_S:-120}
readonly STOP_TIMEOUT_S=15 # a node busy in SST ignores SIGTERM
readonly MARKER=cluster.env
FAKETIME_LIB=${GALERA_FAKETIME_LIB:-$(compgen -G '/usr/lib/*/faketime/libfaketimeMT.so.1' | head -n 1 || true)}
readonly FAKETIME_LIB
readonly CLOCK_OFFSET=${GALERA_CLOCK_OFFSET:-}
# As root, the servers run as 'mysql' over datadirs it owns, not with --user=root: mariadbd would
# start as root, but rsync SST would fail, because the rsync daemon wsrep_sst_rsync starts on the
# joiner drops to uid 'nobody' when started by root ("mkdir ... failed: Permission denied").
if [ "$(id -u)" -eq 0 ]; then RUN_AS=${GALERA_USER:-mysql}; else RUN_AS=$(id -un); fi
readonly RUN_AS

T0=$EPOCHREALTIME
log() { printf '[galera] %s\n' "$*"; }
die() {
  printf '[galera] ERROR: %s\n' "$*" >&2
  exit 1
}
usage() {
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
# Seconds since $1 (an EPOCHREALTIME), one decimal.
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

# --- what the machine needs ---------------------------------------------------------------------

# The Debian packages missing for NEEDS: 'cluster' (mariadbd, mariadb-install-db and wsrep_sst_rsync
# from mariadb-server, the mariadb client, Galera's provider from galera-4, rsync for state
# transfers) and/or 'clock' (libfaketime, for GALERA_CLOCK_OFFSET). Prints them on one line,
# nothing when all are there.
missing_packages() {
  local need missing=()
  for need in "$@"; do
    case $need in
    cluster)
      { [ -x "$MARIADBD" ] && command -v mariadb-install-db && command -v wsrep_sst_rsync; } >/dev/null ||
        missing+=(mariadb-server)
      command -v mariadb >/dev/null || missing+=(mariadb-client)
      [ -f "$PROVIDER" ] || missing+=(galera-4)
      command -v rsync >/dev/null || missing+=(rsync)
      ;;
    clock) { [ -n "$FAKETIME_LIB" ] && [ -f "$FAKETIME_LIB" ]; } || missing+=(libfaketime) ;;
    esac
  done
  echo "${missing[*]}"
}

require_packages() { # NEEDS...: dies naming every missing package at once
  local missing
  missing=$(missing_packages "$@")
  [ -z "$missing" ] || die "missing Debian packages: apt-get install $missing"
}

# --- layout ---------------------------------------------------------------------------------

load_cluster() { # DIR: reads BASE_PORT and CLUSTER_NAME written by start
  DIR=$(cd "$1" 2>/dev/null && pwd) || die "no cluster directory '$1'"
  [ -f "$DIR/$MARKER" ] || die "'$DIR' holds no galera.sh cluster (no $MARKER)"
  # shellcheck source=/dev/null
  . "$DIR/$MARKER"
}
node_dir() { printf '%s/node%s' "$DIR" "$1"; }
sql_port() { echo $((BASE_PORT + $1 - 1)); }
group_port() { echo $((BASE_PORT + 10 + $1 - 1)); }
ist_port() { echo $((BASE_PORT + 20 + $1 - 1)); }
sst_port() { echo $((BASE_PORT + 30 + $1 - 1)); }
check_node() { [[ "$1" =~ ^[1-9][0-9]*$ ]] && [ "$1" -le "$NODES" ] || die "NODE must be 1..$NODES, not '$1'"; }

# The pid of node $1's mariadbd if it runs, else nothing. The pid is checked against the node's
# my.cnf in /proc/<pid>/cmdline, so a recycled pid is never taken for ours.
node_pid() {
  local f pid
  f="$(node_dir "$1")/mariadbd.launch.pid"
  [ -f "$f" ] || return 0
  pid=$(<"$f")
  if [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$(node_dir "$1")/my.cnf"; then
    echo "$pid"
  fi
}

# SQL over node $1's unix socket as root (no password), tab-separated, no headers.
sql() {
  local node=$1
  shift
  mariadb --no-defaults --protocol=socket --socket="$(node_dir "$node")/mariadbd.sock" -uroot \
    --connect-timeout=2 -N -B -e "$*"
}

# "ready size state" of node $1, e.g. "ON 3 Synced"; nothing if it does not answer.
wsrep_state() {
  sql "$1" "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready','wsrep_cluster_size','wsrep_local_state_comment')" \
    2>/dev/null | awk '{ v[$1] = $2 } END { if (NR) printf "%s %s %s", v["wsrep_ready"], v["wsrep_cluster_size"], v["wsrep_local_state_comment"] }' ||
    true
}

log_tail() { # NODE
  local f
  f="$(node_dir "$1")/error.log"
  printf '[galera] ---- last lines of %s ----\n' "$f" >&2
  if [ -f "$f" ]; then tail -n 40 "$f" >&2; else echo '(no error log)' >&2; fi
  printf '[galera] ----\n' >&2
}

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# --- one node ---------------------------------------------------------------------------------

write_config() { # NODE
  local n=$1 d addresses="" i
  d=$(node_dir "$n")
  for i in $(seq 1 "$NODES"); do addresses+="${addresses:+,}127.0.0.1:$(group_port "$i")"; done
  cat >"$d/my.cnf" <<EOF
[mysqld]
user=$RUN_AS
datadir=$d/data
tmpdir=$d/tmp
socket=$d/mariadbd.sock
pid-file=$d/mariadbd.pid
log-error=$d/error.log
port=$(sql_port "$n")
bind-address=127.0.0.1
skip-name-resolve
# small: the machine has two cores and runs other servers
performance-schema=OFF
innodb-buffer-pool-size=64M
innodb-log-file-size=32M
innodb-flush-log-at-trx-commit=2
max-connections=200
# what Galera requires
binlog-format=ROW
default-storage-engine=InnoDB
innodb-autoinc-lock-mode=2
wsrep-on=ON
wsrep-provider=$PROVIDER
wsrep-cluster-name=$CLUSTER_NAME
wsrep-cluster-address=gcomm://$addresses
wsrep-node-name=node$n
wsrep-node-address=127.0.0.1:$(group_port "$n")
wsrep-node-incoming-address=127.0.0.1:$(sql_port "$n")
wsrep-sst-method=rsync
wsrep-sst-receive-address=127.0.0.1:$(sst_port "$n")
wsrep-provider-options="gmcast.listen_addr=tcp://127.0.0.1:$(group_port "$n");ist.recv_addr=127.0.0.1:$(ist_port "$n");gcache.size=32M"
EOF
}

launch() { # NODE [extra mariadbd args...]
  local n=$1 d pid
  shift
  d=$(node_dir "$n")
  [ -z "$(node_pid "$n")" ] || die "node $n already runs (pid $(node_pid "$n"))"
  for port in "$(sql_port "$n")" "$(group_port "$n")" "$(ist_port "$n")" "$(sst_port "$n")"; do
    port_busy "$port" && die "port $port (node $n) is already in use on 127.0.0.1; pick another BASE_PORT"
  done
  mkdir -p "$d/data" "$d/tmp"
  touch "$d/error.log"
  own "$d"
  local clock=()
  if [ -n "$CLOCK_OFFSET" ]; then
    [[ "$CLOCK_OFFSET" =~ ^[+-][0-9]+(\.[0-9]+)?[smhd]?$ ]] || die "GALERA_CLOCK_OFFSET must look like +20s or -5s, not '$CLOCK_OFFSET'"
    require_packages clock
    clock=(env "LD_PRELOAD=$FAKETIME_LIB" "FAKETIME=$CLOCK_OFFSET" FAKETIME_DONT_FAKE_MONOTONIC=1)
    log "node $n starts with its wall clock at $CLOCK_OFFSET (libfaketime)"
  fi
  # Own session, so that a signal to the caller's process group does not reach the server.
  setsid "${clock[@]}" "$MARIADBD" --defaults-file="$d/my.cnf" "$@" </dev/null >>"$d/error.log" 2>&1 &
  pid=$!
  disown "$pid" # its death is reported by wait_synced, not by bash's job messages
  echo "$pid" >"$d/mariadbd.launch.pid"
  # Until the forked shell execs, /proc/$pid/cmdline is this script's, and node_pid (which checks
  # the command line) would take a slow launch for a death (seen once in CI: "exited while
  # starting" with an empty error log). Wait for the exec, or for the process to be gone.
  local cmdline tries=0
  while [ "$tries" -lt 100 ]; do
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) || break
    [ -n "$cmdline" ] || break # a zombie: it exited, wait_synced reports it
    [[ "$cmdline" == *"$d/my.cnf"* ]] && break
    sleep 0.05
    tries=$((tries + 1))
  done
}

# As root, hands $1 (recursively) to RUN_AS; the servers must write there.
own() { if [ "$(id -u)" -eq 0 ]; then chown -R "$RUN_AS:" "$1"; fi; }

# Waits until node $1 is Synced and ready in a cluster of $2 nodes, failing with its log tail.
wait_synced() {
  local n=$1 want=$2 deadline state=""
  deadline=$((SECONDS + JOIN_TIMEOUT_S))
  while :; do
    if [ -z "$(node_pid "$n")" ]; then
      log_tail "$n"
      die "node $n (mariadbd) exited while starting; its error log is above"
    fi
    state=$(wsrep_state "$n")
    [ "$state" = "ON $want Synced" ] && return 0
    if [ "$SECONDS" -ge "$deadline" ]; then
      log_tail "$n"
      die "node $n not Synced in a cluster of $want within ${JOIN_TIMEOUT_S}s (last state: '${state:-no answer}')"
    fi
    sleep 0.2
  done
}

# How the last join of node $1 received its state (IST or SST), from its error log after byte $2.
# With Galera 4 an IST also runs the SST script, which then reports "rsync IST completed".
transfer_kind() {
  local f
  f="$(node_dir "$1")/error.log"
  tail -c "+$(($2 + 1))" "$f" | sed -n 's/.*rsync \([IS]ST\) completed on joiner.*/\1/p' | tail -n 1 | grep . ||
    echo 'no transfer'
}

# Waits until process $1 has exited (gone, or a zombie its new parent has not reaped yet).
wait_gone() {
  while [ -d "/proc/$1" ] && [ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]; do sleep 0.02; done
}

# SIGKILLs node $1's mariadbd, then whatever is left of its process group: a node killed during
# a state transfer leaves wsrep_sst_rsync and rsync daemons behind, writing into DIR. launch()
# starts mariadbd with setsid, so its pid is its group's id. Prints the killed pid.
kill_node() {
  local pid
  pid=$(node_pid "$1")
  [ -n "$pid" ] || return 0
  kill -KILL "$pid" 2>/dev/null || true
  wait_gone "$pid"
  kill -KILL -- "-$pid" 2>/dev/null || true
  echo "$pid"
}

kill_nodes() { # NODES... : SIGKILL, for a cluster that is thrown away anyway
  local n
  for n in "$@"; do kill_node "$n" >/dev/null; done
}

stop_nodes() { # NODES... : SIGTERM all at once, SIGKILL what is left after STOP_TIMEOUT_S
  local n pid pids=() deadline
  for n in "$@"; do
    pid=$(node_pid "$n")
    [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && pids+=("$n")
  done
  deadline=$((SECONDS + STOP_TIMEOUT_S))
  for n in "${pids[@]}"; do
    pid=$(node_pid "$n")
    while [ -n "$(node_pid "$n")" ] && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    if [ -n "$(node_pid "$n")" ]; then log "node $n did not stop within ${STOP_TIMEOUT_S}s; SIGKILL"; fi
    kill_node "$n" >/dev/null
    [ -z "$pid" ] || kill -KILL -- "-$pid" 2>/dev/null || true
  done
}

# --- commands -----------------------------------------------------------------------------------

cmd_start() {
  [ $# -ge 1 ] && [ $# -le 2 ] || usage
  local base=${2:-3311} n t
  [[ "$base" =~ ^[0-9]+$ ]] && [ "$base" -ge 1024 ] && [ "$base" -le 65400 ] || die "BASE_PORT must be 1024..65400"
  require_packages cluster
  mkdir -p "$1"
  DIR=$(cd "$1" && pwd)
  if [ -f "$DIR/$MARKER" ]; then
    load_cluster "$DIR"
    for n in $(seq 1 "$NODES"); do [ -z "$(node_pid "$n")" ] || die "a cluster already runs in $DIR (node $n)"; done
    die "$DIR already holds a (stopped) cluster; run 'galera.sh clean $DIR' first"
  fi
  [ -z "$(ls -A "$DIR")" ] || die "$DIR is not empty"
  # A unix socket path is limited to 107 bytes.
  [ "${#DIR}" -le 80 ] || die "DIR path too long for a unix socket (${#DIR} > 80 characters): $DIR"
  BASE_PORT=$base
  CLUSTER_NAME="sluice-$(printf '%s' "$DIR" | cksum | cut -d' ' -f1)"
  for n in $(seq 1 "$NODES"); do
    for p in "$(sql_port "$n")" "$(group_port "$n")" "$(ist_port "$n")" "$(sst_port "$n")"; do
      port_busy "$p" && die "port $p is already in use on 127.0.0.1 (another cluster?); pick another BASE_PORT"
    done
  done
  id "$RUN_AS" >/dev/null 2>&1 || die "user '$RUN_AS' does not exist (servers run as it when galera.sh runs as root)"
  printf 'BASE_PORT=%s\nCLUSTER_NAME=%s\n' "$BASE_PORT" "$CLUSTER_NAME" >"$DIR/$MARKER"
  # A failed start stops what it started; DIR stays, with the logs, for 'clean'.
  trap 'kill_nodes $(seq 1 "$NODES"); log "start failed; nodes killed, logs kept in $DIR"' EXIT
  for n in $(seq 1 "$NODES"); do
    mkdir -p "$(node_dir "$n")/data" "$(node_dir "$n")/tmp"
    write_config "$n"
    own "$(node_dir "$n")"
  done
  if [ "$(id -u)" -eq 0 ]; then
    # mktemp -d makes DIR 0700; RUN_AS must reach its node folders.
    chmod o+x "$DIR"
    runuser -u "$RUN_AS" -- test -w "$(node_dir 1)/data" ||
      die "user '$RUN_AS' cannot write $(node_dir 1)/data: a parent of $DIR is closed to it; use a DIR under /tmp"
  fi
  log "cluster $CLUSTER_NAME in $DIR, SQL ports $(sql_port 1)-$(sql_port "$NODES")"

  t=$EPOCHREALTIME
  local install_args=(--defaults-file="$(node_dir 1)/my.cnf" --auth-root-authentication-method=normal
    --skip-test-db --skip-name-resolve --wsrep-on=OFF)
  if ! mariadb-install-db "${install_args[@]}" >"$(node_dir 1)/install-db.log" 2>&1; then
    tail -n 30 "$(node_dir 1)/install-db.log" >&2
    die "mariadb-install-db failed for node 1 (log above)"
  fi
  log "node 1 initialised in $(since "$t")s"

  t=$EPOCHREALTIME
  launch 1 --wsrep-new-cluster
  wait_synced 1 1
  # TCP clients come from 127.0.0.1; '%' covers the rest. These replicate to the joiners by SST.
  sql 1 "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1'; GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
         CREATE USER IF NOT EXISTS 'root'@'%'; GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;
         CREATE DATABASE IF NOT EXISTS test" || {
    log_tail 1
    die "could not create the root users and database 'test' on node 1"
  }
  log "node 1 bootstrapped in $(since "$t")s (pid $(node_pid 1))"

  # Joiners one at a time: a second SST request while node 1 donates would only wait and retry.
  for n in $(seq 2 "$NODES"); do
    t=$EPOCHREALTIME
    launch "$n"
    wait_synced "$n" "$n"
    log "node $n joined by $(transfer_kind "$n" 0) in $(since "$t")s (pid $(node_pid "$n"))"
  done
  for n in $(seq 1 "$NODES"); do wait_synced "$n" "$NODES"; done
  trap - EXIT
  log "cluster of $NODES ready in $(since "$T0")s"
  for n in $(seq 1 "$NODES"); do echo "url mysql://root@127.0.0.1:$(sql_port "$n")/test"; done
}

cmd_stop() {
  [ $# -eq 1 ] || usage
  load_cluster "$1"
  stop_nodes $(seq "$NODES" -1 1)
  log "stopped in $(since "$T0")s"
}

cmd_kill() {
  [ $# -eq 2 ] || usage
  load_cluster "$2"
  check_node "$1"
  local pid
  [ -n "$(node_pid "$1")" ] || die "node $1 does not run"
  pid=$(kill_node "$1")
  log "node $1 (pid $pid) killed with SIGKILL"
}

cmd_restart() {
  [ $# -eq 2 ] || usage
  load_cluster "$2"
  check_node "$1"
  local n=$1 running=0 i offset d t pos
  d=$(node_dir "$n")
  [ -z "$(node_pid "$n")" ] || die "node $n already runs (pid $(node_pid "$n"))"
  offset=$(stat -c %s "$d/error.log" 2>/dev/null || echo 0)
  # After a SIGKILL grastate.dat says seqno -1, and a node that does not know its position gets a
  # full SST. Recover the position from InnoDB first, as Debian's galera_recovery does under
  # systemd, so that the node can catch up by IST from a survivor's gcache.
  t=$EPOCHREALTIME
  if "$MARIADBD" --defaults-file="$d/my.cnf" --wsrep-recover --disable-log-error 2>"$d/recover.log" >&2; then
    pos=$(sed -n 's/.*WSREP: Recovered position: *//p' "$d/recover.log" | tail -n 1)
  fi
  if [ -n "${pos:-}" ]; then
    log "node $n recovered position $pos in $(since "$t")s"
    launch "$n" --wsrep-start-position="$pos"
  else
    log "node $n: no position recovered (see $d/recover.log); it will need a full SST"
    launch "$n"
  fi
  for i in $(seq 1 "$NODES"); do [ -z "$(node_pid "$i")" ] || running=$((running + 1)); done
  wait_synced "$n" "$running"
  log "node $n rejoined by $(transfer_kind "$n" "$offset") in $(since "$T0")s (pid $(node_pid "$n"), cluster size $running)"
}

cmd_status() {
  [ $# -eq 1 ] || usage
  load_cluster "$1"
  local n pid
  for n in $(seq 1 "$NODES"); do
    pid=$(node_pid "$n")
    if [ -n "$pid" ]; then
      printf 'node%s pid=%s port=%s wsrep(ready size state)=%s\n' "$n" "$pid" "$(sql_port "$n")" "$(wsrep_state "$n")"
    else
      printf 'node%s down port=%s\n' "$n" "$(sql_port "$n")"
    fi
  done
}

# The whole suite's needs: a cluster, and a node with its clock off (galeraClockSkew.test.ts).
cmd_check() {
  [ $# -eq 0 ] || usage
  require_packages cluster clock
  log "every package the Galera suite needs is installed"
}

cmd_missing() {
  [ $# -eq 0 ] || usage
  missing_packages cluster clock
}

cmd_clean() {
  [ $# -eq 1 ] || usage
  [ -d "$1" ] || return 0
  load_cluster "$1"
  stop_nodes $(seq "$NODES" -1 1)
  rm -rf -- "$DIR"
  log "removed $DIR"
}

[ $# -ge 1 ] || usage
command=$1
shift
case "$command" in
start) cmd_start "$@" ;;
stop) cmd_stop "$@" ;;
kill) cmd_kill "$@" ;;
restart) cmd_restart "$@" ;;
status) cmd_status "$@" ;;
clean) cmd_clean "$@" ;;
check) cmd_check "$@" ;;
missing) cmd_missing "$@" ;;
*) usage ;;
esac
