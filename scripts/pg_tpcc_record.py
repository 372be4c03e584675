#!/usr/bin/env python3
"""Records a TPC-C run on a real PostgreSQL as a commitlab page-access trace.

Used by scripts/pg-record-tpcc.sh, which starts a throwaway server and calls the three
steps in order:

    pg_tpcc_record.py load   --host SOCKDIR --warehouses W --seed S
    pg_tpcc_record.py run    --host SOCKDIR --warehouses W --clients C --transactions N
                             --seed S --log RUN.jsonl
    pg_tpcc_record.py build  --host SOCKDIR --log RUN.jsonl --waldump WALDUMP.txt --out TRACE

What the trace holds (docs/TRACES.md, "Page-access traces of a real DBMS"):

- writes: every block reference of every WAL record PostgreSQL wrote for the transaction
  (pg_waldump's `blkref #k: rel SPC/DB/REL [fork F] blk B`, matched by the transaction id):
  heap tuples inserted, updated, deleted and locked (SELECT ... FOR UPDATE sets xmax and is
  logged), index entries inserted, index page splits, visibility-map bits cleared,
  relation extensions. Each write carries the record's length without its full-page image
  (`len (rec/tot)`), capped at the 8 KiB page.
- reads: the heap page (ctid) of every row each SELECT of the transaction returned. Index
  pages a lookup descends through, heap pages a scan visits and filters out, and catalog
  pages are not in the trace; nor is whether a read hit PostgreSQL's shared buffers (the
  trace is a logical access stream, as Flag Commit §5.1's "data access requests").
- order: within a transaction, statement by statement: a statement's reads, then the WAL
  records its execution wrote (bounded by pg_current_wal_insert_lsn() returned with its
  rows); transactions in the order their clients began them.
- not attributed to any transaction (so not in the trace, counted in the summary):
  WAL records with xid 0 (heap page pruning, hint-bit full-page images, checkpoints).
"""

import argparse
import json
import random
import re
import sys
import threading
import time

import psycopg

LASTNAME_SYLLABLES = ["BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"]

SCHEMA = """
CREATE TABLE warehouse (w_id int PRIMARY KEY, w_name varchar(10), w_street_1 varchar(20),
  w_street_2 varchar(20), w_city varchar(20), w_state char(2), w_zip char(9),
  w_tax numeric(4,4), w_ytd numeric(12,2));
CREATE TABLE district (d_id int, d_w_id int, d_name varchar(10), d_street_1 varchar(20),
  d_street_2 varchar(20), d_city varchar(20), d_state char(2), d_zip char(9),
  d_tax numeric(4,4), d_ytd numeric(12,2), d_next_o_id int, PRIMARY KEY (d_w_id, d_id));
CREATE TABLE customer (c_id int, c_d_id int, c_w_id int, c_first varchar(16), c_middle char(2),
  c_last varchar(16), c_street_1 varchar(20), c_street_2 varchar(20), c_city varchar(20),
  c_state char(2), c_zip char(9), c_phone char(16), c_since timestamp, c_credit char(2),
  c_credit_lim numeric(12,2), c_discount numeric(4,4), c_balance numeric(12,2),
  c_ytd_payment numeric(12,2), c_payment_cnt int, c_delivery_cnt int, c_data varchar(500),
  PRIMARY KEY (c_w_id, c_d_id, c_id));
CREATE TABLE history (h_c_id int, h_c_d_id int, h_c_w_id int, h_d_id int, h_w_id int,
  h_date timestamp, h_amount numeric(6,2), h_data varchar(24));
CREATE TABLE new_order (no_o_id int, no_d_id int, no_w_id int,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id));
CREATE TABLE orders (o_id int, o_d_id int, o_w_id int, o_c_id int, o_entry_d timestamp,
  o_carrier_id int, o_ol_cnt int, o_all_local int, PRIMARY KEY (o_w_id, o_d_id, o_id));
CREATE TABLE order_line (ol_o_id int, ol_d_id int, ol_w_id int, ol_number int, ol_i_id int,
  ol_supply_w_id int, ol_delivery_d timestamp, ol_quantity int, ol_amount numeric(6,2),
  ol_dist_info char(24), PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number));
CREATE TABLE item (i_id int PRIMARY KEY, i_im_id int, i_name varchar(24), i_price numeric(5,2),
  i_data varchar(50));
CREATE TABLE stock (s_i_id int, s_w_id int, s_quantity int, s_dist_01 char(24),
  s_dist_02 char(24), s_dist_03 char(24), s_dist_04 char(24), s_dist_05 char(24),
  s_dist_06 char(24), s_dist_07 char(24), s_dist_08 char(24), s_dist_09 char(24),
  s_dist_10 char(24), s_ytd int, s_order_cnt int, s_remote_cnt int, s_data varchar(50),
  PRIMARY KEY (s_w_id, s_i_id));
"""

# A random alphanumeric string of a length uniform in [lo, hi] (TPC-C §4.3.2.2 a-string).
def astr(lo, hi):
    return (f"substr(repeat(md5(random()::text), 4), 1, {lo} + floor(random() * {hi - lo + 1})::int)")


def nstr(n):
    return f"lpad(floor(random() * 1e{min(n, 15)})::bigint::text, {n}, '0')"


def lastname_sql(expr):
    arr = "array[" + ",".join(f"'{s}'" for s in LASTNAME_SYLLABLES) + "]"
    return (f"({arr})[({expr}) / 100 + 1] || ({arr})[(({expr}) / 10) % 10 + 1] || "
            f"({arr})[({expr}) % 10 + 1]")


def lastname(n):
    return LASTNAME_SYLLABLES[n // 100] + LASTNAME_SYLLABLES[(n // 10) % 10] + LASTNAME_SYLLABLES[n % 10]


# NURand constants of the run (TPC-C §2.1.6); the load uses C_LAST_LOAD.
C_LAST_LOAD = 157
C_LAST_RUN = 223  # |223 - 157| = 66 lies in [65, 119] as §2.1.6.1 requires
C_ID = 259
OL_I_ID = 7911


def nurand(rng, a, x, y, c):
    return (((rng.randint(0, a) | rng.randint(x, y)) + c) % (y - x + 1)) + x


def connect(args):
    return psycopg.connect(host=args.host, dbname="postgres", user="postgres")


def cmd_load(args):
    W = args.warehouses
    with connect(args) as conn:
        conn.autocommit = True
        cur = conn.cursor()
        bs = cur.execute("SHOW block_size").fetchone()[0]
        if bs != "8192":
            sys.exit(f"PostgreSQL's block size is {bs}; the trace format's pages are 8192 bytes")
        cur.execute(f"SELECT setseed({(args.seed % 1000) / 1000.0})")
        cur.execute(SCHEMA)
        cur.execute(f"""INSERT INTO item SELECT i, 1 + floor(random() * 10000)::int, {astr(14, 24)},
            1 + floor(random() * 9900)::numeric / 100,
            CASE WHEN random() < 0.1 THEN 'ORIGINAL' || {astr(18, 42)} ELSE {astr(26, 50)} END
            FROM generate_series(1, 100000) i""")
        cur.execute(f"""INSERT INTO warehouse SELECT w, {astr(6, 10)}, {astr(10, 20)}, {astr(10, 20)},
            {astr(10, 20)}, {astr(2, 2)}, {nstr(4)} || '11111', floor(random() * 2001)::numeric / 10000,
            300000 FROM generate_series(1, {W}) w""")
        cur.execute(f"""INSERT INTO district SELECT d, w, {astr(6, 10)}, {astr(10, 20)}, {astr(10, 20)},
            {astr(10, 20)}, {astr(2, 2)}, {nstr(4)} || '11111', floor(random() * 2001)::numeric / 10000,
            30000, 3001 FROM generate_series(1, {W}) w, generate_series(1, 10) d""")
        nu_last = f"(((floor(random() * 256)::int | floor(random() * 1000)::int) + {C_LAST_LOAD}) % 1000)"
        cur.execute(f"""INSERT INTO customer SELECT c, d, w, {astr(8, 16)}, 'OE',
            CASE WHEN c <= 1000 THEN {lastname_sql('c - 1')} ELSE {lastname_sql(nu_last)} END,
            {astr(10, 20)}, {astr(10, 20)}, {astr(10, 20)}, {astr(2, 2)}, {nstr(4)} || '11111',
            {nstr(16)}, now(), CASE WHEN random() < 0.1 THEN 'BC' ELSE 'GC' END, 50000,
            floor(random() * 5001)::numeric / 10000, -10, 10, 1, 0, {astr(300, 500)}
            FROM generate_series(1, {W}) w, generate_series(1, 10) d, generate_series(1, 3000) c""")
        cur.execute(f"""INSERT INTO history SELECT c, d, w, d, w, now(), 10, {astr(12, 24)}
            FROM generate_series(1, {W}) w, generate_series(1, 10) d, generate_series(1, 3000) c""")
        cur.execute(f"""INSERT INTO orders SELECT o, d, w, c, now(),
            CASE WHEN o < 2101 THEN 1 + floor(random() * 10)::int END, 5 + floor(random() * 11)::int, 1
            FROM (SELECT w, d, o, row_number() OVER (PARTITION BY w, d ORDER BY random()) AS c
                  FROM generate_series(1, {W}) w, generate_series(1, 10) d,
                       generate_series(1, 3000) o) p""")
        cur.execute(f"""INSERT INTO order_line SELECT o_id, o_d_id, o_w_id, n,
            1 + floor(random() * 100000)::int, o_w_id, CASE WHEN o_id < 2101 THEN o_entry_d END, 5,
            CASE WHEN o_id < 2101 THEN 0 ELSE (1 + floor(random() * 999999))::numeric / 100 END,
            {astr(24, 24)} FROM orders, generate_series(1, o_ol_cnt) n""")
        cur.execute("""INSERT INTO new_order SELECT o_id, o_d_id, o_w_id FROM orders
            WHERE o_id >= 2101""")
        dists = ", ".join(astr(24, 24) for _ in range(10))
        cur.execute(f"""INSERT INTO stock SELECT i, w, 10 + floor(random() * 91)::int, {dists}, 0, 0, 0,
            CASE WHEN random() < 0.1 THEN 'ORIGINAL' || {astr(18, 42)} ELSE {astr(26, 50)} END
            FROM generate_series(1, {W}) w, generate_series(1, 100000) i""")
        cur.execute("CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first)")
        cur.execute("CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)")
        cur.execute("VACUUM ANALYZE")
        cur.execute("CHECKPOINT")


class Txn:
    """One client transaction attempt: its statements' reads and WAL bounds."""

    def __init__(self, seq, kind):
        self.seq = seq
        self.kind = kind
        self.xid = None
        # per statement: (list of ctid strings read, lsn bound or None)
        self.stmts = []
        self.end = None


LSN = "pg_current_wal_insert_lsn()::text"
XID = "pg_current_xact_id_if_assigned()::text"


class Client:
    def __init__(self, args, cid, counter, out, lock):
        self.args = args
        self.cid = cid
        self.rng = random.Random(args.seed * 1000 + cid)
        self.w = cid % args.warehouses + 1
        self.counter = counter
        self.out = out
        self.lock = lock
        self.conn = connect(args)
        self.cur = self.conn.cursor()
        self.t = None

    def q(self, sql, params=(), read=True):
        """Runs one statement whose last two columns are (ctid or xid, lsn); records them."""
        self.cur.execute(sql, params)
        rows = self.cur.fetchall()
        ctids, lsn = [], None
        table = re.search(r"FROM (\w+)", sql).group(1) if read else None
        for r in rows:
            if read:
                ctids.append((table, r[-2]))
            elif r[-2] is not None:
                self.t.xid = r[-2]
            lsn = r[-1]
        self.t.stmts.append((ctids, lsn))
        return [r[:-2] for r in rows]

    def w_(self, sql, params=()):
        return self.q(sql, params, read=False)

    def new_order(self):
        rng, w = self.rng, self.w
        d = rng.randint(1, 10)
        c = nurand(rng, 1023, 1, 3000, C_ID)
        n = rng.randint(5, 15)
        rollback = rng.randint(1, 100) == 1
        items = []
        for k in range(n):
            i = nurand(rng, 8191, 1, 100000, OL_I_ID)
            sw = w
            if self.args.warehouses > 1 and rng.randint(1, 100) == 1:
                sw = rng.choice([x for x in range(1, self.args.warehouses + 1) if x != w])
            items.append((i, sw, rng.randint(1, 10)))
        if rollback:
            items[-1] = (100001, items[-1][1], items[-1][2])
        # Stock rows are locked in item order (as DBT-2 does) so two New-Orders do not
        # deadlock on each other's stock rows.
        items.sort()
        self.q("SELECT w_tax, ctid::text, " + LSN + " FROM warehouse WHERE w_id = %s", (w,))
        r = self.w_("UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = %s AND d_id = %s"
                    " RETURNING d_next_o_id - 1, d_tax, " + XID + ", " + LSN, (w, d))
        o_id = r[0][0]
        self.q("SELECT c_discount, c_last, c_credit, ctid::text, " + LSN
               + " FROM customer WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s", (w, d, c))
        all_local = int(all(sw == w for _, sw, _ in items))
        self.w_("INSERT INTO orders VALUES (%s, %s, %s, %s, now(), NULL, %s, %s) RETURNING "
                + XID + ", " + LSN, (o_id, d, w, c, n, all_local))
        self.w_("INSERT INTO new_order VALUES (%s, %s, %s) RETURNING " + XID + ", " + LSN, (o_id, d, w))
        for k, (i, sw, qty) in enumerate(items):
            r = self.q("SELECT i_price, ctid::text, " + LSN + " FROM item WHERE i_id = %s", (i,))
            if not r:
                return "rollback"
            price = r[0][0]
            r = self.q(f"SELECT s_quantity, ctid::text, {LSN} FROM stock"
                       " WHERE s_i_id = %s AND s_w_id = %s FOR UPDATE", (i, sw))
            sq = r[0][0]
            nq = sq - qty if sq - qty >= 10 else sq - qty + 91
            self.w_("UPDATE stock SET s_quantity = %s, s_ytd = s_ytd + %s, s_order_cnt = s_order_cnt + 1,"
                    " s_remote_cnt = s_remote_cnt + %s WHERE s_i_id = %s AND s_w_id = %s RETURNING "
                    + XID + ", " + LSN, (nq, qty, int(sw != w), i, sw))
            self.w_("INSERT INTO order_line VALUES (%s, %s, %s, %s, %s, %s, NULL, %s, %s, %s) RETURNING "
                    + XID + ", " + LSN,
                    (o_id, d, w, k + 1, i, sw, qty, price * qty, "x" * 24))
        return "commit"

    def customer(self, w, d, by_name, for_update):
        rng = self.rng
        lock = " FOR UPDATE" if for_update else ""
        if by_name:
            last = lastname(nurand(rng, 255, 0, 999, C_LAST_RUN))
            r = self.q("SELECT c_id, c_first, ctid::text, " + LSN + " FROM customer WHERE c_w_id = %s"
                       " AND c_d_id = %s AND c_last = %s ORDER BY c_first", (w, d, last))
            if not r:
                return None
            c = r[(len(r) - 1) // 2][0]
        else:
            c = nurand(rng, 1023, 1, 3000, C_ID)
        r = self.q("SELECT c_balance, c_credit, ctid::text, " + LSN + " FROM customer WHERE c_w_id = %s"
                   " AND c_d_id = %s AND c_id = %s" + lock, (w, d, c))
        return c, r[0][1]

    def payment(self):
        rng, w = self.rng, self.w
        d = rng.randint(1, 10)
        cw, cd = w, d
        if self.args.warehouses > 1 and rng.randint(1, 100) <= 15:
            cw = rng.choice([x for x in range(1, self.args.warehouses + 1) if x != w])
            cd = rng.randint(1, 10)
        amount = rng.randint(100, 500000) / 100
        self.w_("UPDATE warehouse SET w_ytd = w_ytd + %s WHERE w_id = %s RETURNING " + XID + ", " + LSN,
                (amount, w))
        self.w_("UPDATE district SET d_ytd = d_ytd + %s WHERE d_w_id = %s AND d_id = %s RETURNING "
                + XID + ", " + LSN, (amount, w, d))
        got = self.customer(cw, cd, rng.randint(1, 100) <= 60, True)
        if got is None:
            return "rollback"
        c, credit = got
        if credit == "BC":
            self.w_("UPDATE customer SET c_balance = c_balance - %s, c_ytd_payment = c_ytd_payment + %s,"
                    " c_payment_cnt = c_payment_cnt + 1, c_data = substr(%s || c_data, 1, 500)"
                    " WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s RETURNING " + XID + ", " + LSN,
                    (amount, amount, f"{c} {cd} {cw} {d} {w} {amount}", cw, cd, c))
        else:
            self.w_("UPDATE customer SET c_balance = c_balance - %s, c_ytd_payment = c_ytd_payment + %s,"
                    " c_payment_cnt = c_payment_cnt + 1 WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s"
                    " RETURNING " + XID + ", " + LSN, (amount, amount, cw, cd, c))
        self.w_("INSERT INTO history VALUES (%s, %s, %s, %s, %s, now(), %s, %s) RETURNING "
                + XID + ", " + LSN, (c, cd, cw, d, w, amount, "h" * 20))
        return "commit"

    def order_status(self):
        rng, w = self.rng, self.w
        d = rng.randint(1, 10)
        got = self.customer(w, d, rng.randint(1, 100) <= 60, False)
        if got is None:
            return "commit"
        c, _ = got
        r = self.q("SELECT o_id, ctid::text, " + LSN + " FROM orders WHERE o_w_id = %s AND o_d_id = %s"
                   " AND o_c_id = %s ORDER BY o_id DESC LIMIT 1", (w, d, c))
        if r:
            self.q("SELECT ol_i_id, ctid::text, " + LSN + " FROM order_line WHERE ol_w_id = %s"
                   " AND ol_d_id = %s AND ol_o_id = %s", (w, d, r[0][0]))
        return "commit"

    def delivery(self):
        rng, w = self.rng, self.w
        carrier = rng.randint(1, 10)
        for d in range(1, 11):
            r = self.q("SELECT no_o_id, ctid::text, " + LSN + " FROM new_order WHERE no_w_id = %s"
                       " AND no_d_id = %s ORDER BY no_o_id LIMIT 1 FOR UPDATE", (w, d))
            if not r:
                continue
            o = r[0][0]
            self.w_("DELETE FROM new_order WHERE no_w_id = %s AND no_d_id = %s AND no_o_id = %s"
                    " RETURNING " + XID + ", " + LSN, (w, d, o))
            r = self.w_("UPDATE orders SET o_carrier_id = %s WHERE o_w_id = %s AND o_d_id = %s"
                        " AND o_id = %s RETURNING o_c_id, " + XID + ", " + LSN, (carrier, w, d, o))
            c = r[0][0]
            r = self.w_("UPDATE order_line SET ol_delivery_d = now() WHERE ol_w_id = %s AND ol_d_id = %s"
                        " AND ol_o_id = %s RETURNING ol_amount, " + XID + ", " + LSN, (w, d, o))
            total = sum(x[0] for x in r)
            self.w_("UPDATE customer SET c_balance = c_balance + %s, c_delivery_cnt = c_delivery_cnt + 1"
                    " WHERE c_w_id = %s AND c_d_id = %s AND c_id = %s RETURNING " + XID + ", " + LSN,
                    (total, w, d, c))
        return "commit"

    def stock_level(self):
        rng, w = self.rng, self.w
        d = (self.cid // self.args.warehouses) % 10 + 1
        threshold = rng.randint(10, 20)
        r = self.q("SELECT d_next_o_id, ctid::text, " + LSN + " FROM district WHERE d_w_id = %s"
                   " AND d_id = %s", (w, d))
        nxt = r[0][0]
        r = self.q("SELECT ol_i_id, ctid::text, " + LSN + " FROM order_line WHERE ol_w_id = %s"
                   " AND ol_d_id = %s AND ol_o_id >= %s AND ol_o_id < %s", (w, d, nxt - 20, nxt))
        items = sorted({x[0] for x in r})
        if items:
            r = self.q("SELECT s_quantity, ctid::text, " + LSN + " FROM stock WHERE s_w_id = %s"
                       " AND s_i_id = ANY(%s)", (w, items))
            sum(1 for x in r if x[0] < threshold)
        return "commit"

    def loop(self):
        kinds = [("new-order", self.new_order, 45), ("payment", self.payment, 43),
                 ("order-status", self.order_status, 4), ("delivery", self.delivery, 4),
                 ("stock-level", self.stock_level, 4)]
        while True:
            x = self.rng.randint(1, 100)
            for name, fn, weight in kinds:
                if x <= weight:
                    break
                x -= weight
            state = self.rng.getstate()
            while True:
                with self.lock:
                    seq = self.counter[0]
                    if seq >= self.args.transactions:
                        return
                    self.counter[0] += 1
                self.t = Txn(seq, name)
                try:
                    end = fn()
                    if end == "commit":
                        self.conn.commit()
                    else:
                        self.conn.rollback()
                    self.t.end = end
                    self.emit()
                    break
                except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure):
                    # PostgreSQL aborted this attempt; it is in the trace as an abort
                    # (its WAL records are there), and the client retries the same inputs.
                    self.conn.rollback()
                    self.t.end = "abort"
                    self.emit()
                    self.rng.setstate(state)

    def emit(self):
        t = self.t
        with self.lock:
            self.out.write(json.dumps({"seq": t.seq, "kind": t.kind, "xid": t.xid,
                                       "stmts": t.stmts, "end": t.end}) + "\n")


def cmd_run(args):
    counter = [0]
    lock = threading.Lock()
    with open(args.log, "w") as out:
        with connect(args) as conn:
            conn.autocommit = True
            start = conn.execute("SELECT " + LSN).fetchone()[0]
        out.write(json.dumps({"start_lsn": start}) + "\n")
        clients = [Client(args, c, counter, out, lock) for c in range(args.clients)]
        threads = [threading.Thread(target=c.loop) for c in clients]
        t0 = time.time()
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        with connect(args) as conn:
            conn.autocommit = True
            end = conn.execute("SELECT " + LSN).fetchone()[0]
        out.write(json.dumps({"end_lsn": end}) + "\n")
    print(f"ran {counter[0]} transactions in {time.time() - t0:.1f} s", file=sys.stderr)


def lsn_int(s):
    hi, lo = s.split("/")
    return (int(hi, 16) << 32) | int(lo, 16)


WAL_RE = re.compile(r"len \(rec/tot\):\s*(\d+)/\s*(\d+), tx:\s*(\d+), lsn: ([0-9A-F]+/[0-9A-F]+)")
BLK_RE = re.compile(r"blkref #\d+: rel (\d+)/(\d+)/(\d+)(?: fork (\w+))? blk (\d+)")


def cmd_build(args):
    meta, txns = {}, []
    with open(args.log) as f:
        for line in f:
            o = json.loads(line)
            if "seq" in o:
                txns.append(o)
            else:
                meta.update(o)
    txns.sort(key=lambda t: t["seq"])
    # WAL records by transaction id: (lsn, bytes, [(relfilenode, fork, block)]).
    by_xid, unattributed = {}, 0
    with open(args.waldump) as f:
        for line in f:
            m = WAL_RE.search(line)
            if not m:
                continue
            rec_len, xid, lsn = int(m.group(1)), int(m.group(3)), lsn_int(m.group(4))
            blocks = [(int(b[2]), b[3] or "main", int(b[4])) for b in BLK_RE.findall(line)]
            if xid == 0:
                unattributed += 1
                continue
            if blocks:
                by_xid.setdefault(str(xid), []).append((lsn, min(max(rec_len, 1), 8192), blocks))
    with connect(args) as conn:
        conn.autocommit = True
        rels = {}
        for filenode, name, kind, oid in conn.execute(
                "SELECT pg_relation_filenode(oid), relname, relkind, oid FROM pg_class"
                " WHERE pg_relation_filenode(oid) IS NOT NULL"):
            rels[filenode] = (name, kind, oid)
        sizes = {}

        def size(oid, fork):
            key = (oid, fork)
            if key not in sizes:
                sizes[key] = conn.execute("SELECT pg_relation_size(%s, %s)", (oid, fork)).fetchone()[0] // 8192
            return sizes[key]

        rel_ids = {}  # (name, fork) -> (id, kind, blocks)

        def rel_id(name, kind, oid, fork):
            key = (name, fork)
            if key not in rel_ids:
                label = name if fork == "main" else f"{name}.{fork}"
                k = "index" if kind == "i" else ("heap" if fork == "main" else "other")
                rel_ids[key] = (len(rel_ids), label, k, size(oid, fork))
            return rel_ids[key][0]

        oid_of = {name: oid for name, _, oid in rels.values()}
        lines, skipped = [], 0
        stats = {"reads": 0, "writes": 0}
        for t in txns:
            recs = sorted(by_xid.get(t["xid"], [])) if t["xid"] else []
            out = [f"txn {t['seq']} {t['kind']}"]

            def write(rec):
                nonlocal skipped
                _, nbytes, blocks = rec
                for filenode, fork, blk in blocks:
                    if filenode not in rels:
                        skipped += 1
                        continue
                    name, kind, oid = rels[filenode]
                    out.append(f"w {t['seq']} {rel_id(name, kind, oid, fork)} {blk} {nbytes}")
                    stats["writes"] += 1

            ri = 0
            for ctids, bound in t["stmts"]:
                last = None
                for table, ctid in ctids:
                    blk = int(ctid.strip("()").split(",")[0])
                    # Rows of one page returned one after another are one page access (an
                    # index scan keeps the heap page pinned from one tuple to the next).
                    if (table, blk) == last:
                        continue
                    last = (table, blk)
                    out.append(f"r {t['seq']} {rel_id(table, 'r', oid_of[table], 'main')} {blk}")
                    stats["reads"] += 1
                b = lsn_int(bound) if bound else None
                while ri < len(recs) and b is not None and recs[ri][0] < b:
                    write(recs[ri])
                    ri += 1
            while ri < len(recs):
                write(recs[ri])
                ri += 1
            out.append(f"{'commit' if t['end'] == 'commit' else 'abort'} {t['seq']}")
            lines.extend(out)
    with open(args.out, "w") as f:
        f.write("commitlab-pagetrace 1\n")
        f.write(f"# PostgreSQL TPC-C: {args.comment}\n")
        f.write(f"# {len(txns)} transactions, {stats['reads']} reads, {stats['writes']} writes; "
                f"{unattributed} WAL records without a transaction id left out\n")
        for (_, _), (i, label, kind, blocks) in sorted(rel_ids.items(), key=lambda kv: kv[1][0]):
            f.write(f"rel {i} {label} {kind} {max(blocks, 1)}\n")
        for line in lines:
            f.write(line + "\n")
    print(f"wrote {args.out}: {len(txns)} transactions, {stats['reads']} reads, {stats['writes']} writes,"
          f" {unattributed} unattributed WAL records, {skipped} block refs of unknown relations",
          file=sys.stderr)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("step", choices=["load", "run", "build"])
    p.add_argument("--host", required=True, help="the server's socket directory")
    p.add_argument("--warehouses", type=int, default=1)
    p.add_argument("--clients", type=int, default=10)
    p.add_argument("--transactions", type=int, default=3000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--log", default="run.jsonl")
    p.add_argument("--waldump", default="waldump.txt")
    p.add_argument("--out", default="pg-tpcc.trace")
    p.add_argument("--comment", default="")
    args = p.parse_args()
    {"load": cmd_load, "run": cmd_run, "build": cmd_build}[args.step](args)


if __name__ == "__main__":
    main()
