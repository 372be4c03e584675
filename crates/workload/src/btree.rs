//! Page-layout functions shared by the schema-aware generators (TPC-C, TPC-B, TATP): how many
//! records fit a slotted 8 KiB page, append regions that grow a table through inserts, and a
//! B-tree index model whose root, inner and leaf pages are read on lookups and whose leaves
//! take inserts and deletes.
//!
//! The page model (docs/WORKLOADS.md, "TPC-C, TPC-B, TATP"): a slotted page with
//! a 24 B header and a 4 B slot (line pointer) per record; records are stored at their
//! specification size with no per-record MVCC header (commitlab's host is not multi-version).
//! Heap pages are loaded 100 % full; B-tree pages are loaded to a 90 % fill factor
//! (PostgreSQL's default for B-tree leaves) and an index entry is its key rounded up to 8
//! bytes plus an 8 B tuple pointer.
//!
//! The index model: a B-tree table is laid out as `[root][inner levels…][leaves]`. Leaves
//! are numbered 0.. in allocation order; inner page `j` at height `h` covers leaves
//! `[j·F^h, (j+1)·F^h)` for fanout `F`, so a lookup of leaf `l` reads one entry per level
//! (the slot of the child it descends to) and then the leaf entry. Keys loaded at build
//! time are packed in key order into the first leaves; keys inserted later go to leaves
//! taken from the end of the index, one run of leaves per partition (e.g. per TPC-C
//! district, whose new order ids all sort after its loaded ones — what a B-tree's
//! rightmost split does). Inner pages are sized for the largest index the run can reach
//! and are only ever read: leaf splits' parent updates are not modelled (they are rare, one
//! per ~260 inserts, and would make the root an exclusive hot spot that real engines
//! protect with latches, not transaction locks).
//!
//! What this does not do: keep keys (positions are computed from ordinals the generator
//! tracks), rebalance, or merge leaves after deletes (deleted entries stay free).

use crate::db::{Field, RecOp, Rid, TableDef, TableId, TableKind, DB_PAGE_BYTES};
use sim::Rng;

/// Fields from `(name, offset, len)` triples.
pub fn fields(spec: &[(&'static str, u16, u16)]) -> Vec<Field> {
    spec.iter()
        .map(|&(name, offset, len)| Field { name, offset, len })
        .collect()
}

/// A stateless 64-bit mix (SplitMix64's finaliser): per-record load-time attributes
/// (bad credit, TATP's optional rows) are functions of (seed, record) so nothing has to be
/// stored to answer `loaded()`.
#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Slotted-page header.
pub const PAGE_HEADER_BYTES: u32 = 24;
/// Slot (line pointer) per record.
pub const SLOT_BYTES: u32 = 4;
/// B-tree fill factor at load, in percent.
pub const BTREE_FILL_PCT: u32 = 90;
/// Bytes of an index entry besides its key (tuple pointer and flags).
pub const INDEX_POINTER_BYTES: u32 = 8;

/// Records of `record_bytes` that fit one slotted DB page.
pub fn heap_records_per_page(record_bytes: u16) -> u16 {
    ((DB_PAGE_BYTES - PAGE_HEADER_BYTES) / (u32::from(record_bytes) + SLOT_BYTES)).min(0xFFFF)
        as u16
}

/// Bytes of an index entry with a key of `key_bytes`.
pub fn index_entry_bytes(key_bytes: u16) -> u16 {
    (u32::from(key_bytes).div_ceil(8) * 8 + INDEX_POINTER_BYTES) as u16
}

/// TPC-C's NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x
/// (TPC-C 5.11 §2.1.6); TATP uses the same form.
#[inline]
pub fn nurand(rng: &mut Rng, a: u64, x: u64, y: u64, c: u64) -> u64 {
    (((rng.range_inclusive(0, a) | rng.range_inclusive(x, y)) + c) % (y - x + 1)) + x
}

/// Division by a run-time constant through a precomputed reciprocal (Lemire, Kaser and
/// Kurz, "Faster remainder by direct computation", 2019): exact for every `u32` dividend.
/// Generators divide ordinals by records-per-page and fanouts several hundred times per
/// transaction; a hardware divide costs tens of cycles, this one multiply.
#[derive(Clone, Copy, Debug)]
pub struct Div32 {
    d: u32,
    m: u64,
}

impl Div32 {
    pub fn new(d: u32) -> Div32 {
        assert!(d > 0);
        Div32 {
            d,
            m: if d == 1 {
                0
            } else {
                u64::MAX / u64::from(d) + 1
            },
        }
    }
    #[inline]
    pub fn get(self) -> u32 {
        self.d
    }
    /// `(a / d, a % d)`.
    #[inline]
    pub fn divmod(self, a: u32) -> (u32, u32) {
        if self.d == 1 {
            return (a, 0);
        }
        let q = ((u128::from(self.m) * u128::from(a)) >> 64) as u32;
        (q, a - q * self.d)
    }
    /// `(a / d, a % d)` for a 64-bit dividend (the fast path when it fits 32 bits).
    #[inline]
    pub fn divmod64(self, a: u64) -> (u64, u32) {
        if a <= u64::from(u32::MAX) {
            let (q, r) = self.divmod(a as u32);
            (u64::from(q), r)
        } else {
            (a / u64::from(self.d), (a % u64::from(self.d)) as u32)
        }
    }
}

/// Pages a table grows into through appends, handed out from one pool (the end of the
/// table) to partitions one page at a time — how a heap file or a B-tree extends.
///
/// Invariant: each partition's pages are distinct and lie in `[first, limit)`; the `k`-th
/// entry appended to partition `p` lives in `pages[p][k / per_page]`, slot
/// `k % per_page`. When the pool is exhausted (only possible once the generator has run
/// past the `max_txns` it was sized for) it wraps to `first`: later inserts then land on
/// slots that earlier ones used, which a host must treat as overwrites.
#[derive(Clone, Debug)]
pub struct Appender {
    per_page: Div32,
    first: u32,
    next: u32,
    limit: u32,
    pages: Vec<Vec<u32>>,
    counts: Vec<u64>,
    wrapped: bool,
}

impl Appender {
    /// `partitions` runs over pages `[first, first + pages)`, `per_page` entries a page.
    pub fn new(partitions: usize, per_page: u32, first: u32, pages: u32) -> Appender {
        assert!(per_page > 0 && pages > 0 && partitions > 0);
        Appender {
            per_page: Div32::new(per_page),
            first,
            next: first,
            limit: first + pages,
            pages: vec![Vec::new(); partitions],
            counts: vec![0; partitions],
            wrapped: false,
        }
    }

    /// Pages needed for `entries` appended over `partitions` partitions in the worst case.
    pub fn pages_for(entries: u64, partitions: u64, per_page: u32) -> u64 {
        entries.div_ceil(u64::from(per_page)) + partitions
    }

    /// Entries appended to partition `p` so far.
    pub fn count(&self, p: usize) -> u64 {
        self.counts[p]
    }

    pub fn wrapped(&self) -> bool {
        self.wrapped
    }

    /// Where the `k`-th entry of partition `p` lives, `k` < `count(p)` + anything: entries
    /// beyond the pages already taken are placed on the pages the pool would hand out next
    /// (used to name the slots of a transaction that rolls back and so appends nothing).
    #[inline]
    pub fn locate(&self, p: usize, k: u64) -> (u32, u16) {
        let (idx, slot) = self.per_page.divmod64(k);
        let (idx, slot) = (idx as usize, slot as u16);
        let have = &self.pages[p];
        let page = if idx < have.len() {
            have[idx]
        } else {
            let span = u64::from(self.limit - self.first);
            let ahead = u64::from(self.next - self.first) + (idx - have.len()) as u64;
            self.first + (ahead % span) as u32
        };
        (page, slot)
    }

    /// Append one entry to partition `p`; returns its place.
    pub fn push(&mut self, p: usize) -> (u32, u16) {
        let k = self.counts[p];
        let (idx, slot) = self.per_page.divmod64(k);
        if slot == 0 && idx as usize >= self.pages[p].len() {
            if self.next >= self.limit {
                self.next = self.first;
                self.wrapped = true;
            }
            self.pages[p].push(self.next);
            self.next += 1;
        }
        self.counts[p] = k + 1;
        self.locate(p, k)
    }

    /// Hands partition `p` the pages its next `n` entries need, without appending them, so
    /// `locate` names where they will go whatever other partitions take in the meantime. A
    /// transaction whose rows are named when it executes (not when it commits) reserves
    /// them then; pages reserved by one that rolls back serve the partition's next entries.
    pub fn reserve(&mut self, p: usize, n: u64) {
        let need = self.counts[p] + n;
        if need == 0 {
            return;
        }
        let (idx, _) = self.per_page.divmod64(need - 1);
        while self.pages[p].len() <= idx as usize {
            if self.next >= self.limit {
                self.next = self.first;
                self.wrapped = true;
            }
            self.pages[p].push(self.next);
            self.next += 1;
        }
    }

    /// Entries per page.
    pub fn per_page(&self) -> u32 {
        self.per_page.get()
    }
}

/// A B-tree index over one table (see the module doc for the layout).
#[derive(Clone, Debug)]
pub struct Index {
    pub table: TableId,
    /// Entries per leaf page (at the fill factor) and per inner page (the fanout F).
    per_leaf: Div32,
    /// First page of each inner level from the root down, and `F^(height − 1)`: a leaf `l`
    /// descends through entry `(l / F^(height−1)) % F` of page `l / F^height`.
    inner: Vec<(u32, Div32)>,
    leaf_base: u32,
    leaves_initial: u32,
    growth: Option<Appender>,
}

impl Index {
    /// An index of `initial` loaded entries plus up to `growth_entries` appended over
    /// `partitions` partitions. Returns the model and its table definition.
    pub fn build(
        table: TableId,
        name: &'static str,
        key_bytes: u16,
        initial: u64,
        partitions: usize,
        growth_entries: u64,
    ) -> Result<(Index, TableDef), String> {
        let entry = index_entry_bytes(key_bytes);
        let rpp = heap_records_per_page(entry);
        let per_leaf = (u32::from(rpp) * BTREE_FILL_PCT / 100).max(2);
        let leaves_initial = initial.div_ceil(u64::from(per_leaf)).max(1);
        let growth_leaves = if growth_entries > 0 {
            Appender::pages_for(growth_entries, partitions as u64, per_leaf)
        } else {
            0
        };
        let leaves_max = leaves_initial + growth_leaves;
        let fanout = u64::from(per_leaf);
        // Inner levels, bottom-up: page counts.
        let mut levels = Vec::new();
        let mut n = leaves_max;
        let mut div = 1u64;
        while n > 1 {
            n = n.div_ceil(fanout);
            div *= fanout;
            levels.push((n, div));
        }
        levels.reverse();
        let mut inner = Vec::with_capacity(levels.len());
        let mut page = 0u64;
        for &(n, div) in &levels {
            // F^(height−1) < leaves_max, so it fits 32 bits.
            inner.push((page as u32, Div32::new((div / fanout) as u32)));
            page += n;
        }
        let pages_max = page + leaves_max;
        if pages_max > u64::from(u32::MAX) / 2 {
            return Err(format!("index {name} would need {pages_max} pages"));
        }
        let leaf_base = page as u32;
        let growth = (growth_leaves > 0).then(|| {
            Appender::new(
                partitions,
                per_leaf,
                leaves_initial as u32,
                growth_leaves as u32,
            )
        });
        let def = TableDef {
            name,
            kind: TableKind::Index,
            record_bytes: entry,
            records_per_page: rpp,
            pages_initial: leaf_base + leaves_initial as u32,
            pages_max: pages_max as u32,
            fields: Vec::new(),
        };
        Ok((
            Index {
                table,
                per_leaf: Div32::new(per_leaf),
                inner,
                leaf_base,
                leaves_initial: leaves_initial as u32,
                growth,
            },
            def,
        ))
    }

    /// Leaf and slot of the `ord`-th loaded entry (key order).
    #[inline]
    pub fn loaded_pos(&self, ord: u64) -> (u32, u16) {
        let (q, r) = self.per_leaf.divmod64(ord);
        (q as u32, r as u16)
    }

    /// Leaf and slot of the `k`-th entry appended to partition `p`.
    #[inline]
    pub fn grown_pos(&self, p: usize, k: u64) -> (u32, u16) {
        self.growth
            .as_ref()
            .expect("index without growth")
            .locate(p, k)
    }

    /// Append an entry to partition `p` (commit) or name where it would go (`ahead`-th
    /// upcoming entry, for a transaction that rolls back).
    pub fn append_pos(&mut self, p: usize, commit: bool, ahead: u64) -> (u32, u16) {
        let g = self.growth.as_mut().expect("index without growth");
        if commit {
            g.push(p)
        } else {
            g.locate(p, g.count(p) + ahead)
        }
    }

    /// Entries appended to partition `p` so far.
    pub fn grown(&self, p: usize) -> u64 {
        self.growth.as_ref().map_or(0, |g| g.count(p))
    }

    /// `Appender::reserve` for partition `p`'s next `n` entries.
    pub fn reserve(&mut self, p: usize, n: u64) {
        if let Some(g) = self.growth.as_mut() {
            g.reserve(p, n);
        }
    }

    pub fn wrapped(&self) -> bool {
        self.growth.as_ref().is_some_and(|g| g.wrapped())
    }

    #[inline]
    pub fn leaf_rid(&self, leaf: u32, slot: u16) -> Rid {
        Rid {
            table: self.table,
            page: self.leaf_base + leaf,
            slot,
        }
    }

    /// Read the root and inner entries on the way to `leaf`.
    #[inline]
    pub fn descend(&self, ops: &mut Vec<RecOp>, leaf: u32) {
        for &(base, sub) in &self.inner {
            let (q, _) = sub.divmod(leaf);
            let (page, slot) = self.per_leaf.divmod(q);
            let (page, slot) = (base + page, slot as u16);
            ops.push(RecOp::Read(Rid {
                table: self.table,
                page,
                slot,
            }));
        }
    }

    /// A point lookup: the path and the leaf entry.
    #[inline]
    pub fn lookup(&self, ops: &mut Vec<RecOp>, (leaf, slot): (u32, u16)) {
        self.descend(ops, leaf);
        ops.push(RecOp::Read(self.leaf_rid(leaf, slot)));
    }

    /// Insert an entry: the path, then the leaf entry.
    #[inline]
    pub fn insert(&self, ops: &mut Vec<RecOp>, (leaf, slot): (u32, u16), fill: u64) {
        self.descend(ops, leaf);
        ops.push(RecOp::Insert {
            rid: self.leaf_rid(leaf, slot),
            fill,
        });
    }

    /// Delete an entry: the path, then the leaf entry.
    #[inline]
    pub fn delete(&self, ops: &mut Vec<RecOp>, (leaf, slot): (u32, u16)) {
        self.descend(ops, leaf);
        ops.push(RecOp::Delete(self.leaf_rid(leaf, slot)));
    }

    /// Is this entry populated when the index is loaded (`loaded` entries in key order)?
    pub fn loaded(&self, rid: Rid, loaded: u64) -> bool {
        if rid.page < self.leaf_base {
            // Inner pages: every entry up to the fanout is a (possibly future) child pointer.
            return u32::from(rid.slot) < self.per_leaf.get();
        }
        let leaf = rid.page - self.leaf_base;
        if leaf >= self.leaves_initial || u32::from(rid.slot) >= self.per_leaf.get() {
            return false;
        }
        u64::from(leaf) * u64::from(self.per_leaf.get()) + u64::from(rid.slot) < loaded
    }

    /// `loaded` for a whole page: its loaded entries are the prefix `[0, n)` of its slots
    /// (`n` not clamped to the page's records per page; the caller does that).
    pub fn loaded_prefix(&self, page: u32, loaded: u64) -> u32 {
        let per = self.per_leaf.get();
        if page < self.leaf_base {
            return per;
        }
        let leaf = page - self.leaf_base;
        if leaf >= self.leaves_initial {
            return 0;
        }
        loaded
            .saturating_sub(u64::from(leaf) * u64::from(per))
            .min(u64::from(per)) as u32
    }

    /// Levels read by a lookup, the leaf included.
    pub fn height(&self) -> usize {
        self.inner.len() + 1
    }
}

/// A table's heap rows addressed by ordinal: `loaded` rows packed from page 0, then
/// append runs per partition after them.
#[derive(Clone, Debug)]
pub struct Heap {
    pub table: TableId,
    rpp: Div32,
    pub loaded: u64,
    growth: Option<Appender>,
}

impl Heap {
    /// Returns the heap and its table definition (`fields` filled in by the caller).
    pub fn build(
        table: TableId,
        name: &'static str,
        record_bytes: u16,
        loaded: u64,
        partitions: usize,
        growth_entries: u64,
    ) -> Result<(Heap, TableDef), String> {
        let rpp = heap_records_per_page(record_bytes);
        let pages_initial = loaded.div_ceil(u64::from(rpp)).max(1);
        let growth_pages = if growth_entries > 0 {
            Appender::pages_for(growth_entries, partitions as u64, u32::from(rpp))
        } else {
            0
        };
        let pages_max = pages_initial + growth_pages;
        if pages_max > u64::from(u32::MAX) / 2 {
            return Err(format!("table {name} would need {pages_max} pages"));
        }
        let growth = (growth_pages > 0).then(|| {
            Appender::new(
                partitions,
                u32::from(rpp),
                pages_initial as u32,
                growth_pages as u32,
            )
        });
        Ok((
            Heap {
                table,
                rpp: Div32::new(u32::from(rpp)),
                loaded,
                growth,
            },
            TableDef {
                name,
                kind: TableKind::Heap,
                record_bytes,
                records_per_page: rpp,
                pages_initial: pages_initial as u32,
                pages_max: pages_max as u32,
                fields: Vec::new(),
            },
        ))
    }

    #[inline]
    pub fn loaded_rid(&self, ord: u64) -> Rid {
        let (page, slot) = self.rpp.divmod64(ord);
        Rid {
            table: self.table,
            page: page as u32,
            slot: slot as u16,
        }
    }

    #[inline]
    pub fn grown_rid(&self, p: usize, k: u64) -> Rid {
        let (page, slot) = self
            .growth
            .as_ref()
            .expect("heap without growth")
            .locate(p, k);
        Rid {
            table: self.table,
            page,
            slot,
        }
    }

    /// Append a row to partition `p` (commit) or name where the `ahead`-th upcoming one
    /// would go (a transaction that rolls back).
    pub fn append_rid(&mut self, p: usize, commit: bool, ahead: u64) -> Rid {
        let g = self.growth.as_mut().expect("heap without growth");
        let (page, slot) = if commit {
            g.push(p)
        } else {
            g.locate(p, g.count(p) + ahead)
        };
        Rid {
            table: self.table,
            page,
            slot,
        }
    }

    pub fn grown(&self, p: usize) -> u64 {
        self.growth.as_ref().map_or(0, |g| g.count(p))
    }

    /// `Appender::reserve` for partition `p`'s next `n` rows.
    pub fn reserve(&mut self, p: usize, n: u64) {
        if let Some(g) = self.growth.as_mut() {
            g.reserve(p, n);
        }
    }

    pub fn wrapped(&self) -> bool {
        self.growth.as_ref().is_some_and(|g| g.wrapped())
    }

    /// Is this slot populated at load?
    pub fn loaded(&self, rid: Rid) -> bool {
        u64::from(rid.page) * u64::from(self.rpp.get()) + u64::from(rid.slot) < self.loaded
            && u32::from(rid.slot) < self.rpp.get()
    }
}

impl Heap {
    /// `loaded` for a whole page: its loaded rows are the prefix `[0, n)` of its slots.
    pub fn loaded_prefix(&self, page: u32) -> u16 {
        let rpp = self.rpp.get();
        self.loaded
            .saturating_sub(u64::from(page) * u64::from(rpp))
            .min(u64::from(rpp)) as u16
    }
}

/// CPU time of the calling thread in ns (Linux `/proc/thread-self/schedstat`), for the
/// generation-rate measurements; falls back to 0 where unavailable. Not used on any
/// simulation path.
pub fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|x| x.parse().ok()))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_per_page_follow_the_slotted_page_model() {
        // (8192 − 24) / (306 + 4) = 26 stock rows; 655 B customers: 12.
        assert_eq!(heap_records_per_page(306), 26);
        assert_eq!(heap_records_per_page(655), 12);
        assert_eq!(index_entry_bytes(12), 24);
        assert_eq!(index_entry_bytes(4), 16);
    }

    #[test]
    fn div32_matches_hardware_division() {
        let mut rng = Rng::new(5);
        for d in [
            1u32,
            2,
            3,
            7,
            26,
            140,
            261,
            291,
            408,
            65_535,
            1 << 20,
            u32::MAX,
        ] {
            let q = Div32::new(d);
            for a in [0u32, 1, d - 1, d, d.wrapping_add(1), u32::MAX, u32::MAX - 1] {
                assert_eq!(q.divmod(a), (a / d, a % d), "{a} / {d}");
            }
            for _ in 0..10_000 {
                let a = rng.next_u64() as u32;
                assert_eq!(q.divmod(a), (a / d, a % d), "{a} / {d}");
                let b = rng.next_u64() >> (rng.below(64) as u32);
                assert_eq!(q.divmod64(b), (b / u64::from(d), (b % u64::from(d)) as u32));
            }
        }
    }

    #[test]
    fn appender_gives_distinct_slots_and_peeks_where_it_will_push() {
        let mut a = Appender::new(3, 4, 10, 20);
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..30u64 {
            let p = (i * 7 % 3) as usize;
            let peek = a.locate(p, a.count(p));
            let got = a.push(p);
            assert_eq!(peek, got);
            assert!(got.0 >= 10 && got.0 < 30);
            assert!(seen.insert(got), "slot {got:?} handed out twice");
        }
        assert!(!a.wrapped());
    }

    #[test]
    fn appender_wraps_only_past_its_pool() {
        let mut a = Appender::new(1, 2, 0, 2);
        for _ in 0..4 {
            a.push(0);
        }
        assert!(!a.wrapped());
        assert_eq!(a.push(0), (0, 0));
        assert!(a.wrapped());
    }

    #[test]
    fn index_paths_have_one_entry_per_level_and_stay_inside_the_table() {
        let (ix, def) = Index::build(TableId(0), "ix", 12, 600_000, 200, 100_000).unwrap();
        assert_eq!(ix.height(), 3);
        let mut ops = Vec::new();
        for ord in [0u64, 1, 261, 262, 599_999] {
            ops.clear();
            ix.lookup(&mut ops, ix.loaded_pos(ord));
            assert_eq!(ops.len(), 3);
            assert_eq!(ops[0].rid().page, 0, "first read is the root");
            for op in &ops {
                let r = op.rid();
                assert!(
                    r.page < def.pages_max && r.slot < def.records_per_page,
                    "{r:?}"
                );
            }
            assert!(ix.loaded(ops[2].rid(), 600_000));
        }
        // Neighbouring leaves share their parent entry page.
        let mut a = Vec::new();
        let mut b = Vec::new();
        ix.lookup(&mut a, (0, 0));
        ix.lookup(&mut b, (1, 0));
        assert_eq!(a[1].rid().page, b[1].rid().page);
        assert_ne!(a[1].rid().slot, b[1].rid().slot);
    }
}
