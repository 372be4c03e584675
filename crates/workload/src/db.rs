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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldOp {
    /// The range is a little-endian i64 (len 8); add this to it.
    AddI64(i64),
    /// Overwrite the range with bytes the host derives from this seed (opaque data).
    Fill(u64),
    /// Overwrite the range with these bytes (len equals the range's length). Short
    /// values only (a carrier id, a flag byte); opaque ranges use `Fill`.
    Set(SetBytes),
}

/// The bytes of a `FieldOp::Set`: at most `SetBytes::MAX`, kept inline so a `Change` is
/// plain data (no allocation per update).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SetBytes {
    len: u8,
    bytes: [u8; SetBytes::MAX],
}

impl SetBytes {
    pub const MAX: usize = 8;

    /// Panics if `b` is longer than `SetBytes::MAX` (a generator's programming error).
    pub fn new(b: &[u8]) -> SetBytes {
        assert!(b.len() <= Self::MAX, "FieldOp::Set of {} bytes", b.len());
        let mut bytes = [0u8; Self::MAX];
        bytes[..b.len()].copy_from_slice(b);
        SetBytes {
            len: b.len() as u8,
            bytes,
        }
    }
}

impl std::ops::Deref for SetBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl std::fmt::Debug for SetBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// One changed byte range of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    pub offset: u16,
    pub len: u16,
    pub op: FieldOp,
}

impl Change {
    /// A placeholder for unused inline slots of `Changes` (never visible through it).
    const UNUSED: Change = Change {
        offset: 0,
        len: 0,
        op: FieldOp::Fill(0),
    };
}

/// The changes of one update, in order: up to `Changes::INLINE` inline (every update the
/// modelled workloads make has at most four: TPC-C's stock row with a remote supplier and
/// its bad-credit customer), more on the heap. A TPC-C run makes about ten updates per
/// transaction, and a vector per update was one allocation and one free each. Reads as a
/// slice (`Deref<Target = [Change]>`), so `changes.iter()`, `changes[0]` and
/// `for c in &changes` work as they did on the `Vec` it replaced.
#[derive(Clone)]
pub struct Changes(ChangesRepr);

#[derive(Clone)]
enum ChangesRepr {
    Inline {
        len: u8,
        items: [Change; Changes::INLINE],
    },
    Heap(Vec<Change>),
}

impl Changes {
    pub const INLINE: usize = 4;

    pub const fn new() -> Changes {
        Changes(ChangesRepr::Inline {
            len: 0,
            items: [Change::UNUSED; Changes::INLINE],
        })
    }

    pub fn push(&mut self, c: Change) {
        match &mut self.0 {
            ChangesRepr::Inline { len, items } => {
                let n = usize::from(*len);
                if n < Self::INLINE {
                    items[n] = c;
                    *len += 1;
                } else {
                    let mut v = Vec::with_capacity(2 * Self::INLINE);
                    v.extend_from_slice(&items[..]);
                    v.push(c);
                    self.0 = ChangesRepr::Heap(v);
                }
            }
            ChangesRepr::Heap(v) => v.push(c),
        }
    }

    /// Are the changes kept inline (for tests)?
    pub fn is_inline(&self) -> bool {
        matches!(self.0, ChangesRepr::Inline { .. })
    }
}

impl Default for Changes {
    fn default() -> Self {
        Changes::new()
    }
}

impl std::ops::Deref for Changes {
    type Target = [Change];
    #[inline]
    fn deref(&self) -> &[Change] {
        match &self.0 {
            ChangesRepr::Inline { len, items } => &items[..usize::from(*len)],
            ChangesRepr::Heap(v) => v,
        }
    }
}

impl std::ops::DerefMut for Changes {
    #[inline]
    fn deref_mut(&mut self) -> &mut [Change] {
        match &mut self.0 {
            ChangesRepr::Inline { len, items } => &mut items[..usize::from(*len)],
            ChangesRepr::Heap(v) => v,
        }
    }
}

impl<'a> IntoIterator for &'a Changes {
    type Item = &'a Change;
    type IntoIter = std::slice::Iter<'a, Change>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl FromIterator<Change> for Changes {
    fn from_iter<I: IntoIterator<Item = Change>>(iter: I) -> Self {
        let mut c = Changes::new();
        for x in iter {
            c.push(x);
        }
        c
    }
}

impl<const N: usize> From<[Change; N]> for Changes {
    fn from(a: [Change; N]) -> Self {
        a.into_iter().collect()
    }
}

impl From<Vec<Change>> for Changes {
    fn from(v: Vec<Change>) -> Self {
        if v.len() <= Self::INLINE {
            v.into_iter().collect()
        } else {
            Changes(ChangesRepr::Heap(v))
        }
    }
}

impl PartialEq for Changes {
    fn eq(&self, other: &Self) -> bool {
        self[..] == other[..]
    }
}

impl Eq for Changes {}

impl std::fmt::Debug for Changes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// A logical record operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecOp {
    Read(Rid),
    Update {
        rid: Rid,
        changes: Changes,
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
    /// Operations that read a value the rest of the transaction depends on (TPC-C's
    /// D_NEXT_O_ID, the oldest NEW-ORDER row, S_QUANTITY; TATP's CALL_FORWARDING row),
    /// ascending. An executor holding the lock of `ops[i]` for an `i` listed here calls
    /// `TxnSource::bind(self, i)` before carrying the operation out; the operations from
    /// `i` on, as generated, are only provisional. Empty: fixed at generation.
    pub bind: Vec<u32>,
    /// The source's name for this transaction between `next_txn` and its end
    /// (`TxnSource::bind` / `committed` / `ended`); 0 when it keeps none.
    pub token: u64,
}

impl TxnSpec {
    /// A transaction fixed at generation (nothing to bind).
    pub fn fixed(kind: &'static str, ops: Vec<RecOp>, rollback: bool) -> TxnSpec {
        TxnSpec {
            kind,
            ops,
            rollback,
            bind: Vec::new(),
            token: 0,
        }
    }

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
        self.validate_from(schema, 0)
    }

    /// `validate` for operations `from..` only: after `TxnSource::bind` at `from`, which may
    /// rewrite only those, the earlier ones are as already validated.
    pub fn validate_from(&self, schema: &Schema, from: usize) -> Result<(), WorkloadError> {
        for op in self.ops.iter().skip(from) {
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
    /// Settles operation `i` of `spec` (listed in `spec.bind`) from the state the
    /// transaction reads there, which its executor now holds the lock of `ops[i]` for: the
    /// source may rewrite `ops[i..]`, `bind` entries above `i` and `rollback`. If `ops[i]`
    /// changes, the executor locks the new `ops[i]` and, if `i` is still listed, calls `bind`
    /// at `i` again (it returns the same operation once the state it read is unchanged
    /// under that lock). The state
    /// is the source's committed view: every transaction whose commit was issued
    /// (`committed`), none of those still running, so a value read under a lock that its
    /// writers also take is the value a serial execution in commit order reads (TPC-C
    /// §2.4.2.2: D_NEXT_O_ID is read under the district's lock, not when the terminal
    /// chose its inputs). Deterministic: no draws from a random stream.
    fn bind(&mut self, _spec: &mut TxnSpec, _i: usize) {}
    /// `spec` (as bound) committed: its effects join the committed view that later `bind`
    /// calls and generations read. Called when the commit is issued, before any of its
    /// locks are released.
    fn committed(&mut self, _spec: &TxnSpec) {}
    /// `spec` ended without committing (its rollback); it is not restarted.
    fn ended(&mut self, _spec: &TxnSpec) {}
}

/// Runs `spec` the way a serial executor does: binds each of its `bind` operations in
/// order (rebinding where the source rewrote the operation), then reports its end
/// (`committed` or `ended`). For sources used outside the host engine (tests, estimates
/// drawn from a generator) and for the engine's own tests.
pub fn execute_serially(source: &mut dyn TxnSource, spec: &mut TxnSpec) {
    let mut k = 0;
    while k < spec.bind.len() {
        let i = spec.bind[k] as usize;
        // A rewrite of `ops[i]` asks for a second bind at `i`; under a serial executor the
        // state cannot change between the two, so the second is stable (bounded anyway).
        for _ in 0..4 {
            let before = spec.ops.get(i).cloned();
            source.bind(spec, i);
            if spec.ops.get(i) == before.as_ref() || !spec.bind.contains(&(i as u32)) {
                break;
            }
        }
        k = match spec.bind.iter().position(|&b| b as usize > i) {
            Some(p) => p,
            None => spec.bind.len(),
        };
    }
    if spec.rollback {
        source.ended(spec);
    } else {
        source.committed(spec);
    }
}

/// `TxnSource::next_txn` followed by `execute_serially`: the next transaction of a serial
/// execution, with its effects on the source's view applied.
pub fn next_serial(source: &mut dyn TxnSource, client: u32, rng: &mut Rng) -> TxnSpec {
    let mut spec = source.next_txn(client, rng);
    execute_serially(source, &mut spec);
    spec
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

/// A digest of a generated transaction stream (kinds, rollbacks, every operation with its
/// changes), for golden tests that a refactoring leaves the stream unchanged.
#[cfg(test)]
pub(crate) fn stream_digest(specs: &[TxnSpec]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    let mut eat = |x: u64| {
        h ^= x;
        h = h.wrapping_mul(0x0000_0100_0000_01b3).rotate_left(17);
    };
    for s in specs {
        s.kind.bytes().for_each(|b| eat(u64::from(b)));
        eat(u64::from(s.rollback));
        for op in &s.ops {
            let r = op.rid();
            let tag = match op {
                RecOp::Read(_) => 1,
                RecOp::Update { .. } => 2,
                RecOp::Insert { .. } => 3,
                RecOp::Delete(_) => 4,
            };
            eat(tag);
            eat((u64::from(r.table.0) << 48) | (u64::from(r.page) << 16) | u64::from(r.slot));
            match op {
                RecOp::Update { changes, .. } => {
                    for c in changes.iter() {
                        eat((u64::from(c.offset) << 16) | u64::from(c.len));
                        match &c.op {
                            FieldOp::AddI64(d) => {
                                eat(10);
                                eat(*d as u64)
                            }
                            FieldOp::Fill(x) => {
                                eat(11);
                                eat(*x)
                            }
                            FieldOp::Set(b) => {
                                eat(12);
                                b.iter().for_each(|x| eat(u64::from(*x)))
                            }
                        }
                    }
                }
                RecOp::Insert { fill, .. } => eat(*fill),
                _ => {}
            }
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn change(k: u8, x: u64) -> Change {
        Change {
            offset: (x % 300) as u16,
            len: 1 + (x % 8) as u16,
            op: match k % 3 {
                0 => FieldOp::AddI64(x as i64),
                1 => FieldOp::Fill(x),
                _ => FieldOp::Set(SetBytes::new(&x.to_le_bytes()[..(x % 9) as usize])),
            },
        }
    }

    /// `validate_from(i)` checks operations `i..` exactly as `validate` does and skips the
    /// earlier ones (the executor's check after `bind` at `i`, which rewrites only those).
    #[test]
    fn validate_from_checks_the_operations_from_its_start() {
        let schema = Schema {
            name: "t",
            page_bytes: 4096,
            tables: vec![TableDef {
                name: "a",
                kind: TableKind::Heap,
                record_bytes: 100,
                records_per_page: 4,
                pages_initial: 2,
                pages_max: 3,
                fields: Vec::new(),
            }],
        };
        let rid = |page, slot| Rid {
            table: TableId(0),
            page,
            slot,
        };
        let ok = RecOp::Read(rid(2, 3));
        let bad = RecOp::Read(rid(3, 0));
        let t = TxnSpec::fixed("t", vec![bad.clone(), ok.clone(), ok.clone()], false);
        assert!(t.validate(&schema).is_err());
        assert!(t.validate_from(&schema, 0).is_err());
        assert!(t.validate_from(&schema, 1).is_ok());
        assert!(t.validate_from(&schema, 9).is_ok());
        let t = TxnSpec::fixed("t", vec![ok.clone(), ok, bad], false);
        for from in 0..3 {
            assert_eq!(
                t.validate_from(&schema, from).unwrap_err().what,
                t.validate(&schema).unwrap_err().what
            );
        }
        assert!(t.validate_from(&schema, 3).is_ok());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// `Changes` behaves as the `Vec<Change>` it replaced: same elements in the same
        /// order through every constructor, inline up to `INLINE`, equal iff the vectors are.
        #[test]
        fn changes_match_a_vec(raw in proptest::collection::vec((0u8..3, proptest::num::u64::ANY), 0..12),
                               other in proptest::collection::vec((0u8..3, proptest::num::u64::ANY), 0..6)) {
            let v: Vec<Change> = raw.iter().map(|&(k, x)| change(k, x)).collect();
            let mut pushed = Changes::new();
            for c in &v {
                pushed.push(*c);
            }
            let collected: Changes = v.iter().copied().collect();
            let from_vec = Changes::from(v.clone());
            for c in [&pushed, &collected, &from_vec] {
                prop_assert_eq!(&c[..], &v[..]);
                prop_assert_eq!(c.len(), v.len());
                prop_assert_eq!(c.iter().count(), v.len());
                prop_assert_eq!(c.is_inline(), v.len() <= Changes::INLINE);
                prop_assert_eq!(format!("{c:?}"), format!("{v:?}"));
            }
            prop_assert_eq!(&pushed, &from_vec);
            let w: Vec<Change> = other.iter().map(|&(k, x)| change(k, x)).collect();
            prop_assert_eq!(Changes::from(w.clone()) == pushed, w == v);
            // Clones are independent.
            let mut c2 = pushed.clone();
            c2.push(change(0, 1));
            prop_assert_eq!(&pushed[..], &v[..]);
            prop_assert_eq!(c2.len(), v.len() + 1);
        }
    }

    #[test]
    fn set_bytes_keep_their_bytes_and_arrays_convert() {
        let s = SetBytes::new(&[7, 0, 9]);
        assert_eq!(&s[..], &[7, 0, 9]);
        assert_eq!(SetBytes::new(&[]).len(), 0);
        assert_ne!(SetBytes::new(&[1]), SetBytes::new(&[1, 0]));
        assert_eq!(format!("{s:?}"), "[7, 0, 9]");
        let a: Changes = [change(0, 5), change(1, 6)].into();
        assert_eq!(&a[..], &[change(0, 5), change(1, 6)]);
        let five: Changes = [change(0, 1); 5].into();
        assert!(!five.is_inline());
        assert_eq!(five.len(), 5);
    }

    #[test]
    #[should_panic(expected = "FieldOp::Set of 9 bytes")]
    fn set_bytes_refuse_more_than_eight() {
        SetBytes::new(&[0; 9]);
    }

    /// What the inline container costs in size (a `RecOp` is an element of every
    /// transaction's operation list).
    #[test]
    fn sizes() {
        assert_eq!(std::mem::size_of::<FieldOp>(), 16);
        assert_eq!(std::mem::size_of::<Change>(), 24);
        assert!(
            std::mem::size_of::<RecOp>() <= 112,
            "{}",
            std::mem::size_of::<RecOp>()
        );
    }
}
