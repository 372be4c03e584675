//! The host's data model: what a record, a DB page and a device page *contain*.
//!
//! commitlab runs large databases in the NAND `tag` data mode, where a flash page holds a
//! 64-bit tag instead of bytes. The host therefore keeps a compact model of its contents:
//!
//! - **Record value**: one `u64` per record slot, a digest of the record's history. A slot
//!   that holds no record is 0. Loading the database gives every populated slot
//!   `initial_value(rid)`; an update replaces `v` by `mix(v, digest(changes))`, an insert by
//!   a value derived from its fill seed, a delete by 0. Because an update's result depends on
//!   the value it was applied to, two databases are equal only if the same updates were
//!   applied to every record in the same order — exactly what the oracle needs to compare a
//!   recovered database with a serial replay.
//! - **Page image**: the values of a DB page's slots at one instant, with the page LSN the
//!   WAL strategy stamps on it (0 elsewhere). Images are immutable and shared (`Arc`).
//! - **Device page (part)**: a DB page of `page_bytes` (8 KiB) is laid over
//!   `parts = page_bytes / flash_page_bytes` consecutive logical pages of the device (4 for
//!   2 KiB flash pages). Part `k` holds slots `[k*s, (k+1)*s)` with `s = ceil(slots/parts)`.
//!   Every device write carries a fresh tag; the `TagTable` maps tags back to what they
//!   stand for (a part of a page image, a log page, a master record), so the contents of a
//!   crashed device can be turned back into a database. The table is the decompression of
//!   the page bytes a `full`-mode device would hold: an entry is made when the write is
//!   issued and never changes.
//!
//! An unmapped device page reads as the loaded database (`initial_value`), so nothing has to
//! be written to load it; the first write of a page replaces that.
//!
//! What it does not model: record bytes (a `full`-mode database with TPC-C consistency
//! conditions is not built here), free space inside a page, or index structure.

use std::sync::Arc;
use workload::db::{Change, FieldOp, RecOp, Rid, Schema, TableId};

/// splitmix64's finalizer: a bijective mix of 64 bits.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn mix2(a: u64, b: u64) -> u64 {
    mix64(a.rotate_left(23) ^ mix64(b ^ 0x9E37_79B9_7F4A_7C15))
}

/// Never 0 (0 is "no record").
fn nonzero(v: u64) -> u64 {
    if v == 0 {
        1
    } else {
        v
    }
}

/// The value a populated slot has when the database is loaded.
pub fn initial_value(rid: Rid) -> u64 {
    nonzero(mix2(
        (u64::from(rid.table.0) << 48) ^ u64::from(rid.page),
        u64::from(rid.slot) + 1,
    ))
}

/// `initial_value` split in its per-page and per-slot halves: the value of slot `s` of a
/// page is `nonzero(mix64(page_key ^ slot_key[s]))` (= `mix2(page, s + 1)`). Building a
/// loaded page of a few hundred index entries on every buffer miss was ~8 % of a TPC-C run
/// with both halves recomputed per slot.
fn initial_page_key(table: TableId, page: u32) -> u64 {
    ((u64::from(table.0) << 48) ^ u64::from(page)).rotate_left(23)
}

fn initial_slot_key(slot: u16) -> u64 {
    mix64((u64::from(slot) + 1) ^ 0x9E37_79B9_7F4A_7C15)
}

/// A digest of the changes of one update (offsets, lengths and what each does).
pub fn changes_digest(changes: &[Change]) -> u64 {
    let mut h = 0x51_7CC1_B727_220Au64;
    for c in changes {
        h = mix2(h, (u64::from(c.offset) << 16) | u64::from(c.len));
        h = match &c.op {
            FieldOp::AddI64(d) => mix2(h ^ 1, *d as u64),
            FieldOp::Fill(s) => mix2(h ^ 2, *s),
            FieldOp::Set(bytes) => bytes.iter().fold(mix2(h, 3), |a, b| mix2(a, u64::from(*b))),
        };
    }
    h
}

/// A record operation reduced to what it does to a slot's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// `v -> mix(v, digest)`.
    Update(u64),
    /// `v -> value derived from the fill seed`.
    Insert(u64),
    Delete,
}

impl Effect {
    pub fn of(op: &RecOp) -> Option<Effect> {
        match op {
            RecOp::Read(_) => None,
            RecOp::Update { changes, .. } => Some(Effect::Update(changes_digest(changes))),
            RecOp::Insert { fill, .. } => Some(Effect::Insert(*fill)),
            RecOp::Delete(_) => Some(Effect::Delete),
        }
    }

    pub fn apply(self, v: u64) -> u64 {
        match self {
            Effect::Update(d) => nonzero(mix2(v, d)),
            Effect::Insert(fill) => nonzero(mix2(0xA11C_E5EE_D000_0001, fill)),
            Effect::Delete => 0,
        }
    }
}

/// Where tables and DB pages are: global page numbers (tables laid out one after another)
/// and their slots.
#[derive(Clone, Debug)]
pub struct Layout {
    pub schema: Schema,
    base: Vec<u64>,
    pub pages: u64,
    /// Device logical pages per DB page.
    pub parts: u32,
    /// Which slots hold a record when the database is loaded (`TxnSource::loaded`); `None`:
    /// every slot of every page below the table's `pages_initial` (the trait's default).
    loaded: Option<Arc<LoadedMap>>,
    /// `initial_slot_key` of every slot number a page of this schema has.
    slot_keys: Arc<Vec<u64>>,
}

/// The loaded state of every DB page, from the source's `loaded` predicate. Almost every
/// page's loaded slots are a prefix `[0, n)` (heap rows packed from slot 0, index leaves
/// filled to their fill factor), so a page is one `u16`: `n`, or `IRREGULAR` with the mask
/// kept aside. (A map of per-page masks, the first version, cost a tree search per slot on
/// every buffer miss: ~20 % of a TPC-C run.)
#[derive(Debug)]
pub struct LoadedMap {
    prefix: Vec<u16>,
    irregular: std::collections::BTreeMap<u64, Vec<bool>>,
}

const IRREGULAR: u16 = u16::MAX;

impl LoadedMap {
    /// Loaded slots of page `p` as a prefix length, or `None` if they are not a prefix.
    fn prefix(&self, p: PageNo) -> Option<u16> {
        let n = self.prefix[p.0 as usize];
        (n != IRREGULAR).then_some(n)
    }

    fn slot(&self, p: PageNo, slot: u16) -> bool {
        match self.prefix(p) {
            Some(n) => slot < n,
            None => self.irregular[&p.0][slot as usize],
        }
    }
}

/// A DB page by its global number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PageNo(pub u64);

impl Layout {
    pub fn new(schema: Schema, parts: u32) -> Layout {
        let base = schema.page_base();
        let pages = schema.pages_max();
        Layout {
            base,
            pages,
            parts: parts.max(1),
            loaded: None,
            slot_keys: Arc::new(
                (0..schema_max_slots(&schema))
                    .map(initial_slot_key)
                    .collect(),
            ),
            schema,
        }
    }

    /// As `new`, with the loaded slots the source says: `TxnSource::loaded_prefix` per page
    /// where the source knows it, else `TxnSource::loaded` once per slot of the page.
    pub fn from_source(source: &dyn workload::db::TxnSource, parts: u32) -> Layout {
        let mut l = Layout::new(source.schema().clone(), parts);
        let mut prefix = Vec::with_capacity(l.pages as usize);
        let mut irregular = std::collections::BTreeMap::new();
        let mut mask = Vec::new();
        for (ti, def) in l.schema.tables.iter().enumerate() {
            let table = TableId(ti as u16);
            for page in 0..def.pages_max {
                if let Some(n) = source.loaded_prefix(table, page) {
                    debug_assert!(n <= def.records_per_page && n != IRREGULAR);
                    prefix.push(n);
                    continue;
                }
                mask.clear();
                mask.extend(
                    (0..def.records_per_page).map(|slot| source.loaded(Rid { table, page, slot })),
                );
                let n = mask.iter().take_while(|b| **b).count();
                if n < usize::from(IRREGULAR) && mask[n..].iter().all(|b| !*b) {
                    prefix.push(n as u16);
                } else {
                    irregular.insert(prefix.len() as u64, mask.clone());
                    prefix.push(IRREGULAR);
                }
            }
        }
        l.loaded = Some(Arc::new(LoadedMap { prefix, irregular }));
        l
    }

    /// Is `slot` of global page `p` populated when the database is loaded?
    pub fn is_loaded(&self, p: PageNo, slot: u16) -> bool {
        match &self.loaded {
            None => {
                let (t, page) = self.locate(p);
                page < self.schema.table(t).pages_initial
            }
            Some(m) => m.slot(p, slot),
        }
    }

    pub fn page_of(&self, rid: Rid) -> PageNo {
        PageNo(self.base[rid.table.0 as usize] + u64::from(rid.page))
    }

    /// (table, page within table) of a global page.
    pub fn locate(&self, p: PageNo) -> (TableId, u32) {
        let t = match self.base.binary_search(&p.0) {
            Ok(i) => {
                // Several tables cannot start at one page (each has ≥ 1 page); take the last
                // table starting here for safety.
                let mut i = i;
                while i + 1 < self.base.len() && self.base[i + 1] == p.0 {
                    i += 1;
                }
                i
            }
            Err(i) => i - 1,
        };
        (TableId(t as u16), (p.0 - self.base[t]) as u32)
    }

    pub fn slots(&self, p: PageNo) -> u16 {
        self.schema.table(self.locate(p).0).records_per_page
    }

    /// Slots per part for a page with `slots` slots.
    pub fn slots_per_part(&self, slots: u16) -> usize {
        (slots as usize).div_ceil(self.parts as usize).max(1)
    }

    /// The slot range of part `k`.
    pub fn part_range(&self, slots: u16, k: u32) -> std::ops::Range<usize> {
        let s = self.slots_per_part(slots);
        let lo = (k as usize * s).min(slots as usize);
        let hi = ((k as usize + 1) * s).min(slots as usize);
        lo..hi
    }

    /// One slot of the page as loaded (`initial_page(p)[slot]` without building the page).
    pub fn initial_slot(&self, p: PageNo, slot: u16) -> u64 {
        if self.is_loaded(p, slot) {
            let (table, page) = self.locate(p);
            initial_value(Rid { table, page, slot })
        } else {
            0
        }
    }

    /// The page as loaded.
    pub fn initial_page(&self, p: PageNo) -> Vec<u64> {
        let (t, page) = self.locate(p);
        let def = self.schema.table(t);
        let key = initial_page_key(t, page);
        let value = |slot: u16| nonzero(mix64(key ^ self.slot_keys[slot as usize]));
        let prefix = match &self.loaded {
            None => Some(if page < def.pages_initial {
                def.records_per_page
            } else {
                0
            }),
            Some(m) => m.prefix(p),
        };
        match prefix {
            Some(n) => {
                // A loop over the loaded prefix the compiler can vectorize, then zeros.
                let mut v = Vec::with_capacity(usize::from(def.records_per_page));
                v.extend(
                    self.slot_keys[..usize::from(n)]
                        .iter()
                        .map(|&k| nonzero(mix64(key ^ k))),
                );
                v.resize(usize::from(def.records_per_page), 0);
                v
            }
            None => (0..def.records_per_page)
                .map(|slot| {
                    if self.is_loaded(p, slot) {
                        value(slot)
                    } else {
                        0
                    }
                })
                .collect(),
        }
    }
}

/// The most slots a page of `schema` has.
fn schema_max_slots(schema: &Schema) -> u16 {
    schema
        .tables
        .iter()
        .map(|t| t.records_per_page)
        .max()
        .unwrap_or(0)
}

/// Tags of the loaded database (`external::load_data_area`): this bit and the LPN.
pub(crate) const LOADED_BIT: u64 = 1 << 61;

/// The tag a loaded database page's part carries at `lpn` (`external::load_data_area`): it
/// reads back as the page as loaded, like an unmapped page (`state::Core::read_page`,
/// `strategy::read_data_pages`).
pub fn loaded_tag(lpn: sim::Lpn) -> u64 {
    LOADED_BIT | u64::from(lpn.0)
}

/// A committed transaction, for the oracle (and the ack log, `acklog`).
#[derive(Clone, Debug)]
pub struct CommitRec {
    pub txn: sim::TxnId,
    pub spec: Arc<workload::db::TxnSpec>,
    pub issue: sim::SimTime,
    pub ack: sim::SimTime,
}

/// An immutable page image.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageImage {
    pub page: PageNo,
    /// The WAL page LSN (0 for strategies without a log).
    pub lsn: u64,
    pub values: Vec<u64>,
}

/// What a device tag stands for.
///
/// The core knows two kinds of content: a part of a page image (every strategy writes
/// those) and the WAL-style master record. Everything else a strategy writes — a WAL log
/// page (`strategy::wal::LogPageImage`), a `cfc-ex` version part, log page or master
/// (`strategy::flagcommit_ex::FcTag`) — is `Strategy`: a value of the strategy's own type
/// behind `StrategyTag`, which the core stores and never looks into. Only the strategy
/// that wrote it reads it back (`TagContent::strategy`, a type-checked downcast: a tag of
/// another strategy's type reads as not its own, as a wrong variant did).
///
/// Why a trait object and not an enum with a variant per strategy: an enum here would
/// name every strategy's types in the data model, so the core would depend on the
/// strategies above it (an import cycle), and adding a strategy would edit the core. The
/// downcast is a type-id comparison on reads the restart makes, off the engine's hot path.
#[derive(Clone, Debug)]
pub enum TagContent {
    /// Part `part` of a page image.
    Data { image: Arc<PageImage>, part: u32 },
    /// The WAL master record: the last complete checkpoint's begin LSN and where redo starts.
    Master { ckpt_lsn: u64, redo_lsn: u64 },
    /// A strategy's own content (a log page, a version part with pending records, its
    /// master record).
    Strategy(Arc<dyn StrategyTag>),
}

/// A strategy's own device content (`TagContent::Strategy`).
pub trait StrategyTag: std::any::Any + std::fmt::Debug + Send + Sync {
    /// The highest transaction id it names (0: none): a run on a recovered medium numbers
    /// its transactions above every id the medium names (`check::run_on`).
    fn max_txn(&self) -> u64;
}

impl TagContent {
    /// The content as strategy type `T`, if it is one.
    pub fn strategy<T: StrategyTag>(&self) -> Option<&T> {
        match self {
            TagContent::Strategy(x) => (&**x as &dyn std::any::Any).downcast_ref::<T>(),
            _ => None,
        }
    }

    /// As `strategy`, sharing the content.
    pub fn strategy_arc<T: StrategyTag>(&self) -> Option<Arc<T>> {
        match self {
            TagContent::Strategy(x) => {
                let a: Arc<dyn std::any::Any + Send + Sync> = x.clone();
                a.downcast::<T>().ok()
            }
            _ => None,
        }
    }
}

/// Tag → content, for every device write of a recorded run. Tags are dense from 1.
///
/// A run that only measures its recovery (not recorded for the crash checker) needs the
/// contents of the tags still on the medium at the end, not of every version ever written:
/// with `prunable`, `retain` forgets the others (`Core::prune_tags`), which bounds the
/// table by the live pages instead of the run's writes.
#[derive(Clone, Debug, Default)]
pub struct TagTable {
    /// None: forgotten by `retain`.
    entries: Vec<Option<TagContent>>,
    /// Off: tags are still allocated, contents not kept (performance runs).
    pub keep: bool,
    next: u64,
    /// Contents may be forgotten (`retain`).
    pub prunable: bool,
    /// `retain_due`: how many contents beyond twice those kept after the last `retain`.
    pub min_growth: u64,
    /// Entries holding contents now, and after the last `retain`.
    kept: u64,
    kept_after_retain: u64,
}

/// `TagTable::min_growth` by default: a table is pruned when it holds this many contents
/// more than twice what it held after its last pruning (so pruning, a pass over the
/// medium's page records, costs O(1) amortised per tag and runs a few times per run).
pub const RETAIN_MIN_GROWTH: u64 = 1 << 16;

impl TagTable {
    pub fn new(keep: bool) -> TagTable {
        TagTable {
            entries: Vec::new(),
            keep,
            next: 1,
            prunable: false,
            min_growth: RETAIN_MIN_GROWTH,
            kept: 0,
            kept_after_retain: 0,
        }
    }

    pub fn add(&mut self, c: impl FnOnce() -> TagContent) -> u64 {
        let t = self.next;
        self.next += 1;
        if self.keep {
            self.entries.push(Some(c()));
            self.kept += 1;
        }
        t
    }

    /// The contents of `tag`; None for tag 0, an unknown tag or one `retain` forgot.
    pub fn get(&self, tag: u64) -> Option<&TagContent> {
        if tag == 0 {
            return None;
        }
        self.entries.get((tag - 1) as usize)?.as_ref()
    }

    pub fn len(&self) -> u64 {
        self.next - 1
    }

    pub fn is_empty(&self) -> bool {
        self.next == 1
    }

    /// Whether a prunable table has grown enough since its last `retain` to prune again.
    pub fn retain_due(&self) -> bool {
        self.prunable
            && self.keep
            && self.kept
                >= self
                    .kept_after_retain
                    .saturating_mul(2)
                    .saturating_add(self.min_growth)
    }

    /// Entries whose contents are kept.
    pub fn kept(&self) -> u64 {
        self.kept
    }

    /// Forgets the contents of every tag for which `live` is false.
    pub fn retain(&mut self, mut live: impl FnMut(u64) -> bool) {
        let mut kept = 0;
        for (i, e) in self.entries.iter_mut().enumerate() {
            if e.is_some() {
                if live(i as u64 + 1) {
                    kept += 1;
                } else {
                    *e = None;
                }
            }
        }
        self.kept = kept;
        self.kept_after_retain = kept;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use workload::db::{Field, TableDef, TableKind};

    fn schema() -> Schema {
        let t = |name, rpp, pages| TableDef {
            name,
            kind: TableKind::Heap,
            record_bytes: 100,
            records_per_page: rpp,
            pages_initial: pages,
            pages_max: pages + 1,
            fields: vec![Field {
                name: "x",
                offset: 0,
                len: 8,
            }],
        };
        Schema {
            name: "t",
            page_bytes: 8192,
            tables: vec![t("a", 10, 2), t("b", 3, 1)],
        }
    }

    #[test]
    fn layout_locates_pages_and_parts() {
        let l = Layout::new(schema(), 4);
        assert_eq!(l.pages, 5);
        let rid = Rid {
            table: TableId(1),
            page: 1,
            slot: 2,
        };
        assert_eq!(l.page_of(rid), PageNo(4));
        assert_eq!(l.locate(PageNo(4)), (TableId(1), 1));
        assert_eq!(l.locate(PageNo(2)), (TableId(0), 2));
        assert_eq!(l.locate(PageNo(3)), (TableId(1), 0));
        // 10 slots over 4 parts: 3,3,3,1; 3 slots over 4 parts: 1,1,1,0.
        assert_eq!(l.part_range(10, 3), 9..10);
        assert_eq!(l.part_range(3, 3), 3..3);
        // Pages beyond pages_initial hold no records.
        assert!(l.initial_page(PageNo(4)).iter().all(|v| *v == 0));
        assert!(l.initial_page(PageNo(0)).iter().all(|v| *v != 0));
    }

    /// A source whose loaded slots are a prefix on some pages and not on others.
    struct Holes(Schema);
    impl workload::db::TxnSource for Holes {
        fn schema(&self) -> &Schema {
            &self.0
        }
        fn next_txn(&mut self, _: u32, _: &mut sim::Rng) -> workload::db::TxnSpec {
            unreachable!()
        }
        fn describe(&self) -> String {
            "holes".into()
        }
        fn loaded(&self, rid: Rid) -> bool {
            match (rid.table.0, rid.page) {
                (0, 0) => rid.slot % 3 != 1, // irregular
                (0, 1) => rid.slot < 4,      // a prefix
                (1, 0) => rid.slot > 0,      // irregular (a hole first)
                _ => false,
            }
        }
    }

    #[test]
    fn loaded_prefixes_and_irregular_pages_agree_with_the_source() {
        let src = Holes(schema());
        let l = Layout::from_source(&src, 4);
        for p in 0..l.pages {
            let page = l.initial_page(PageNo(p));
            let (table, tp) = l.locate(PageNo(p));
            for (slot, v) in page.iter().enumerate() {
                let rid = Rid {
                    table,
                    page: tp,
                    slot: slot as u16,
                };
                let want = workload::db::TxnSource::loaded(&src, rid);
                assert_eq!(l.is_loaded(PageNo(p), slot as u16), want, "{rid:?}");
                assert_eq!(*v != 0, want, "{rid:?}");
                assert_eq!(l.initial_slot(PageNo(p), slot as u16), *v, "{rid:?}");
            }
        }
    }

    /// A source seen only through `loaded` (its `loaded_prefix` hidden).
    struct PerSlot<'a>(&'a dyn workload::db::TxnSource);
    impl workload::db::TxnSource for PerSlot<'_> {
        fn schema(&self) -> &Schema {
            self.0.schema()
        }
        fn next_txn(&mut self, _: u32, _: &mut sim::Rng) -> workload::db::TxnSpec {
            unreachable!()
        }
        fn describe(&self) -> String {
            self.0.describe()
        }
        fn loaded(&self, rid: Rid) -> bool {
            self.0.loaded(rid)
        }
    }

    /// The per-page fast path (`loaded_prefix`) builds the same loaded map as asking every
    /// slot: TPC-C (tiny, with index inner pages and growth regions), TPC-B and TATP (whose
    /// optional rows' pages are irregular and fall back to per-slot questions).
    #[test]
    fn loaded_prefix_builds_the_same_layout_as_per_slot_questions() {
        use workload::db::TxnSource;
        let tpcc = workload::tpcc::Tpcc::new(
            &workload::tpcc::TpccConfig {
                warehouses: 2,
                customers_per_district: 20,
                items: 50,
                max_txns: 300,
                ..Default::default()
            },
            3,
        )
        .unwrap();
        let tpcb = workload::tpcb::Tpcb::new(&workload::tpcb::TpcbConfig {
            branches: 2,
            accounts_per_branch: 500,
            delta_abort: 0.0,
            max_txns: 200,
        })
        .unwrap();
        let tatp = workload::tatp::Tatp::new(
            &workload::tatp::TatpConfig {
                subscribers: 2_000,
                ..Default::default()
            },
            1,
        )
        .unwrap();
        let sources: [&dyn TxnSource; 3] = [&tpcc, &tpcb, &tatp];
        for src in sources {
            let fast = Layout::from_source(src, 4);
            let slow = Layout::from_source(&PerSlot(src), 4);
            let mut prefixed = 0;
            for p in 0..fast.pages {
                let p = PageNo(p);
                let (t, tp) = fast.locate(p);
                prefixed += u32::from(src.loaded_prefix(t, tp).is_some());
                assert_eq!(fast.initial_page(p), slow.initial_page(p), "{p:?}");
                for slot in 0..fast.slots(p) {
                    assert_eq!(fast.is_loaded(p, slot), slow.is_loaded(p, slot));
                }
            }
            assert!(prefixed > 0, "{}", src.describe());
        }
    }

    #[test]
    fn effects_depend_on_order() {
        let a = Effect::Update(1);
        let b = Effect::Update(2);
        assert_ne!(b.apply(a.apply(7)), a.apply(b.apply(7)));
        assert_eq!(Effect::Delete.apply(5), 0);
        assert_ne!(Effect::Insert(3).apply(0), 0);
    }
}
