# Sourced by the benchmark scripts: in_pairs FUNCTION ITEM... runs FUNCTION on the items
# two at a time (two processes, one thread each on a 2-core box), waiting for each pair.
in_pairs() {
  local run=$1
  shift
  while [ $# -gt 0 ]; do
    "$run" "$1" &
    if [ $# -gt 1 ]; then "$run" "$2" & shift; fi
    shift
    wait
  done
}
