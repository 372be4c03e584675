#!/bin/bash
# The host reference set: every host strategy on small runs (TPC-C, TPC-B, TATP, bank, a
# recorded trace, GC) plus `crash --host all --schedules 200`, with wall-clock output removed.
# A change meant to keep results (a speed-up, a split) must leave two builds' outputs equal:
#   scripts/host_refruns.sh OLD_BINARY /tmp/a; scripts/host_refruns.sh NEW_BINARY /tmp/b; diff -r /tmp/a /tmp/b
set -u
B=$1; O=$2; mkdir -p $O
T='--set host.transactions=3000 --set nand.data_mode="tag" --set nand.blocks_per_plane=512'
SMALL='--set host.tpcc.warehouses=2 --set host.tpcc.max_txns=3000'
run() { name=$1; shift; timeout 600 $B run -q "$@" --json $O/$name.json > $O/$name.out 2>&1; echo "rc=$?" >> $O/$name.out
  python3 - "$O/$name.json" <<'PY'
import json,sys
p=sys.argv[1]
try: d=json.load(open(p))
except Exception: sys.exit(0)
def strip(x):
    if isinstance(x,dict): return {k:strip(v) for k,v in x.items() if 'wall' not in k and k not in ('sim_ops_per_wall_s',)}
    if isinstance(x,list): return [strip(v) for v in x]
    return x
json.dump(strip(d),open(p,'w'),indent=1,sort_keys=True)
PY
  sed -i '/wall\|elapsed\| s$/d' $O/$name.out; }
run wal-tpcc     --host wal --set host.workload='"tpcc"' $SMALL $T
run wal-tpcc-s2  --host wal --set host.workload='"tpcc"' $SMALL $T --seed 7
run wal-waitdie  --host wal --set host.workload='"tpcc"' $SMALL $T --set host.deadlock='"wait-die"'
run wal-pagelock --host wal --set host.workload='"tpcc"' $SMALL $T --set host.lock_level='"page"'
run wal-ipl      --host wal --update ipl --set host.workload='"tpcc"' $SMALL $T
run wal-tpcb     --host wal --set host.workload='"tpcb"' $T
run wal-tatp     --host wal --set host.workload='"tatp"' $T
run wal-bank     --host wal $T
run wal-bank-gc --host wal --set host.transactions=30000 --set nand.data_mode="tag"
run wal-full     --host wal --set host.data='"full"' --set host.workload='"tpcc"' --set host.tpcc.warehouses=1 --set host.tpcc.customers_per_district=20 --set host.tpcc.items=50 --set host.tpcc.max_txns=300 --set host.transactions=300
run wal-rec      --host wal --set host.workload='"tpcc"' $SMALL $T --record $O/wal-rec.trace
for p in cfc bpcc afc lighttx scc; do run dtx-$p --host device-tx --protocol $p --set host.workload='"tpcc"' $SMALL $T; done
run cfc-ex --preset flagcommit --host cfc-ex --set nand.append_bytes=8 --set host.workload='"tpcc"' $SMALL $T
run afc-ex --preset flagcommit --host afc-ex --set nand.append_bytes=8 --set host.workload='"tpcc"' $SMALL $T
for s in pcmlogging pcmlogging-page wal-pcm scmlogging; do run $s --host $s --set host.transactions=2000; done
timeout 900 $B crash --host all --schedules 200 > $O/crash-host-all.out 2>&1; echo "rc=$?" >> $O/crash-host-all.out
sed -i -E 's/ \([0-9.]+ s\)$//; /:/!s/ +[0-9.]+$//; /wall/d' $O/crash-host-all.out   # timings are not outputs
sed -i -E "s/^\[[0-9]+\/[0-9]+\] //" $O/crash-host-all.out; sort -o $O/crash-host-all.out $O/crash-host-all.out   # progress lines come in completion order
echo done $O
