#!/usr/bin/env bash
# Run commands side by side, one CPU thread each, and fail as soon as one fails.
#
#   bash scripts/run_parallel.sh NAME1 "COMMAND 1" NAME2 "COMMAND 2" ...
#
# The project's `all-cpu` workflow trains the parser and lisa_cpu this way on a 2-core box:
# neither uses a second core well (the parser's Thinc CNN runs on one thread, lisa_cpu
# gets ~1.4x from a second torch thread in nlp.pipe: 2026-11-25, 0.1.0 at commit 82d13cf,
# BENCHMARKS.md), so overlapping them saves most of the shorter one's wall time. The
# benchmark scripts that train side by side use it too (benchmarks/teacher_share.sh,
# predicate_mark.sh, ensembles.sh, and lever_screens.sh once per lever, two at a time).
# Each command's output goes to $LOG_DIR/NAME.log (default training/logs; `tail -f` it to
# follow a training), with a time stamp per line; when a command fails the others are
# stopped, its log's end is shown and the script exits with its status; stopping the
# script (Ctrl-C, TERM) stops the commands.
set -uo pipefail
if [ $(( $# % 2 )) -ne 0 ] || [ $# -eq 0 ]; then
  echo "usage: $0 NAME COMMAND [NAME COMMAND ...]" >&2
  exit 2
fi
export OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
log_dir=${LOG_DIR:-training/logs}
mkdir -p "$log_dir"
declare -A name_of
pids=()
while [ $# -gt 0 ]; do
  name=$1 command=$2
  shift 2
  # its own process group (setsid), so that stopping it stops its children too
  setsid bash -c "set -o pipefail; { $command; } 2>&1 | while IFS= read -r line; do
    printf '%(%H:%M:%S)T %s\n' -1 \"\$line\"; done" > "$log_dir/$name.log" 2>&1 &
  pids+=("$!")
  name_of[$!]=$name
  printf '%(%H:%M:%S)T [%s] started: %s (log: %s)\n' -1 "$name" "$command" "$log_dir/$name.log"
done
# stopped itself (Ctrl-C, or a pool that runs it, as lever_screens.sh does): stop the
# commands too, which run in sessions of their own and would go on training
trap 'for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null; done; exit 143' INT TERM
status=0
remaining=${#pids[@]}
while [ "$remaining" -gt 0 ]; do
  wait -n -p finished
  code=$?
  remaining=$(( remaining - 1 ))
  name=${name_of[$finished]}
  if [ "$code" -ne 0 ]; then
    printf '%(%H:%M:%S)T [%s] failed with status %s; stopping the others. Its log ends:\n' -1 "$name" "$code" >&2
    tail -n 20 "$log_dir/$name.log" >&2
    for pid in "${pids[@]}"; do
      [ "$pid" != "$finished" ] && kill -- "-$pid" 2>/dev/null
    done
    status=$code
    break
  fi
  printf '%(%H:%M:%S)T [%s] done\n' -1 "$name"
done
wait 2>/dev/null
exit "$status"
