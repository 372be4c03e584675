#!/usr/bin/env bash
# The DBMS host's planted bugs through the crash checker, as scripts/mutants.sh runs the
# device's: build commitlab with the `mutants` feature, switch each planted bug on in turn
# (COMMITLAB_MUTANT=name) for every host cell it concerns, and see which checks catch it.
#
# The host's planted bugs are of two kinds: the ones guarded where they act
# (crates/ssd/src/mutant.rs, "Host-level mutants") and the configuration's fault fields,
# which a mutants build plants by name (crates/host/src/planted.rs, FAULTS). A cell is
# strategy/protocol/update[/extra], as `crash --host all` names it; extra is `emulated` (the
# PCM strategies over the emulated SSD, HOST_CRASH_EMULATED) or `separate-log` (the WAL log on
# its own device, `host.log_device = "separate"`).
#
# The checks, in the order they run. E, R and T are the CI steps' own commands (.ci/run,
# fixed seeds); D and K are not run by CI.
#   E  CI host matrix, exhaustive phase: `crash --host S --protocol P --update U` (tiny run)
#   R  CI host matrix, random phase: `--schedules 1000 --double` on the larger run
#      (world::host_run::HOST_CRASH_LARGER), as `crash --host all --schedules 1000` runs it
#   T  targeted: the CI step whose workload reaches the bug's window (TARGETED below), or the
#      soak run that found the bug; "-" for mutants without one
#   D  exhaustive on the tiny run with crashes inside host recovery (`--double`)
#   K  as R on five more run seeds (2..6): fresh recordings, as `soak --hosts` draws them
# A cell's checks stop at the first that catches the mutant (later ones show "-"); with
# ALL_CHECKS=1 every check runs. A caught cell shows the violating states, the states
# checked and the first violating state's number (states are numbered from 0; `--state K`
# replays it; for K, the seed that caught it).
#
# Each check runs on the unmutated cell first (once per cell and check, only when a mutant
# needs it); a check that fails there cannot judge and shows n/a. A targeted check that the
# unmutated run refuses (exit 2: a configuration the engine must not run) counts as caught
# when the mutated run is accepted and violates: the refusal was the safety rule. Prints a
# Markdown table (docs/MUTATION.md) on stdout and each command with its result on stderr.
# Not part of the default tests. Usage: scripts/host-mutants.sh [mutant ...] (any subset of
# ORDER, by name; an unknown name exits 2). MUTANTS_BUILT=1 reuses
# target/release/commitlab-mutants.
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
declare -A EXTRA=(
  [emulated]="--set host.pcm.external=\"emulated\" --set nand.blocks_per_plane=10"
  [separate-log]="--set host.log_device=\"separate\""
)

declare -A SCOPE=(
  [wal-wrap-over-active]="wal/none/out-of-place"
  [aries-abort-closes]="wal/none/out-of-place"
  [ipa-appends-unordered]="wal/none/ipa wal/none/ipa-block"
  [ipl-sector-before-merge]="wal/none/ipl"
  [host-early-commit-ack]="wal/none/out-of-place device-tx/lighttx/out-of-place cfc-ex/none/out-of-place afc-ex/none/out-of-place wal-pcm/none/out-of-place"
  [host-ipa-skip-crc]="wal/none/ipa wal/none/ipa-block"
  [host-log-acked-at-issue]="wal/none/out-of-place/separate-log wal/none/ipl/separate-log"
  [host-recovery-reuses-log]="wal/none/out-of-place"
  [host-fc-empty-commit-list]="cfc-ex/none/out-of-place afc-ex/none/out-of-place"
  [fc-skip-flag-move]="cfc-ex/none/out-of-place"
  [fc-flag-before-log]="cfc-ex/none/out-of-place afc-ex/none/out-of-place"
  [fc-afc-no-false-move]="afc-ex/none/out-of-place"
  [fc-no-cover]="cfc-ex/none/out-of-place afc-ex/none/out-of-place"
  [fc-no-log-floor]="cfc-ex/none/out-of-place afc-ex/none/out-of-place"
  [fc-master-before-noted]="cfc-ex/none/out-of-place afc-ex/none/out-of-place"
  [fc-master-before-commit-acks]="cfc-ex/none/out-of-place afc-ex/none/out-of-place"
  [fc-restart-no-flags]="cfc-ex/none/out-of-place afc-ex/none/out-of-place"
  [fc-restart-no-dirty]="cfc-ex/none/out-of-place afc-ex/none/out-of-place"
  [device-tx-skip-rewrite]="device-tx/scc/out-of-place device-tx/bpcc/out-of-place"
  [device-tx-reopen-forgets]="device-tx/scc/out-of-place device-tx/bpcc/out-of-place"
  [host-drop-page]="wal/none/out-of-place"
  [restart-no-tail]="wal/none/out-of-place"
  [restart-no-master]="wal/none/out-of-place"
  [restart-no-void]="wal/none/out-of-place"
  [restart-ipa-stale-area]="wal/none/ipa"
  [restart-uncommitted]="device-tx/cfc/out-of-place device-tx/scc/out-of-place device-tx/bpcc/out-of-place"
  [restart-ipl-erase-early]="wal/none/ipl"
  [pcm-early-atl-removal]="pcmlogging/none/out-of-place"
  [pcm-paper-pseudo-xid]="pcmlogging/none/out-of-place"
  [pcm-pseudo-xid-of-aborts]="pcmlogging/none/out-of-place"
  [pcm-early-destage-free]="pcmlogging/none/out-of-place pcmlogging/none/out-of-place/emulated wal-pcm/none/out-of-place"
  [pcm-skip-wal-rule]="wal-pcm/none/out-of-place scmlogging/none/out-of-place"
  [pcm-page-free-before-commit-point]="pcmlogging-page/none/out-of-place"
  [pcm-early-relocation-switch]="pcmlogging/none/out-of-place"
  [restart-pcm-keep-replaced]="pcmlogging/none/out-of-place pcmlogging-page/none/out-of-place"
  [restart-pcm-atl-first]="pcmlogging/none/out-of-place pcmlogging-page/none/out-of-place"
  [restart-pcm-page-forget-bitmap]="pcmlogging-page/none/out-of-place"
  [restart-pcm-xid-from-one]="pcmlogging/none/out-of-place"
  [pcm-flash-ack-at-issue]="pcmlogging/none/out-of-place/emulated wal-pcm/none/out-of-place/emulated scmlogging/none/out-of-place/emulated pcmlogging-page/none/out-of-place/emulated"
)
ORDER="wal-wrap-over-active aries-abort-closes ipa-appends-unordered ipl-sector-before-merge host-early-commit-ack host-ipa-skip-crc host-log-acked-at-issue host-recovery-reuses-log host-fc-empty-commit-list fc-skip-flag-move fc-flag-before-log fc-afc-no-false-move fc-no-cover fc-no-log-floor fc-master-before-noted fc-master-before-commit-acks device-tx-skip-rewrite device-tx-reopen-forgets host-drop-page pcm-early-atl-removal pcm-paper-pseudo-xid pcm-pseudo-xid-of-aborts pcm-early-destage-free pcm-skip-wal-rule pcm-page-free-before-commit-point pcm-early-relocation-switch pcm-flash-ack-at-issue restart-no-tail restart-no-master restart-no-void restart-ipa-stale-area restart-uncommitted restart-ipl-erase-early fc-restart-no-flags fc-restart-no-dirty restart-pcm-keep-replaced restart-pcm-atl-first restart-pcm-xid-from-one restart-pcm-page-forget-bitmap"
if [ $# -gt 0 ]; then
  for m in "$@"; do
    if [ -z "${SCOPE[$m]:-}" ]; then
      echo "unknown host mutant '$m'; known: $ORDER" >&2
      exit 2
    fi
  done
  ORDER="$*"
fi

# T: the CI steps (.ci/run; host-drop-page's is the README's TPC-C command, which CI runs
# through crates/cli/tests/readme.rs) whose workloads reach these bugs' windows, and for
# fc-master-before-commit-acks the soak's host batch that found it (drawn seed
# 1394702057938630 + batch 32: the larger run, seed 1394702057938662), which CI runs as a
# step of its own, by mutant (the cell's
# --host/--protocol/--update and extra settings come first). docs/MUTATION.md says how each
# was found.
# The CI steps' shapes that serve two planted bugs each (.ci/run): Flag Commit's deferred
# checkpoint (§4.3; host-fc-empty-commit-list has its own run-on step, found by a search
# over seeds with the mutant on), device transactions over SCC/BPCC on TPC-C with stolen pages updated
# again, PCMLogging's wear leveling (§4.2) on TPC-C with wait-die restarts.
FC_DEFERRING="--seed 0 --set nand.blocks_per_plane=32 --set host.log_pages=32 --set host.clients=6 --set host.checkpoint_log_bytes=300 --set host.bank.accounts=8"
DEVICE_TX_STEALS="--seed 3 --schedules 300 --set host.workload=\"tpcc\" --set host.tpcc.warehouses=1 --set host.tpcc.customers_per_district=20 --set host.tpcc.items=50 --set host.tpcc.max_txns=200 --set host.tpcc.delta_abort=0.1 --set host.transactions=60 --set host.buffer_frames=10 --set nand.blocks_per_plane=64"
PCM_WEAR="--seed 2 --schedules 300 --set host.workload=\"tpcc\" --set host.tpcc.warehouses=1 --set host.tpcc.customers_per_district=20 --set host.tpcc.items=50 --set host.tpcc.max_txns=200 --set host.tpcc.delta_abort=0.1 --set host.transactions=40 --set host.clients=8 --set host.pcm.dram_bytes=73728 --set host.pcm.pcm_bytes=16384 --set host.pcm.wear_delta=2"
declare -A TARGETED=(
  [wal-wrap-over-active]="--set host.log_pages=4 --set host.checkpoint_log_bytes=512 --set host.transactions=100 --set host.bank.updates=16 --set host.bank.accounts=40 --set host.clients=2 --schedules 300"
  [aries-abort-closes]="--set host.bank.rollback_ratio=0.6 --set host.bank.updates=8"
  [ipl-sector-before-merge]="--set host.ipl.layout=\"separate\" --set nand.channels=4 --set host.clients=4 --set host.ipl.log_sectors=4"
  [host-log-acked-at-issue]="--schedules 1000 --double"
  [fc-master-before-commit-acks]="--seed 1394702057938662 --schedules 1000 --set host.transactions=300 --set host.clients=4 --set host.bank.accounts=120 --set nand.blocks_per_plane=32"
  [host-fc-empty-commit-list]="$FC_DEFERRING --set host.page_bytes=2048 --set nand.planes_per_die=4"
  [fc-master-before-noted]="$FC_DEFERRING"
  [device-tx-skip-rewrite]="$DEVICE_TX_STEALS"
  [device-tx-reopen-forgets]="$DEVICE_TX_STEALS"
  [pcm-paper-pseudo-xid]="$PCM_WEAR"
  [pcm-pseudo-xid-of-aborts]="$PCM_WEAR"
  [pcm-early-relocation-switch]="--set host.pcm.relocate_every=8"
  [restart-no-tail]="--run-on --schedules 1000"
  [restart-no-master]="--run-on --schedules 1000 --set host.checkpoint_log_bytes=24576"
  [restart-no-void]="--run-on --schedules 20000 --set host.log_record_bytes=400 --set host.log_pages=128 --set nand.channels=2 --set host.clients=4 --set host.transactions=6"
  [restart-ipa-stale-area]="--run-on --schedules 1000"
  [restart-uncommitted]="--run-on --schedules 1000"
  [restart-ipl-erase-early]="--run-on --schedules 1000"
  [fc-restart-no-flags]="--run-on --schedules 1000"
  [fc-restart-no-dirty]="--run-on --schedules 1000"
  [restart-pcm-keep-replaced]="--run-on --schedules 1000 --seed 2"
  [restart-pcm-atl-first]="--run-on --schedules 1000 --seed 2"
  [restart-pcm-xid-from-one]="--run-on --schedules 1000 --seed 2"
  [restart-pcm-page-forget-bitmap]="--run-on --schedules 1000 --seed 2"
  [host-drop-page]="--set host.data=\"full\" --set host.workload=\"tpcc\" --set host.tpcc.warehouses=1 --set host.tpcc.customers_per_district=20 --set host.tpcc.items=50 --set host.tpcc.max_txns=200 --set host.transactions=40 --set host.buffer_frames=8 --set host.log_pages=32 --set nand.blocks_per_plane=64 --schedules 1000"
)

OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT

# The command line of check C on CELL (for mutant M's targeted entry), seed SEED.
cmdline() {
  local c=$1 cell=$2 m=$3 seed=$4
  local s p u e
  IFS=/ read -r s p u e <<<"$cell"
  local cmd="crash --host $s --protocol $p --update $u"
  if [ -n "$e" ]; then cmd="$cmd ${EXTRA[$e]}"; fi
  case $c in
    E) ;;
    R | K)
      # The matrix adds HOST_CRASH_LARGER to every cell; a PCM strategy over a disk does not
      # read the flash geometry, and a single-cell `crash` refuses a key its run does not
      # read, so those cells take the larger run without it (the same run).
      local larger=$LARGER
      case $s/$e in
        pcmlogging/ | pcmlogging-page/ | wal-pcm/ | scmlogging/) larger=${LARGER% --set nand.blocks_per_plane=32} ;;
      esac
      cmd="$cmd $larger --schedules 1000 --double --seed $seed" ;;
    T) cmd="$cmd ${TARGETED[$m]}" ;;
    D) cmd="$cmd --double" ;;
  esac
  echo "$cmd"
}

# run CMDLINE -> exit code (0 clean, 1 caught, 2 refused or error); RES: the result's words.
RES=""
run() {
  local t0 t1 r n v k
  t0=$(date +%s)
  # eval: the settings carry quoted TOML strings.
  eval "\"$B\" $1" >"$OUT" 2>&1
  r=$?
  t1=$(date +%s)
  n=$(sed -n 's/^crash states checked: \([0-9]*\), violations: \([0-9]*\).*/\1/p' "$OUT" | tail -1)
  v=$(sed -n 's/^crash states checked: \([0-9]*\), violations: \([0-9]*\).*/\2/p' "$OUT" | tail -1)
  k=$(sed -n '/^first violation/{n;s/^state \([0-9]*\) .*/\1/p;}' "$OUT" | head -1)
  case $r in
    0) RES="${n:-?} states" ;;
    1) RES="${v:-?} of ${n:-?}, first at state ${k:-?}" ;;
    *) RES=$(grep -m1 -i 'error\|refus' "$OUT" | cut -c1-100) ;;
  esac
  echo "[$((t1 - t0)) s] rc=$r ${COMMITLAB_MUTANT:-unmutated}: commitlab $1 -> $RES" >&2
  return $r
}

# check C CELL M -> exit code; RES as run's (for K, "seed S: " first).
check() {
  local c=$1 cell=$2 m=$3
  if [ "$c" = K ]; then
    local seed r
    for seed in 2 3 4 5 6; do
      run "$(cmdline K "$cell" "$m" $seed)"
      r=$?
      if [ $r != 0 ]; then RES="seed $seed: $RES"; return $r; fi
    done
    RES="5 seeds clean"
    return 0
  fi
  run "$(cmdline "$c" "$cell" "$m" 1)"
}

declare -A BASE
base() {
  local c=$1 cell=$2 m=$3 key=$2/$1
  if [ "$c" = T ]; then key=$cell/T/$m; fi
  if [ -z "${BASE[$key]:-}" ]; then
    COMMITLAB_MUTANT= check "$c" "$cell" "$m"
    BASE[$key]=$?
  fi
  return "${BASE[$key]}"
}

echo "| planted bug | cell | E CI matrix, exhaustive | R CI matrix, random | T targeted | D double, exhaustive | K five run seeds | verdict |"
echo "|---|---|---|---|---|---|---|---|"
for m in $ORDER; do
  for cell in ${SCOPE[$m]}; do
    row="| $m | $cell |"
    caught=""
    for c in E R T D K; do
      if [ $c = T ] && [ -z "${TARGETED[$m]:-}" ]; then row="$row - |"; continue; fi
      if [ -n "$caught" ] && [ "${ALL_CHECKS:-}" != 1 ]; then row="$row - |"; continue; fi
      base $c "$cell" "$m"
      b=$?
      if [ $b = 1 ]; then row="$row n/a |"; continue; fi
      COMMITLAB_MUTANT=$m check $c "$cell" "$m"
      r=$?
      if [ $b = 2 ]; then
        # Refused unmutated: caught if the mutant's run is accepted and violates.
        case $r in
          1) row="$row **caught** (refused unmutated; $RES) |"; caught=${caught:-$c} ;;
          2) row="$row refused |" ;;
          *) row="$row survived ($RES) |" ;;
        esac
        continue
      fi
      case $r in
        0) row="$row survived ($RES) |" ;;
        1) row="$row **caught** ($RES) |"; caught=${caught:-$c} ;;
        *) row="$row error $r |" ;;
      esac
    done
    case $caught in
      E | R | T) row="$row caught by CI ($caught) |" ;;
      D | K) row="$row caught outside CI ($caught) |" ;;
      *) row="$row survived |" ;;
    esac
    echo "$row"
  done
done
