#!/usr/bin/env bash
# The DBMS host's planted bugs through the crash checker, as scripts/mutants.sh runs the
# device's: build commitlab with the `mutants` feature, switch each planted bug on in turn
# (COMMITLAB_MUTANT=name) for every host cell it concerns, and see which checks catch it.
#
# The host's planted bugs are of two kinds: the ones guarded where they act
# (crates/ssd/src/mutant.rs, "Host-level mutants") and the configuration's fault fields,
# which a mutants build plants by name (crates/host/src/planted.rs). A cell is
# strategy/protocol/update[/emulated], as `crash --host all` names it.
#
#   E  exhaustive on the tiny host run: `crash --host S --protocol P --update U`
#   D  the same with crashes inside host recovery (`--double`)
#   R  1,000 random states on the larger run (`--schedules 1000` with the host matrix's
#      larger settings, world::host_run::HOST_CRASH_LARGER), as `crash --host all` runs it
#   K  as R with --double on five more run seeds (2..6): fresh recordings, as `soak --hosts`
#      draws them
#   T  targeted: the CI step whose workload reaches the bug's window, or the soak run that
#      found the bug (TARGETED below), for the mutants that have one; "-" for the others
#
# Each check runs on the unmutated cell first; a check that fails there cannot judge and
# shows n/a. A targeted check that the unmutated run refuses (exit 2: a configuration the
# engine must not run) counts as caught when the mutated run is accepted and violates: the
# refusal was the safety rule. Prints a Markdown table (docs/MUTATION.md).
# Not part of the default tests. Usage: scripts/host-mutants.sh [mutant ...]
set -uo pipefail
cd "$(dirname "$0")/.."

# MUTANTS_BUILT=1: target/release/commitlab-mutants is already built from this tree (two
# campaigns at once, or one after the other, build it once).
if [ "${MUTANTS_BUILT:-}" != 1 ]; then
  cargo build --release -p commitlab --features mutants >&2 || exit 2
  cp target/release/commitlab target/release/commitlab-mutants
  cargo build --release -p commitlab >&2 || exit 2
fi
B=target/release/commitlab-mutants

LARGER="--set host.transactions=300 --set host.clients=4 --set host.bank.accounts=120 --set nand.blocks_per_plane=32"
EMULATED="--set host.pcm.external=\"emulated\" --set nand.blocks_per_plane=10"

declare -A SCOPE=(
  [wal-wrap-over-active]="wal/none/out-of-place"
  [aries-abort-closes]="wal/none/out-of-place"
  [ipa-appends-unordered]="wal/none/ipa wal/none/ipa-block"
  [ipl-sector-before-merge]="wal/none/ipl"
  [host-early-commit-ack]="wal/none/out-of-place device-tx/lighttx/out-of-place cfc-ex/none/out-of-place afc-ex/none/out-of-place wal-pcm/none/out-of-place"
  [host-ipa-skip-crc]="wal/none/ipa wal/none/ipa-block"
  [host-recovery-reuses-log]="wal/none/out-of-place"
  [host-fc-empty-commit-list]="cfc-ex/none/out-of-place afc-ex/none/out-of-place"
  [fc-skip-flag-move]="cfc-ex/none/out-of-place"
  [fc-flag-before-log]="cfc-ex/none/out-of-place afc-ex/none/out-of-place"
  [fc-afc-no-false-move]="afc-ex/none/out-of-place"
  [fc-no-cover]="cfc-ex/none/out-of-place afc-ex/none/out-of-place"
  [fc-no-log-floor]="cfc-ex/none/out-of-place afc-ex/none/out-of-place"
  [fc-master-before-noted]="cfc-ex/none/out-of-place afc-ex/none/out-of-place"
  [fc-master-before-commit-acks]="cfc-ex/none/out-of-place afc-ex/none/out-of-place"
  [device-tx-skip-rewrite]="device-tx/scc/out-of-place device-tx/bpcc/out-of-place"
  [device-tx-reopen-forgets]="device-tx/scc/out-of-place device-tx/bpcc/out-of-place"
  [host-drop-page]="wal/none/out-of-place"
  [restart-no-tail]="wal/none/out-of-place"
  [restart-no-master]="wal/none/out-of-place"
  [restart-no-void]="wal/none/out-of-place"
  [pcm-early-atl-removal]="pcmlogging/none/out-of-place"
  [pcm-paper-pseudo-xid]="pcmlogging/none/out-of-place"
  [pcm-pseudo-xid-of-aborts]="pcmlogging/none/out-of-place"
  [pcm-early-destage-free]="pcmlogging/none/out-of-place pcmlogging/none/out-of-place/emulated wal-pcm/none/out-of-place"
  [pcm-skip-wal-rule]="wal-pcm/none/out-of-place scmlogging/none/out-of-place"
  [pcm-page-free-before-commit-point]="pcmlogging-page/none/out-of-place"
  [pcm-early-relocation-switch]="pcmlogging/none/out-of-place"
  [pcm-flash-ack-at-issue]="pcmlogging/none/out-of-place/emulated wal-pcm/none/out-of-place/emulated scmlogging/none/out-of-place/emulated pcmlogging-page/none/out-of-place/emulated"
)
ORDER="wal-wrap-over-active aries-abort-closes ipa-appends-unordered ipl-sector-before-merge host-early-commit-ack host-ipa-skip-crc host-recovery-reuses-log host-fc-empty-commit-list fc-skip-flag-move fc-flag-before-log fc-afc-no-false-move fc-no-cover fc-no-log-floor fc-master-before-noted fc-master-before-commit-acks device-tx-skip-rewrite device-tx-reopen-forgets host-drop-page pcm-early-atl-removal pcm-paper-pseudo-xid pcm-pseudo-xid-of-aborts pcm-early-destage-free pcm-skip-wal-rule pcm-page-free-before-commit-point pcm-early-relocation-switch pcm-flash-ack-at-issue restart-no-tail restart-no-master restart-no-void"
if [ $# -gt 0 ]; then ORDER="$*"; fi

# T: the CI steps (.ci/run) whose workloads reach these bugs' windows, and for
# fc-master-before-commit-acks the soak's host batch that found it (drawn seed
# 1394702057938630 + batch 32: the larger run, seed 1394702057938662), by mutant (the
# cell's --host/--protocol/--update come first). docs/MUTATION.md, "Planted bugs of the classes no
# default check saw", and docs/DECISIONS.md say how each was found.
declare -A TARGETED=(
  [wal-wrap-over-active]="--set host.log_pages=4 --set host.checkpoint_log_bytes=512 --set host.transactions=100 --set host.bank.updates=16 --set host.bank.accounts=40 --set host.clients=2 --schedules 300"
  [aries-abort-closes]="--set host.bank.rollback_ratio=0.6 --set host.bank.updates=8"
  [ipl-sector-before-merge]="--set host.ipl.layout=\"separate\" --set nand.channels=4 --set host.clients=4 --set host.ipl.log_sectors=4"
  [fc-master-before-commit-acks]="--seed 1394702057938662 --schedules 1000 --set host.transactions=300 --set host.clients=4 --set host.bank.accounts=120 --set nand.blocks_per_plane=32"
  [restart-no-tail]="--run-on --schedules 1000"
  [restart-no-master]="--run-on --schedules 1000 --set host.checkpoint_log_bytes=24576"
  [restart-no-void]="--run-on --schedules 1000"
  [host-drop-page]="--set host.data=\"full\" --set host.workload=\"tpcc\" --set host.tpcc.warehouses=1 --set host.tpcc.customers_per_district=20 --set host.tpcc.items=50 --set host.tpcc.max_txns=200 --set host.transactions=40 --set host.buffer_frames=8 --set host.log_pages=32 --set nand.blocks_per_plane=64 --schedules 1000"
)

# check NAME CELL -> exit code (0 clean, 1 caught, 2 refused or error)
check() {
  local c=$1 cell=$2 m=${3:-}
  local s p u e
  IFS=/ read -r s p u e <<<"$cell"
  local args=(crash --host "$s" --protocol "$p" --update "$u")
  local extra=""
  if [ -n "$e" ]; then extra="$EMULATED"; fi
  case $c in
    E) ;;
    D) args+=(--double) ;;
    R) extra="$extra $LARGER"; args+=(--schedules 1000) ;;
    K)
      for seed in 2 3 4 5 6; do
        # shellcheck disable=SC2086 # the settings are words
        eval "\"$B\" \"\${args[@]}\" $extra $LARGER --schedules 1000 --double --seed $seed" >/dev/null 2>&1
        local r=$?
        if [ $r != 0 ]; then return $r; fi
      done
      return 0 ;;
    T) extra="$extra ${TARGETED[$m]}" ;;
  esac
  # eval: the settings carry quoted TOML strings.
  eval "\"$B\" \"\${args[@]}\" $extra" >/dev/null 2>&1
}

declare -A BASE
for m in $ORDER; do
  for cell in ${SCOPE[$m]}; do
    for c in E D R K; do
      if [ -z "${BASE[$cell$c]:-}" ]; then check $c "$cell"; BASE[$cell$c]=$?; fi
    done
    if [ -n "${TARGETED[$m]:-}" ] && [ -z "${BASE[$cell/T/$m]:-}" ]; then
      check T "$cell" "$m"; BASE[$cell/T/$m]=$?
    fi
  done
done

echo "| planted bug | cell | E exhaustive | D double | R random, larger run | K five run seeds | T targeted | verdict |"
echo "|---|---|---|---|---|---|---|---|"
for m in $ORDER; do
  for cell in ${SCOPE[$m]}; do
    row="| $m | $cell |"
    any=0
    for c in E D R K T; do
      key=$cell$c
      if [ $c = T ]; then
        if [ -z "${TARGETED[$m]:-}" ]; then row="$row - |"; continue; fi
        key=$cell/T/$m
      fi
      base=${BASE[$key]}
      if [ "$base" = 1 ]; then row="$row n/a |"; continue; fi
      COMMITLAB_MUTANT=$m check $c "$cell" "$m"; r=$?
      if [ "$base" = 2 ]; then
        # Refused unmutated: caught if the mutant's run is accepted and violates.
        case $r in
          1) row="$row **caught** (refused unmutated) |"; any=1 ;;
          2) row="$row refused |" ;;
          *) row="$row survived |" ;;
        esac
        continue
      fi
      case $r in
        0) row="$row survived |" ;;
        1) row="$row **caught** |"; any=1 ;;
        *) row="$row error $r |" ;;
      esac
    done
    if [ $any = 1 ]; then row="$row caught |"; else row="$row survived |"; fi
    echo "$row"
  done
done
