#!/usr/bin/env bash
# Real block traces on every protocol: the MySQL and MS SQL Server traces that Debian's
# blkreplay-examples package ships (apt-get install blkreplay-examples), replayed from their
# .gz files as they are (docs/TRACES.md). Prints one table per trace: committed work,
# latency, write amplification, and the read-modify-writes the traces' sub-page writes cost.
#
#   bash examples/traces.sh     # uses target/release/commitlab (or $COMMITLAB), built if absent
set -euo pipefail
cd "$(dirname "$0")/.."
dir=/usr/share/doc/blkreplay-examples/examples/example-load/natural
if [ ! -d "$dir" ]; then
    echo "blkreplay-examples is not installed: apt-get install blkreplay-examples" >&2
    exit 2
fi
bin="${COMMITLAB:-target/release/commitlab}"
[ -x "$bin" ] || cargo build --release -q -p commitlab
for trace in linux-mysql windows-mssql; do
    echo "== $trace"
    # compare runs every protocol on the same device and trace; --set applies to all.
    "$bin" compare --quiet \
        --set workload.kind=trace \
        --set "workload.trace.path=\"$dir/$trace.load.gz\"" \
        --set workload.trace.format=blkreplay \
        --json "/tmp/commitlab-$trace.json"
    # The sub-page writes and the NAND reads they cost, per protocol.
    python3 - "/tmp/commitlab-$trace.json" <<'PY' || true
import json, sys
for r in json.load(open(sys.argv[1])):
    m = r.get("metrics") or {}
    ftl = m.get("ftl") or {}
    print(f'{r["protocol"]:8} {r["status"]:11} partial page writes {ftl.get("partial_writes", "-"):>7}  rmw reads {ftl.get("rmw_reads", "-"):>7}  unmapped reads {ftl.get("unmapped_reads", "-"):>6}')
PY
done
