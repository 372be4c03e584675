//! Page-access traces of a real DBMS: each transaction's reads and writes of (relation,
//! block), with its begin and its commit or abort, as recorded from PostgreSQL running TPC-C
//! (`scripts/pg-record-tpcc.sh`; Flag Commit §5.1 drove its simulator with TPC-C "data
//! access requests" recorded from PostgreSQL 8.4 under DBT-2). Read here, replayed through
//! the host engine as a `TxnSource` (`host.workload = "trace"`), or converted to a device
//! command stream (`--trace-format pages`).
//!
//! Format (text, one record a line, fields separated by white space; docs/TRACES.md):
//!
//! ```text
//! commitlab-pagetrace 1               header: the format's name and version (first line)
//! rel 0 stock heap 4200               relation id (0, 1, 2, … in order), name, kind, blocks
//! rel 1 stock_pkey index 830          kind: heap, index or other (free-space map, …)
//! txn 17 new-order                    transaction 17 begins; its type
//! r 17 0 1234                         17 reads block 1234 of relation 0
//! w 17 1 77 54                        17 writes block 77 of relation 1, changing 54 bytes
//! commit 17                           (or: abort 17)
//! ```
//!
//! Rules: `#` starts a comment line and blank lines are skipped; every `rel` comes before
//! the first `txn`; a relation has at least one block and every access names a block below
//! it; a transaction's id is a non-negative integer used once; it is accessed only between
//! its `txn` and its end, and ends (commit or abort) before the file does; a write changes
//! 1 to 8192 bytes (the page). Transactions may interleave; they replay in the order of
//! their `txn` lines. A malformed line is an error `file:line: problem`.
//!
//! Mapping onto the host's data model (`db::Schema`): each relation is a table of
//! `blocks` 8 KiB pages (PostgreSQL's block size is the engine's DB page) with one record
//! per page, loaded from the start, so a page access is a record access: a read is
//! `RecOp::Read` of the page's record, a write `RecOp::Update` of its first `bytes` bytes
//! (`FieldOp::Fill`). Record-level locks are then page locks; an aborted transaction rolls
//! back after its accesses. Not in the model: tuple positions inside a page (the trace does
//! not record them), relation extension (a block that exists at the end of the recording
//! exists, loaded, from the start of the replay).

use crate::db::{
    Change, FieldOp, RecOp, Rid, Schema, TableDef, TableId, TableKind, TxnSource, TxnSpec,
    DB_PAGE_BYTES,
};
use crate::txn::{Timed, TxCmd};
use crate::{werr, WorkloadError};
use serde::{Deserialize, Serialize};
use sim::{Lpn, Rng, TxId};
use std::collections::HashMap;
use std::io::BufRead;

/// The header's first field.
pub const FORMAT_NAME: &str = "commitlab-pagetrace";
/// The version this reader reads.
pub const FORMAT_VERSION: u32 = 1;

/// The `[host.trace]` section: the page-access trace `host.workload = "trace"` replays.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PageTraceConfig {
    /// The trace file (plain or gzip); `commitlab run --host S --trace F` sets it.
    pub path: String,
}

/// What a relation's pages hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelKind {
    Heap,
    Index,
    /// Another fork or relation (free-space map, visibility map, TOAST, …).
    Other,
}

impl RelKind {
    pub fn name(self) -> &'static str {
        match self {
            RelKind::Heap => "heap",
            RelKind::Index => "index",
            RelKind::Other => "other",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relation {
    pub name: String,
    pub kind: RelKind,
    pub blocks: u32,
}

/// One page access of a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    Read { rel: u16, block: u32 },
    Write { rel: u16, block: u32, bytes: u16 },
}

impl Access {
    pub fn page(self) -> (u16, u32) {
        match self {
            Access::Read { rel, block } | Access::Write { rel, block, .. } => (rel, block),
        }
    }
}

/// One recorded transaction, complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceTxn {
    pub id: u64,
    pub kind: &'static str,
    pub accesses: Vec<Access>,
    pub aborted: bool,
}

/// A parsed page-access trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageTrace {
    pub relations: Vec<Relation>,
    /// In the order of their `txn` lines.
    pub txns: Vec<TraceTxn>,
}

/// The transaction types a trace names, as the `&'static str` a `TxnSpec` carries. Other
/// names replay as "other" (their counts are then merged in per-type reports).
const KINDS: &[&str] = &[
    "new-order",
    "payment",
    "order-status",
    "delivery",
    "stock-level",
    "tpcb",
    "other",
];

fn kind_static(k: &str) -> &'static str {
    KINDS.iter().copied().find(|&s| s == k).unwrap_or("other")
}

/// Reads the trace at `path` (plain or gzip).
pub fn read(path: &str) -> Result<PageTrace, WorkloadError> {
    parse(path, crate::blocktrace::open(path)?)
}

/// Reads only the head of the trace at `path`: its header and relations, which every `rel`
/// line gives before the first transaction, so reading stops at the first `txn` line. The
/// database's size is known from them alone (`PageTrace::schema_of`): sizing a device for a
/// replay reads a few lines, not the whole trace. The lines read are checked as `read`
/// checks them; the transactions are not read, so a fault after the relations is found by
/// `read` only.
pub fn read_relations(path: &str) -> Result<Vec<Relation>, WorkloadError> {
    parse_until(path, crate::blocktrace::open(path)?, Until::FirstTxn).map(|t| t.relations)
}

/// How far `parse_until` reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Until {
    End,
    FirstTxn,
}

/// Parses a trace; `name` prefixes error messages.
pub fn parse(name: &str, input: impl BufRead) -> Result<PageTrace, WorkloadError> {
    parse_until(name, input, Until::End)
}

fn parse_until(
    name: &str,
    mut input: impl BufRead,
    until: Until,
) -> Result<PageTrace, WorkloadError> {
    let mut relations: Vec<Relation> = Vec::new();
    let mut txns: Vec<TraceTxn> = Vec::new();
    // id -> (index in txns, line of its `txn`, open?)
    let mut state: HashMap<u64, (usize, usize, bool)> = HashMap::new();
    let mut open = 0usize;
    let mut header = false;
    // One line buffer and a fixed array of fields, reused: a trace has tens of lines per
    // transaction.
    let mut line = String::new();
    let mut n = 0usize;
    // The transaction the previous line named: most lines name the one just begun.
    let mut last: Option<(u64, usize)> = None;
    // The accesses of `last` not yet moved to it: moved in one allocation of their exact
    // size when it ends or another transaction's line comes, instead of growing each
    // transaction's vector line by line (a recorder writes each transaction's lines
    // together, so there is one move per transaction).
    let mut scratch: Vec<Access> = Vec::new();
    let flush =
        |txns: &mut Vec<TraceTxn>, last: Option<(u64, usize)>, scratch: &mut Vec<Access>| {
            if let Some((_, ix)) = last {
                if !scratch.is_empty() {
                    txns[ix].accesses.extend_from_slice(scratch);
                    scratch.clear();
                }
            }
        };
    loop {
        line.clear();
        let got = input
            .read_line(&mut line)
            .map_err(|e| werr(format!("{name}:{}: {e}", n + 1)))?;
        if got == 0 {
            break;
        }
        n += 1;
        let t = line.trim();
        let bad = |what: String| werr(format!("{name}:{n}: {what}"));
        if !header {
            let f: Vec<&str> = t.split_ascii_whitespace().collect();
            if f.first() != Some(&FORMAT_NAME) || f.len() != 2 {
                return Err(bad(format!(
                    "expected the header '{FORMAT_NAME} {FORMAT_VERSION}' on the first line, found '{t}'"
                )));
            }
            if f[1] != FORMAT_VERSION.to_string() {
                return Err(bad(format!(
                    "format version '{}' is not supported (this reader reads version {FORMAT_VERSION})",
                    f[1]
                )));
            }
            header = true;
            continue;
        }
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let mut f: [&str; 6] = [""; 6];
        let mut nf = 0usize;
        for w in t.split_ascii_whitespace() {
            if nf < f.len() {
                f[nf] = w;
            }
            nf += 1;
        }
        let fields = |k: usize, shape: &str| {
            if nf == k {
                Ok(())
            } else {
                Err(bad(format!(
                    "'{}' takes {} fields ({shape}), found {}",
                    f[0], k, nf
                )))
            }
        };
        let num = |k: usize, what: &str| -> Result<u64, WorkloadError> {
            f[k].parse::<u64>()
                .map_err(|_| bad(format!("{what} '{}' is not a non-negative integer", f[k])))
        };
        match f[0] {
            "rel" => {
                fields(5, "rel id name kind blocks")?;
                if !txns.is_empty() {
                    return Err(bad(
                        "relation declared after the first transaction (every 'rel' comes first)"
                            .into(),
                    ));
                }
                let id = num(1, "relation id")?;
                if id != relations.len() as u64 {
                    return Err(bad(format!(
                        "relation id {id} out of order (expected {})",
                        relations.len()
                    )));
                }
                if relations.len() >= u16::MAX as usize {
                    return Err(bad(format!("more than {} relations", u16::MAX - 1)));
                }
                let kind = match f[3] {
                    "heap" => RelKind::Heap,
                    "index" => RelKind::Index,
                    "other" => RelKind::Other,
                    k => {
                        return Err(bad(format!(
                            "relation kind '{k}' is none of heap, index, other"
                        )))
                    }
                };
                let blocks = num(4, "blocks")?;
                if blocks == 0 || blocks > u32::MAX as u64 {
                    return Err(bad(format!(
                        "relation {} has {blocks} blocks (1 to {})",
                        f[2],
                        u32::MAX
                    )));
                }
                relations.push(Relation {
                    name: f[2].to_string(),
                    kind,
                    blocks: blocks as u32,
                });
            }
            "txn" if until == Until::FirstTxn => {
                return Ok(PageTrace {
                    relations,
                    txns: Vec::new(),
                })
            }
            "txn" => {
                fields(3, "txn id type")?;
                let id = num(1, "transaction id")?;
                if let Some(&(_, at, _)) = state.get(&id) {
                    return Err(bad(format!(
                        "transaction {id} already began (line {at}); ids are used once"
                    )));
                }
                state.insert(id, (txns.len(), n, true));
                open += 1;
                txns.push(TraceTxn {
                    id,
                    kind: kind_static(f[2]),
                    accesses: Vec::new(),
                    aborted: false,
                });
            }
            "r" | "w" => {
                let write = f[0] == "w";
                if write {
                    fields(5, "w txn rel block bytes")?;
                } else {
                    fields(4, "r txn rel block")?;
                }
                let id = num(1, "transaction id")?;
                let cached = last.filter(|&(l, _)| l == id).map(|(_, ix)| ix);
                let ix = match cached
                    .map(|ix| (ix, 0, true))
                    .or_else(|| state.get(&id).copied())
                {
                    None => return Err(bad(format!("transaction {id} has not begun"))),
                    Some((_, at, false)) => {
                        return Err(bad(format!(
                            "transaction {id} (begun on line {at}) has already ended"
                        )))
                    }
                    Some((ix, _, true)) => ix,
                };
                if cached.is_none() {
                    flush(&mut txns, last, &mut scratch);
                }
                last = Some((id, ix));
                let rel = num(2, "relation")?;
                let Some(r) = relations.get(rel as usize) else {
                    return Err(bad(format!(
                        "relation {rel} is not declared ({} relations)",
                        relations.len()
                    )));
                };
                let block = num(3, "block")?;
                if block >= r.blocks as u64 {
                    return Err(bad(format!(
                        "block {block} is beyond relation {} ({} blocks)",
                        r.name, r.blocks
                    )));
                }
                let (rel, block) = (rel as u16, block as u32);
                let a = if write {
                    let bytes = num(4, "bytes")?;
                    if bytes == 0 || bytes > DB_PAGE_BYTES as u64 {
                        return Err(bad(format!(
                            "a write changes 1 to {DB_PAGE_BYTES} bytes, found {bytes}"
                        )));
                    }
                    Access::Write {
                        rel,
                        block,
                        bytes: bytes as u16,
                    }
                } else {
                    Access::Read { rel, block }
                };
                scratch.push(a);
            }
            "commit" | "abort" => {
                fields(2, "commit|abort txn")?;
                let id = num(1, "transaction id")?;
                let ix = match state.get_mut(&id) {
                    None => return Err(bad(format!("transaction {id} has not begun"))),
                    Some((_, at, false)) => {
                        return Err(bad(format!(
                            "transaction {id} (begun on line {at}) has already ended"
                        )))
                    }
                    Some((ix, _, o)) => {
                        *o = false;
                        *ix
                    }
                };
                open -= 1;
                txns[ix].aborted = f[0] == "abort";
                flush(&mut txns, last, &mut scratch);
                last = None;
            }
            other => {
                return Err(bad(format!(
                    "unknown record '{other}' (rel, txn, r, w, commit, abort)"
                )))
            }
        }
    }
    flush(&mut txns, last, &mut scratch);
    if !header {
        return Err(werr(format!(
            "{name}:1: empty file (expected the header '{FORMAT_NAME} {FORMAT_VERSION}')"
        )));
    }
    if until == Until::FirstTxn {
        // No transaction: `read` refuses the file; its relations are all there is to size.
        return Ok(PageTrace {
            relations,
            txns: Vec::new(),
        });
    }
    if open > 0 {
        // Name the first transaction left open, by its begin line.
        let at = txns
            .iter()
            .filter_map(|t| state.get(&t.id).filter(|s| s.2).map(|s| (s.1, t.id)))
            .min();
        if let Some((line, id)) = at {
            return Err(werr(format!(
                "{name}:{line}: transaction {id} never ends (no commit or abort before the end of the file)"
            )));
        }
    }
    if txns.is_empty() {
        return Err(werr(format!("{name}: the trace holds no transactions")));
    }
    Ok(PageTrace { relations, txns })
}

impl PageTrace {
    /// The host schema: one table per relation, one 8 KiB record per page.
    pub fn schema(&self) -> Schema {
        Self::schema_of(&self.relations)
    }

    /// The host schema of a trace with these relations (`schema`; `read_relations` gives
    /// them without reading the transactions).
    pub fn schema_of(relations: &[Relation]) -> Schema {
        Schema {
            name: "pagetrace",
            page_bytes: DB_PAGE_BYTES,
            tables: relations
                .iter()
                .map(|r| TableDef {
                    name: r.kind.name(),
                    kind: match r.kind {
                        RelKind::Index => TableKind::Index,
                        _ => TableKind::Heap,
                    },
                    record_bytes: DB_PAGE_BYTES as u16,
                    records_per_page: 1,
                    pages_initial: r.blocks,
                    pages_max: r.blocks,
                    fields: Vec::new(),
                })
                .collect(),
        }
    }

    /// Transaction `k` (in begin order) as the host runs it.
    pub fn spec(&self, k: usize) -> TxnSpec {
        let t = &self.txns[k];
        let ops = t
            .accesses
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let (rel, block) = a.page();
                let rid = Rid {
                    table: TableId(rel),
                    page: block,
                    slot: 0,
                };
                match *a {
                    Access::Read { .. } => RecOp::Read(rid),
                    Access::Write { bytes, .. } => RecOp::Update {
                        rid,
                        changes: [Change {
                            offset: 0,
                            len: bytes,
                            op: FieldOp::Fill(((k as u64) << 20) ^ i as u64),
                        }]
                        .into(),
                    },
                }
            })
            .collect();
        TxnSpec::fixed(t.kind, ops, t.aborted)
    }

    /// Pages of the whole database.
    pub fn pages(&self) -> u64 {
        self.relations.iter().map(|r| r.blocks as u64).sum()
    }

    /// The trace as a device command stream (`--trace-format pages`): relations laid out one
    /// after another from LPN 0, each block `parts` logical pages (8 KiB over flash pages of
    /// `flash_page_bytes`). A transaction becomes BEGIN, one write of each distinct page it
    /// writes (in the order of first writes; the host writes a page once at commit, however
    /// often it changed), COMMIT or ABORT; each distinct page it reads is a read of its
    /// own just before its BEGIN (the txn format's reads carry no transaction). Untimed:
    /// replay is closed-loop at `workload.trace.concurrency`. BARRIERs make the stream
    /// respect `isolation` (LightTx §4.2): `Strict`, one after every transaction;
    /// `NoPageConflict`, one before a transaction that writes a page an earlier transaction
    /// of the segment wrote; `Serializable`, none.
    pub fn to_txn_commands(
        &self,
        flash_page_bytes: u32,
        logical_pages: u32,
        isolation: crate::txn::Isolation,
    ) -> Result<Vec<Timed>, WorkloadError> {
        use crate::txn::Isolation;
        if flash_page_bytes == 0
            || (flash_page_bytes < DB_PAGE_BYTES && DB_PAGE_BYTES % flash_page_bytes != 0)
        {
            return Err(werr(format!(
                "a {DB_PAGE_BYTES} B DB page does not divide into {flash_page_bytes} B flash pages"
            )));
        }
        let parts = (DB_PAGE_BYTES / flash_page_bytes).max(1);
        let need = self.pages() * parts as u64;
        if need > logical_pages as u64 {
            return Err(werr(format!(
                "the trace's database is {} pages of {DB_PAGE_BYTES} B = {need} logical pages; the device has {logical_pages} (grow it: nand.blocks_per_plane)",
                self.pages()
            )));
        }
        let mut base = Vec::with_capacity(self.relations.len());
        let mut next = 0u64;
        for r in &self.relations {
            base.push(next);
            next += r.blocks as u64 * parts as u64;
        }
        let lpn =
            |rel: u16, block: u32| Lpn((base[rel as usize] + block as u64 * parts as u64) as u32);
        let mut out = Vec::new();
        let cmd = |c: TxCmd| Timed { time_ns: 0, cmd: c };
        // Pages written in the current segment (no-page-conflict isolation).
        let mut segment: std::collections::HashSet<(u16, u32)> = Default::default();
        for (k, t) in self.txns.iter().enumerate() {
            let tx = TxId(k as u64);
            let mut reads: Vec<(u16, u32)> = Vec::new();
            let mut writes: Vec<(u16, u32)> = Vec::new();
            for a in &t.accesses {
                let list = match a {
                    Access::Read { .. } => &mut reads,
                    Access::Write { .. } => &mut writes,
                };
                if !list.contains(&a.page()) {
                    list.push(a.page());
                }
            }
            if isolation == Isolation::NoPageConflict {
                if writes.iter().any(|p| segment.contains(p)) {
                    out.push(cmd(TxCmd::Barrier));
                    segment.clear();
                }
                segment.extend(writes.iter().copied());
            }
            for &(r, b) in &reads {
                out.push(cmd(TxCmd::Read {
                    lpn: lpn(r, b),
                    pages: parts,
                }));
            }
            out.push(cmd(TxCmd::Begin { tx }));
            for &(r, b) in &writes {
                out.push(cmd(TxCmd::Write {
                    tx: Some(tx),
                    lpn: lpn(r, b),
                    pages: parts,
                }));
            }
            out.push(cmd(if t.aborted {
                TxCmd::Abort { tx }
            } else {
                TxCmd::Commit { tx, write: None }
            }));
            if isolation == Isolation::Strict && k + 1 < self.txns.len() {
                out.push(cmd(TxCmd::Barrier));
            }
        }
        Ok(out)
    }
}

/// The host's transaction source over a trace: transaction `k` of the run is the trace's
/// `k`-th (`k` modulo its length: `host.transactions` larger than the trace is refused by
/// the host before it builds the source).
pub struct TraceSource {
    trace: PageTrace,
    schema: Schema,
    next: usize,
    path: String,
}

impl TraceSource {
    pub fn new(cfg: &PageTraceConfig) -> Result<TraceSource, WorkloadError> {
        if cfg.path.is_empty() {
            return Err(werr(
                "no page-access trace file given (run --host S --trace FILE)",
            ));
        }
        let trace = read(&cfg.path)?;
        Ok(TraceSource::from_trace(trace, &cfg.path))
    }

    pub fn from_trace(trace: PageTrace, path: &str) -> TraceSource {
        TraceSource {
            schema: trace.schema(),
            trace,
            next: 0,
            path: path.to_string(),
        }
    }

    pub fn trace(&self) -> &PageTrace {
        &self.trace
    }
}

impl TxnSource for TraceSource {
    fn schema(&self) -> &Schema {
        &self.schema
    }

    fn next_txn(&mut self, _client: u32, _rng: &mut Rng) -> TxnSpec {
        let k = self.next % self.trace.txns.len();
        self.next += 1;
        self.trace.spec(k)
    }

    fn describe(&self) -> String {
        format!(
            "page-access trace {}: {} transactions over {} relations, {} pages",
            self.path,
            self.trace.txns.len(),
            self.trace.relations.len(),
            self.trace.pages()
        )
    }

    fn loaded_prefix(&self, _table: TableId, page: u32) -> Option<u16> {
        // Every page of a relation exists from the start (one record each).
        let _ = page;
        Some(1)
    }

    fn remaining_txns(&self) -> Option<u64> {
        None
    }
}

/// What a stream of transactions looks like (`commitlab trace-stats`): counts by type,
/// pages per transaction, reads against writes, and how concentrated the accesses are.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TraceStats {
    pub transactions: u64,
    pub aborted: u64,
    /// (type, transactions, mean distinct pages, mean distinct pages written)
    pub by_kind: Vec<(String, u64, f64, f64)>,
    pub page_accesses: u64,
    pub reads: u64,
    pub writes: u64,
    pub pages_per_txn_mean: f64,
    pub pages_per_txn_p50: u64,
    pub pages_per_txn_p99: u64,
    pub pages_written_per_txn_mean: f64,
    pub pages_written_per_txn_max: u64,
    /// Distinct pages touched, and the database's pages.
    pub pages_touched: u64,
    pub pages_database: u64,
    /// Share of all accesses that go to the hottest 1 % / 10 % of the pages touched.
    pub hot_1pct_share: f64,
    pub hot_10pct_share: f64,
    /// Share of writes that go to the hottest 1 % of the pages written.
    pub hot_write_1pct_share: f64,
}

impl TraceStats {
    /// The statistics of `specs` over `schema` (accesses are record operations: a trace's
    /// page accesses, a generator's record reads and writes; a page is (table, page)).
    pub fn of<'a>(schema: &Schema, specs: impl IntoIterator<Item = &'a TxnSpec>) -> TraceStats {
        let mut s = TraceStats {
            pages_database: schema.tables.iter().map(|t| t.pages_initial as u64).sum(),
            ..Default::default()
        };
        let mut count: HashMap<(u16, u32), u64> = HashMap::new();
        let mut wcount: HashMap<(u16, u32), u64> = HashMap::new();
        let mut per_txn: Vec<u64> = Vec::new();
        let mut kinds: Vec<(&'static str, u64, u64, u64)> = Vec::new();
        let mut written_total = 0u64;
        for spec in specs {
            s.transactions += 1;
            s.aborted += spec.rollback as u64;
            let mut pages: Vec<(u16, u32)> = Vec::with_capacity(spec.ops.len());
            for op in &spec.ops {
                let r = op.rid();
                let p = (r.table.0, r.page);
                pages.push(p);
                *count.entry(p).or_default() += 1;
                if op.writes() {
                    s.writes += 1;
                    *wcount.entry(p).or_default() += 1;
                } else {
                    s.reads += 1;
                }
            }
            pages.sort_unstable();
            pages.dedup();
            let w = spec.pages_written() as u64;
            written_total += w;
            s.pages_written_per_txn_max = s.pages_written_per_txn_max.max(w);
            per_txn.push(pages.len() as u64);
            match kinds.iter_mut().find(|k| k.0 == spec.kind) {
                Some(k) => {
                    k.1 += 1;
                    k.2 += pages.len() as u64;
                    k.3 += w;
                }
                None => kinds.push((spec.kind, 1, pages.len() as u64, w)),
            }
        }
        s.page_accesses = s.reads + s.writes;
        let n = s.transactions.max(1) as f64;
        s.pages_per_txn_mean = per_txn.iter().sum::<u64>() as f64 / n;
        s.pages_written_per_txn_mean = written_total as f64 / n;
        per_txn.sort_unstable();
        let pct = |v: &[u64], p: f64| -> u64 {
            if v.is_empty() {
                0
            } else {
                v[(((v.len() - 1) as f64) * p).round() as usize]
            }
        };
        s.pages_per_txn_p50 = pct(&per_txn, 0.5);
        s.pages_per_txn_p99 = pct(&per_txn, 0.99);
        kinds.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        s.by_kind = kinds
            .into_iter()
            .map(|(k, c, p, w)| (k.to_string(), c, p as f64 / c as f64, w as f64 / c as f64))
            .collect();
        s.pages_touched = count.len() as u64;
        let share = |m: &HashMap<(u16, u32), u64>, frac: f64| -> f64 {
            let mut v: Vec<u64> = m.values().copied().collect();
            if v.is_empty() {
                return 0.0;
            }
            v.sort_unstable_by(|a, b| b.cmp(a));
            let top = ((v.len() as f64 * frac).ceil() as usize).max(1);
            let total: u64 = v.iter().sum();
            v[..top].iter().sum::<u64>() as f64 / total as f64
        };
        s.hot_1pct_share = share(&count, 0.01);
        s.hot_10pct_share = share(&count, 0.10);
        s.hot_write_1pct_share = share(&wcount, 0.01);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::txn::Isolation;

    const GOOD: &str = "commitlab-pagetrace 1
# a comment
rel 0 stock heap 10
rel 1 stock_pkey index 4
txn 5 new-order
txn 6 payment
r 5 0 3
w 6 1 2 40
w 5 0 3 120
commit 5
r 6 0 9
abort 6
";

    fn parse_str(s: &str) -> Result<PageTrace, WorkloadError> {
        parse("t.trace", s.as_bytes())
    }

    #[test]
    fn parses_interleaved_transactions_in_begin_order() {
        let t = parse_str(GOOD).unwrap();
        assert_eq!(t.relations.len(), 2);
        assert_eq!(t.relations[1].kind, RelKind::Index);
        assert_eq!(t.txns.len(), 2);
        assert_eq!(t.txns[0].id, 5);
        assert_eq!(
            t.txns[0].accesses,
            vec![
                Access::Read { rel: 0, block: 3 },
                Access::Write {
                    rel: 0,
                    block: 3,
                    bytes: 120
                }
            ]
        );
        assert_eq!(
            t.txns[1].accesses,
            vec![
                Access::Write {
                    rel: 1,
                    block: 2,
                    bytes: 40
                },
                Access::Read { rel: 0, block: 9 }
            ]
        );
        assert!(!t.txns[0].aborted);
        assert!(t.txns[1].aborted);
        assert_eq!(t.txns[1].kind, "payment");
        let spec = t.spec(1);
        assert!(spec.rollback);
        assert_eq!(spec.ops.len(), 2);
        assert!(spec.ops[0].writes());
        assert_eq!(spec.ops[0].rid().table, TableId(1));
        spec.validate(&t.schema()).unwrap();
        t.schema().validate().unwrap();
    }

    /// Each malformed case: the error names the file and the line, and says what is wrong.
    #[test]
    fn malformed_traces_name_file_and_line() {
        let head = "commitlab-pagetrace 1\nrel 0 t heap 10\n";
        let cases: &[(&str, &str)] = &[
            ("", "t.trace:1: empty file"),
            ("rel 0 t heap 10\n", "t.trace:1: expected the header"),
            (
                "commitlab-pagetrace 2\n",
                "t.trace:1: format version '2' is not supported",
            ),
            ("commitlab-pagetrace\n", "t.trace:1: expected the header"),
            (
                "commitlab-pagetrace 1\nrel 1 t heap 10\n",
                "t.trace:2: relation id 1 out of order",
            ),
            (
                "commitlab-pagetrace 1\nrel 0 t table 10\n",
                "t.trace:2: relation kind 'table'",
            ),
            (
                "commitlab-pagetrace 1\nrel 0 t heap 0\n",
                "t.trace:2: relation t has 0 blocks",
            ),
            (
                "commitlab-pagetrace 1\nrel 0 t heap\n",
                "t.trace:2: 'rel' takes 5 fields",
            ),
            (
                "commitlab-pagetrace 1\nrel 0 t heap x\n",
                "t.trace:2: blocks 'x' is not a non-negative integer",
            ),
            (
                "txn 1 a\ncommit 1\nrel 1 u heap 3\n",
                "t.trace:5: relation declared after the first transaction",
            ),
            (
                "txn 1 a\ntxn 1 a\n",
                "t.trace:4: transaction 1 already began (line 3)",
            ),
            ("txn -1 a\n", "t.trace:3: transaction id '-1' is not"),
            ("r 1 0 0\n", "t.trace:3: transaction 1 has not begun"),
            (
                "txn 1 a\ncommit 1\nw 1 0 0 8\n",
                "t.trace:5: transaction 1 (begun on line 3) has already ended",
            ),
            (
                "txn 1 a\nr 1 3 0\n",
                "t.trace:4: relation 3 is not declared",
            ),
            (
                "txn 1 a\nr 1 0 10\n",
                "t.trace:4: block 10 is beyond relation t",
            ),
            (
                "txn 1 a\nw 1 0 1 0\n",
                "t.trace:4: a write changes 1 to 8192 bytes, found 0",
            ),
            (
                "txn 1 a\nw 1 0 1 8193\n",
                "t.trace:4: a write changes 1 to 8192 bytes",
            ),
            ("txn 1 a\nw 1 0 1\n", "t.trace:4: 'w' takes 5 fields"),
            ("txn 1 a\nr 1 0 1 5\n", "t.trace:4: 'r' takes 4 fields"),
            ("commit 4\n", "t.trace:3: transaction 4 has not begun"),
            (
                "txn 1 a\nabort 1\nabort 1\n",
                "t.trace:5: transaction 1 (begun on line 3) has already ended",
            ),
            ("txn 1 a\nfoo 1\n", "t.trace:4: unknown record 'foo'"),
            (
                "txn 1 a\ntxn 2 b\ncommit 2\n",
                "t.trace:3: transaction 1 never ends",
            ),
            ("", "t.trace: the trace holds no transactions"),
        ];
        for (k, (body, want)) in cases.iter().enumerate() {
            let text = if k < 9 {
                body.to_string()
            } else {
                format!("{head}{body}")
            };
            let text = if k == cases.len() - 1 {
                head.to_string()
            } else {
                text
            };
            let e = parse_str(&text).expect_err(&format!("case {k} ({body:?}) parsed"));
            assert!(
                e.what.starts_with(want),
                "case {k}: got '{}', want '{want}…'",
                e.what
            );
        }
    }

    /// Sizing a device reads a trace's head only: the relations, up to the first `txn`
    /// line. A fault after them is left to the full read; one in them is found.
    #[test]
    fn the_head_is_read_without_the_transactions() {
        let broken = format!("{GOOD}bogus line\n");
        assert!(parse_str(&broken).is_err());
        let head = parse_until("t.trace", broken.as_bytes(), Until::FirstTxn).unwrap();
        assert_eq!(head.relations, parse_str(GOOD).unwrap().relations);
        assert!(head.txns.is_empty());
        assert_eq!(
            PageTrace::schema_of(&head.relations),
            parse_str(GOOD).unwrap().schema()
        );
        let bad_rel = "commitlab-pagetrace 1\nrel 0 t heap 0\ntxn 1 a\n";
        let e = parse_until("t.trace", bad_rel.as_bytes(), Until::FirstTxn).unwrap_err();
        assert!(
            e.what.starts_with("t.trace:2: relation t has 0 blocks"),
            "{}",
            e.what
        );
        let e = parse_until("t.trace", "rel 0 t heap 1\n".as_bytes(), Until::FirstTxn).unwrap_err();
        assert!(
            e.what.starts_with("t.trace:1: expected the header"),
            "{}",
            e.what
        );
    }

    #[test]
    fn converts_to_device_commands() {
        let t = parse_str(GOOD).unwrap();
        // 2 KiB flash pages: 4 parts per 8 KiB block; relation 1 starts at 10 blocks.
        let cmds = t
            .to_txn_commands(2048, 1000, Isolation::Serializable)
            .unwrap();
        let c: Vec<TxCmd> = cmds.into_iter().map(|t| t.cmd).collect();
        assert_eq!(
            c,
            vec![
                TxCmd::Read {
                    lpn: Lpn(12),
                    pages: 4
                },
                TxCmd::Begin { tx: TxId(0) },
                TxCmd::Write {
                    tx: Some(TxId(0)),
                    lpn: Lpn(12),
                    pages: 4
                },
                TxCmd::Commit {
                    tx: TxId(0),
                    write: None
                },
                TxCmd::Read {
                    lpn: Lpn(36),
                    pages: 4
                },
                TxCmd::Begin { tx: TxId(1) },
                TxCmd::Write {
                    tx: Some(TxId(1)),
                    lpn: Lpn(48),
                    pages: 4
                },
                TxCmd::Abort { tx: TxId(1) },
            ]
        );
        let e = t
            .to_txn_commands(2048, 55, Isolation::Serializable)
            .unwrap_err();
        assert!(e.what.contains("the device has 55"), "{}", e.what);
        assert!(t
            .to_txn_commands(3000, 1000, Isolation::Serializable)
            .is_err());
        let barriers = |iso| {
            t.to_txn_commands(2048, 1000, iso)
                .unwrap()
                .iter()
                .filter(|c| c.cmd == TxCmd::Barrier)
                .count()
        };
        // Strict: one between the two transactions; their write sets are disjoint, so
        // no-page-conflict needs none.
        assert_eq!(barriers(Isolation::Strict), 1);
        assert_eq!(barriers(Isolation::NoPageConflict), 0);
        let clash = parse_str(
            "commitlab-pagetrace 1\nrel 0 t heap 4\ntxn 1 a\nw 1 0 2 8\ncommit 1\ntxn 2 b\nw 2 0 2 8\ncommit 2\n",
        )
        .unwrap();
        let c = clash
            .to_txn_commands(2048, 1000, Isolation::NoPageConflict)
            .unwrap();
        assert_eq!(c[3].cmd, TxCmd::Barrier, "{c:?}");
    }

    #[test]
    fn stats_count_pages_and_skew() {
        let t = parse_str(GOOD).unwrap();
        let specs: Vec<TxnSpec> = (0..t.txns.len()).map(|k| t.spec(k)).collect();
        let s = TraceStats::of(&t.schema(), &specs);
        assert_eq!((s.transactions, s.aborted), (2, 1));
        assert_eq!((s.reads, s.writes), (2, 2));
        assert_eq!(s.pages_touched, 3);
        assert_eq!(s.pages_database, 14);
        assert_eq!(s.pages_per_txn_mean, 1.5);
        // the hottest page (relation 0, block 3) has 2 of 4 accesses
        assert_eq!(s.hot_1pct_share, 0.5);
    }
}
