#!/usr/bin/env bash
# The device-level mutation campaign (docs/MUTATION.md): build commitlab with the hand-planted mutants of
# crates/ssd/src/mutant.rs, switch each on in turn (COMMITLAB_MUTANT=name) for every
# protocol it affects, and see which crash checks catch it:
#
#   A  exhaustive, one timing schedule (--timing configured)
#   B  exhaustive over every adversarial timing profile (the default of `crash`, including
#      wild-jitter, added for flag-commit-early)
#   C  4096 random schedules, timing drawn per batch of 512 (`--schedules 4096`)
#   D  exhaustive with crashes inside recovery (`--double --timing configured`)
#   S  2048 random schedules on each workload shape (long-tx, hot-rewrite, abort-gc,
#      near-full, trim-in-flight) that the unmutated protocol passes; erase-race (added for
#      core-erase-early and core-release-now) gets 8192 schedules and the exhaustive check
#   T  targeted: for scc, bpcc, cfc, lighttx and aw, one exhaustive run of a configuration and
#      seed found by searching geometry/workload/timing knobs with core-erase-early on
#      (the window of FtlCore::erase_not_before; docs/MUTATION.md); for other protocols "-"
#   V  safety variants, as CI's two steps run them for P: `crash --variants --protocol P
#      --schedules 1000` (exhaustive over the timing profiles plus 1,000 random states per
#      variant) and `crash --variants --protocol P --seed 7` (exhaustive), for the protocols
#      that have a variant (check::variants: the non-default position of each option that
#      switches a safety mechanism); for other protocols "-"
#
# A row's checks stop at the first that catches the mutant (later ones show "-"; within S,
# at the first shape); with ALL_CHECKS=1 every check runs. Each check runs on the unmutated
# protocol first (once per protocol and check, only when a row needs it); a check that
# already fails there (a known, unfixed bug) cannot judge mutants of that protocol and is
# reported as n/a. Prints a Markdown table (docs/MUTATION.md) on stdout and each command
# with its exit code and wall time on stderr.
# Not part of the default tests: it takes minutes. Usage: scripts/mutants.sh [mutant ...]
# (MUTANT_PROTOCOLS="p ..." limits the core-* rows and the baselines to those protocols).
# The host's planted bugs have their own script, scripts/host-mutants.sh.
set -uo pipefail
cd "$(dirname "$0")/.."

# Build the mutant-carrying binary aside, then relink the normal one (cargo keeps both sets of
# artifacts, so neither build repeats the other's work).
# MUTANTS_BUILT=1: target/release/commitlab-mutants is already built from this tree (two
# campaigns at once, or one after the other, build it once).
if [ "${MUTANTS_BUILT:-}" != 1 ]; then
  cargo build --release -p commitlab --features mutants >&2 || exit 2
  cp target/release/commitlab target/release/commitlab-mutants
  cargo build --release -p commitlab >&2 || exit 2
fi
B=target/release/commitlab-mutants
ALL="${MUTANT_PROTOCOLS:-none tc scc bpcc cfc afc lighttx aw mhl-d mhl-m}"

# The protocols each mutant's code is on: MHL-D runs LightTx's engine (protocols/mhl_d.rs,
# `ZoneTx`), MHL-M AW's (protocols/mhl_m.rs).

declare -A SCOPE=(
  [core-erase-early]="$ALL"
  [core-release-now]="$ALL"
  [tc-commit-early]="tc"
  [cyclic-commit-early]="scc bpcc"
  [flag-commit-early]="cfc afc"
  [lighttx-ack-early]="lighttx mhl-d"
  [aw-commit-early]="aw mhl-m"
  [none-ack-early]="none"
  [aw-carrier-not-awaited]="aw mhl-m"
  [scc-abort-erase-unawaited]="scc"
  [core-no-reserve]="aw mhl-m"
  [bpcc-straddler-unpinned]="bpcc"
  [scc-write-erase-unawaited]="scc"
  [none-root-trusted]="none"
  [gc-erase-before-copies]="none tc"
  [afc-no-first-hold]="afc"
)
ORDER="core-erase-early core-release-now tc-commit-early cyclic-commit-early flag-commit-early lighttx-ack-early aw-commit-early none-ack-early aw-carrier-not-awaited scc-abort-erase-unawaited core-no-reserve bpcc-straddler-unpinned scc-write-erase-unawaited none-root-trusted gc-erase-before-copies afc-no-first-hold"
if [ $# -gt 0 ]; then ORDER="$*"; fi

# T: targeted configurations (exhaustive, one timing profile), per protocol. Found on
# 2026-11-23 by a random search over channels, planes, blocks per plane, interface speed,
# plain-write ratio, concurrency, transaction size and count, striping, timing and seed, run
# with core-erase-early on; each passes unmutated.
declare -A TARGETED=(
  [scc]="--seed 8 --timing program=100000,jitter=3000000 --set nand.planes_per_die=4 --set nand.blocks_per_plane=8 --set ftl.interface_mbps=16 --set workload.txn.plain_write_ratio=0.15 --set workload.txn.concurrency=2 --set workload.txn.size_max=2 --set workload.txn.transactions=150"
  [bpcc]="--seed 9 --timing jitter --set workload.txn.plain_write_ratio=0.7 --set workload.txn.concurrency=4 --set workload.txn.size_max=5 --set workload.txn.transactions=150"
  [aw]="--seed 4 --timing program=100000,jitter=3000000 --set nand.channels=2 --set nand.blocks_per_plane=10 --set workload.txn.plain_write_ratio=0.4 --set workload.txn.concurrency=3 --set workload.txn.size_max=3 --set workload.txn.transactions=150"
  [cfc]="--seed 3 --timing late-acks --set nand.channels=2 --set nand.blocks_per_plane=8 --set ftl.interface_mbps=16 --set workload.txn.plain_write_ratio=0.4 --set workload.txn.concurrency=2 --set workload.txn.size_max=3 --set workload.txn.transactions=150"
  [lighttx]="--seed 5 --timing late-acks --set nand.channels=2 --set nand.blocks_per_plane=10 --set ftl.interface_mbps=16 --set workload.txn.plain_write_ratio=0.15 --set workload.txn.concurrency=3 --set workload.txn.size_max=5 --set workload.txn.transactions=150"
)

# check NAME PROTOCOL -> exit code of that check (0 clean, 1 caught, 2 error); logs it on
# stderr.
check() {
  local t0 r
  t0=$(date +%s)
  check_quiet "$@"
  r=$?
  echo "[$(($(date +%s) - t0)) s] rc=$r ${COMMITLAB_MUTANT:-unmutated}: $1 $2" >&2
  return $r
}
check_quiet() {
  local c=$1 p=$2
  case $c in
    A) $B crash --protocol "$p" --timing configured ;;
    B) $B crash --protocol "$p" ;;
    C) $B crash --protocol "$p" --schedules 4096 ;;
    D) $B crash --protocol "$p" --double --timing configured ;;
    S:erase-race)
      $B crash --protocol "$p" --shape erase-race --schedules 8192 >/dev/null 2>&1 || return $?
      $B crash --protocol "$p" --shape erase-race ;;
    S*) $B crash --protocol "$p" --shape "${c#S:}" --schedules 2048 ;;
    # shellcheck disable=SC2086 # the targeted arguments are words
    T) $B crash --protocol "$p" ${TARGETED[$p]} ;;
    V)
      $B crash --variants --protocol "$p" --schedules 1000 >/dev/null 2>&1 || return $?
      $B crash --variants --protocol "$p" --seed 7 ;;
  esac >/dev/null 2>&1
}

# S: the stress shapes, each judged against its own unmutated baseline: a shape the
# protocol cannot run (tc cannot trim) or that an open bug breaks is skipped for it.
SHAPES="long-tx hot-rewrite abort-gc near-full trim-in-flight erase-race"

# V: the protocols with a safety variant (crates/check/src/variants.rs).
has_variants() { case " none tc scc bpcc cfc afc lighttx aw mhl-m " in *" $1 "*) return 0 ;; esac; return 1; }

# base CHECK PROTOCOL -> the unmutated exit code of that check (run once, when needed).
declare -A BASE
base() {
  local key=$2$1
  if [ -z "${BASE[$key]:-}" ]; then
    COMMITLAB_MUTANT= check "$1" "$2"
    BASE[$key]=$?
  fi
  return "${BASE[$key]}"
}
# stop: whether the row's remaining checks are skipped (one already caught the mutant).
stop() { [ "$any" = 1 ] && [ "${ALL_CHECKS:-}" != 1 ]; }

echo "| mutant | protocol | A one timing | B timing profiles | C random timing | D double | S shapes | T targeted | V variants | verdict |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for m in $ORDER; do
  for p in ${SCOPE[$m]}; do
    row="| $m | $p |"
    any=0
    for c in A B C D; do
      if stop; then row="$row - |"; continue; fi
      if ! base $c "$p"; then row="$row n/a |"; continue; fi
      COMMITLAB_MUTANT=$m check $c "$p"; r=$?
      case $r in
        0) row="$row survived |" ;;
        1) row="$row **caught** |"; any=1 ;;
        *) row="$row error $r |" ;;
      esac
    done
    caught_by=""; ran=0
    for s in $SHAPES; do
      if stop; then break; fi
      if ! base "S:$s" "$p"; then continue; fi
      ran=1
      COMMITLAB_MUTANT=$m check "S:$s" "$p"; r=$?
      if [ $r = 1 ]; then caught_by="$caught_by $s"; any=1; fi
    done
    if [ -n "$caught_by" ]; then row="$row **caught** ($caught_by ) |";
    elif stop; then row="$row - |";
    elif [ $ran = 0 ]; then row="$row n/a |";
    else row="$row survived |"; fi
    if [ -z "${TARGETED[$p]:-}" ]; then row="$row - |";
    elif stop; then row="$row - |";
    elif ! base T "$p"; then row="$row n/a |";
    else
      COMMITLAB_MUTANT=$m check T "$p"; r=$?
      case $r in
        0) row="$row survived |" ;;
        1) row="$row **caught** |"; any=1 ;;
        *) row="$row error $r |" ;;
      esac
    fi
    if ! has_variants "$p"; then row="$row - |";
    elif stop; then row="$row - |";
    elif ! base V "$p"; then row="$row n/a |";
    else
      COMMITLAB_MUTANT=$m check V "$p"; r=$?
      case $r in
        0) row="$row survived |" ;;
        1) row="$row **caught** |"; any=1 ;;
        *) row="$row error $r |" ;;
      esac
    fi
    if [ $any = 1 ]; then row="$row caught |"; else row="$row survived |"; fi
    echo "$row"
  done
done
