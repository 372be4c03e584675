#!/usr/bin/env bash
# Records a TPC-C run on a throwaway PostgreSQL as a commitlab page-access trace
# (docs/TRACES.md, "Page-access traces of a real DBMS").
#
#   scripts/pg-record-tpcc.sh [--warehouses W] [--clients C] [--transactions N] [--seed S] [--out F]
#
# Installs PostgreSQL from Debian's packages and psycopg from PyPI when missing, runs the
# server as the unprivileged `postgres` user on a Unix socket in a temporary directory (no TCP
# port), loads TPC-C (scripts/pg_tpcc_record.py load), runs C clients for N transactions,
# stops the server, reads the run's WAL with pg_waldump and writes the trace, gzip-compressed
# when F ends in .gz. The temporary directory is removed at the end.
set -euo pipefail
W=1 C=10 N=3000 SEED=1 OUT=pg-tpcc.trace.gz
while [ $# -gt 0 ]; do
  case "$1" in
    --warehouses) W=$2; shift 2 ;;
    --clients) C=$2; shift 2 ;;
    --transactions) N=$2; shift 2 ;;
    --seed) SEED=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then
  apt-get update && apt-get install -y postgresql postgresql-contrib
fi
python3 -c 'import psycopg' 2>/dev/null || python3 -m pip install 'psycopg[binary]'
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
version=$("$bin/postgres" --version)
tmp=$(mktemp -d /tmp/pgrec.XXXXXX)
chmod 755 "$tmp"
mkdir -p "$tmp/sock"
chown postgres "$tmp" "$tmp/sock"
as_pg() { runuser -u postgres -- "$@"; }
cleanup() {
  as_pg "$bin/pg_ctl" -D "$tmp/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT
as_pg "$bin/initdb" -D "$tmp/data" -A trust -U postgres >/dev/null
# autovacuum off: its WAL would belong to no client transaction and its timing to the
# machine's load; full_page_writes stays on (the records' lengths exclude the images).
as_pg "$bin/pg_ctl" -D "$tmp/data" -l "$tmp/server.log" -w start -o \
  "-c listen_addresses='' -c unix_socket_directories='$tmp/sock' -c autovacuum=off \
   -c shared_buffers=128MB -c max_connections=$((C + 10)) -c fsync=off -c synchronous_commit=off \
   -c max_wal_size=4GB -c wal_keep_size=4GB" >/dev/null
echo "$version on $tmp/sock: loading TPC-C, $W warehouse(s)" >&2
python3 "$here/pg_tpcc_record.py" load --host "$tmp/sock" --warehouses "$W" --seed "$SEED"
echo "running $C clients for $N transactions" >&2
python3 "$here/pg_tpcc_record.py" run --host "$tmp/sock" --warehouses "$W" --clients "$C" \
  --transactions "$N" --seed "$SEED" --log "$tmp/run.jsonl"
start=$(head -1 "$tmp/run.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["start_lsn"])')
end=$(tail -1 "$tmp/run.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["end_lsn"])')
"$bin/pg_waldump" -p "$tmp/data/pg_wal" -s "$start" -e "$end" > "$tmp/waldump.txt" 2>"$tmp/waldump.err" || {
  # pg_waldump ends with an error at the last, partly filled record; anything else is fatal.
  grep -q "invalid record length\|could not find a valid record" "$tmp/waldump.err" || { cat "$tmp/waldump.err" >&2; exit 1; }
}
plain="$tmp/trace.txt"
python3 "$here/pg_tpcc_record.py" build --host "$tmp/sock" --log "$tmp/run.jsonl" \
  --waldump "$tmp/waldump.txt" --out "$plain" \
  --comment "$version, $W warehouse(s), $C clients, $N transactions, seed $SEED"
case "$OUT" in
  *.gz) gzip -9 -n -c "$plain" > "$OUT" ;;
  *) cp "$plain" "$OUT" ;;
esac
echo "wrote $OUT" >&2
