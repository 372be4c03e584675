//! The database model shared by schema-aware generators (TPC-C, TPC-B, TATP, synthetic
//! record workloads) and the host engine (`host` crate).
//!
//! A generator owns a `Schema` (tables with record sizes, records per 8 KiB DB page and
//! page counts, fields with byte offsets) and produces transactions as lists of logical
//! record operations (`RecOp`). Every update names the record and the byte ranges it
//! changes, because record-level logging, Flag Commit's pending records and In-Place
//! Appends' delta records are built from exactly those ranges (DESIGN.md, "Workload → host").
//!
//! What the generator does not do: locking, buffering, I/O or choosing values for opaque
//! fields. `FieldOp::Fill` names a range whose new bytes the host derives deterministically
//! from the seed it carries, so a `tag`-mode run and a `full`-mode run write the same bytes.
//! Arithmetic fields (`FieldOp::AddI64`) carry their delta so consistency conditions
//! (TPC-C 1–4, TPC-B balance sums) can be checked on `full`-mode databases.
//!
//! Invariants (checked by `Schema::validate` and `TxnSpec::validate`): every table has at
//! least one page and one record per page; `records_per_page * record_bytes` fits in
//! `page_bytes`; every field and every change lies inside its record; every `Rid` names an
//! existing table, a page below that table's `pages_max` and a slot below its
//! `records_per_page`.

use crate::WorkloadError;
use sim::Rng;

/// Size of a logical DB page (Flag Commit §5 and the TPC kits: 8 KiB).
pub const DB_PAGE_BYTES: u32 = 8192;

/// A table's index in its schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TableId(pub u16);

/// A record: table, page within the table (0-based), slot within the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rid {
    pub table: TableId,
    pub page: u32,
    pub slot: u16,
}

/// A named byte range of a record (e.g. TPC-C's S_QUANTITY in a stock row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    pub offset: u16,
    pub len: u16,
}

/// What kind of pages a table holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableKind {
    /// Heap pages of fixed-size records.
    Heap,
    /// B-tree index pages (entries are records of `record_bytes`; inner levels are
    /// modelled as further pages of the same table).
    Index,
}

/// One table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableDef {
    pub name: &'static str,
    pub kind: TableKind,
    pub record_bytes: u16,
    pub records_per_page: u16,
    /// Pages populated when the database is loaded.
    pub pages_initial: u32,
    /// Pages the table may grow to through inserts (≥ `pages_initial`).
    pub pages_max: u32,
    pub fields: Vec<Field>,
}

impl TableDef {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A database schema: tables in a fixed order (their `TableId` is the index).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schema {
    pub name: &'static str,
    pub page_bytes: u32,
    pub tables: Vec<TableDef>,
}

impl Schema {
    pub fn table(&self, id: TableId) -> &TableDef {
        &self.tables[id.0 as usize]
    }

    /// Total DB pages the schema may occupy (sum of `pages_max`).
    pub fn pages_max(&self) -> u64 {
        self.tables.iter().map(|t| t.pages_max as u64).sum()
    }

    /// First DB page number of each table when tables are laid out one after another.
    pub fn page_base(&self) -> Vec<u64> {
        let mut base = Vec::with_capacity(self.tables.len());
        let mut next = 0u64;
        for t in &self.tables {
            base.push(next);
            next += t.pages_max as u64;
        }
        base
    }

    pub fn validate(&self) -> Result<(), WorkloadError> {
        let err = |s: String| Err(WorkloadError { what: s });
        if self.tables.is_empty() {
            return err(format!("schema {}: no tables", self.name));
        }
        for t in &self.tables {
            if t.records_per_page == 0 || t.record_bytes == 0 || t.pages_initial == 0 {
                return err(format!("schema {}: table {} is empty", self.name, t.name));
            }
            if t.pages_max < t.pages_initial {
                return err(format!(
                    "schema {}: table {}: pages_max {} < pages_initial {}",
                    self.name, t.name, t.pages_max, t.pages_initial
                ));
            }
            if t.records_per_page as u64 * t.record_bytes as u64 > self.page_bytes as u64 {
                return err(format!(
                    "schema {}: table {}: {} records of {} B do not fit in a {} B page",
                    self.name, t.name, t.records_per_page, t.record_bytes, self.page_bytes
                ));
            }
            for f in &t.fields {
                if f.len == 0 || f.offset as u32 + f.len as u32 > t.record_bytes as u32 {
                    return err(format!(
                        "schema {}: field {}.{} lies outside its {} B record",
                        self.name, t.name, f.name, t.record_bytes
                    ));
                }
            }
        }
        Ok(())
    }
}

/// How an update changes a byte range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldOp {
    /// The range is a little-endian i64 (len 8); add this to it.
    AddI64(i64),
    /// Overwrite the range with bytes the host derives from this seed (opaque data).
    Fill(u64),
    /// Overwrite the range with these bytes (len equals the range's length).
    Set(Vec<u8>),
}

/// One changed byte range of a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub offset: u16,
    pub len: u16,
    pub op: FieldOp,
}

/// A logical record operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecOp {
    Read(Rid),
    Update {
        rid: Rid,
        changes: Vec<Change>,
    },
    /// Insert a whole record into a slot that is free (the generator keeps track of
    /// insert positions; a crash-recovered database must agree).
    Insert {
        rid: Rid,
        fill: u64,
    },
    Delete(Rid),
}

impl RecOp {
    pub fn rid(&self) -> Rid {
        match self {
            RecOp::Read(r) | RecOp::Delete(r) => *r,
            RecOp::Update { rid, .. } | RecOp::Insert { rid, .. } => *rid,
        }
    }
    pub fn writes(&self) -> bool {
        !matches!(self, RecOp::Read(_))
    }
}

/// One host transaction as the generator wants it run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxnSpec {
    /// The transaction type ("new-order", "payment", "tpcb", "get-subscriber-data", …).
    pub kind: &'static str,
    pub ops: Vec<RecOp>,
    /// The transaction rolls back after its operations (TPC-C New-Order's 1 %, TATP's
    /// expected failures, the abort-ratio knob δ).
    pub rollback: bool,
}

impl TxnSpec {
    /// λ of Flag Commit §5.2: the distinct pages this transaction writes (updates, inserts
    /// and deletes; a page written by several operations counts once).
    pub fn pages_written(&self) -> u32 {
        let mut pages: Vec<(u16, u32)> = self
            .ops
            .iter()
            .filter(|o| o.writes())
            .map(|o| {
                let r = o.rid();
                (r.table.0, r.page)
            })
            .collect();
        pages.sort_unstable();
        pages.dedup();
        pages.len() as u32
    }

    pub fn validate(&self, schema: &Schema) -> Result<(), WorkloadError> {
        for op in &self.ops {
            let rid = op.rid();
            let Some(t) = schema.tables.get(rid.table.0 as usize) else {
                return Err(WorkloadError {
                    what: format!("{}: table {} does not exist", self.kind, rid.table.0),
                });
            };
            if rid.page >= t.pages_max || rid.slot >= t.records_per_page {
                return Err(WorkloadError {
                    what: format!("{}: {rid:?} outside table {}", self.kind, t.name),
                });
            }
            if let RecOp::Update { changes, .. } = op {
                for c in changes {
                    if c.len == 0 || c.offset as u32 + c.len as u32 > t.record_bytes as u32 {
                        return Err(WorkloadError {
                            what: format!(
                                "{}: change {}+{} outside a {} B {} record",
                                self.kind, c.offset, c.len, t.record_bytes, t.name
                            ),
                        });
                    }
                }
            }
        }
        Ok(())
    }
}

/// A schema-aware transaction generator. Deterministic: given the same construction
/// parameters and the same `Rng` stream, it yields the same transactions.
pub trait TxnSource {
    fn schema(&self) -> &Schema;
    /// The next transaction for `client` (clients may have a home warehouse/branch).
    fn next_txn(&mut self, client: u32, rng: &mut Rng) -> TxnSpec;
    /// A short description for reports.
    fn describe(&self) -> String;
    /// Is this record present when the database is loaded? Generators whose tables have
    /// free slots below `pages_initial` (B-tree leaves at a fill factor, TATP's optional
    /// rows, a partly filled last page) override this; the default says every slot of
    /// every page below `pages_initial` is populated.
    fn loaded(&self, rid: Rid) -> bool {
        rid.page < self.schema().table(rid.table).pages_initial
    }
    /// `loaded` for a whole page at once, where its loaded slots are a prefix: `Some(n)`
    /// says slots `[0, n)` of `page` are loaded and slots `[n, records_per_page)` are not
    /// (`n ≤ records_per_page`); `None` says the source does not know it cheaply or the
    /// loaded slots are not a prefix, and the caller asks `loaded` per slot. Must agree
    /// with `loaded` (each generator's tests check it on every slot). The host builds its
    /// loaded map from this once per run: asking `loaded` for every slot of every page a
    /// 20-warehouse TPC-C database may grow to (about 1 M pages, most of them insert regions
    /// sized for `max_txns`) was ~3 % of a host benchmark's CPU time.
    fn loaded_prefix(&self, _table: TableId, _page: u32) -> Option<u16> {
        None
    }
    /// How many more transactions the source can generate before its tables' growth
    /// regions (`pages_max`) are exhausted; `None` when inserts cannot exhaust them. Past
    /// that point inserts wrap onto earlier rows' slots (see each generator's docs).
    fn remaining_txns(&self) -> Option<u64> {
        None
    }
    /// The benchmark's consistency conditions over a database's record contents (`full`
    /// data mode), as findings; empty when they hold or the generator defines none.
    /// `rows(t)` lists every record of table `t` that is not `Absent`, in slot order.
    fn consistency(&self, _rows: &dyn Fn(TableId) -> Vec<(Rid, RowContent)>) -> Vec<String> {
        Vec::new()
    }
    /// Does `consistency` check anything?
    fn has_consistency(&self) -> bool {
        false
    }
}

/// Checks a source's `loaded_prefix` against its `loaded` on every slot of every page of
/// its schema (pages up to `pages_max`); returns the first page where they disagree. For
/// tests and debug builds: it asks `loaded` once per slot.
pub fn check_loaded_prefix(source: &dyn TxnSource) -> Result<(), String> {
    for (ti, def) in source.schema().tables.iter().enumerate() {
        let table = TableId(ti as u16);
        for page in 0..def.pages_max {
            let Some(n) = source.loaded_prefix(table, page) else {
                continue;
            };
            if n > def.records_per_page {
                return Err(format!(
                    "{}: table {} page {page}: loaded_prefix {n} > {} records per page",
                    source.describe(),
                    def.name,
                    def.records_per_page
                ));
            }
            for slot in 0..def.records_per_page {
                if source.loaded(Rid { table, page, slot }) != (slot < n) {
                    return Err(format!(
                        "{}: table {} page {page} slot {slot}: loaded_prefix says {n}, loaded says {}",
                        source.describe(),
                        def.name,
                        !(slot < n)
                    ));
                }
            }
        }
    }
    Ok(())
}

/// What a record holds, as far as the modelled workloads keep record contents: whether it
/// is there, the insert's fill seed (generators put a row's key fields there where a
/// consistency condition needs them), and the sum of the `AddI64` deltas applied to each
/// arithmetic field since the row was loaded or inserted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowContent {
    Absent,
    /// `fill`: `None` for a row as loaded.
    Present {
        fill: Option<u64>,
        adds: std::collections::BTreeMap<u16, i64>,
    },
    /// The record's value is none a committed history produces (the oracle reports it).
    Unknown,
}

impl RowContent {
    /// The summed deltas of the field at `offset` (0 if none or not present).
    pub fn add(&self, offset: u16) -> i64 {
        match self {
            RowContent::Present { adds, .. } => adds.get(&offset).copied().unwrap_or(0),
            _ => 0,
        }
    }
}
