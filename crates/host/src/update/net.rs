//! Net bytes modified per written-back dirty page, and the DBMS write amplification
//! (in-place-appends.md §1: "in more than 70 % of evicted dirty 8KB-pages, less than 100 bytes
//! of net data is modified … DBMS write-amplification (ratio of written and actually changed
//! bytes) of about 80x").
//!
//! What counts as changed: the bytes the workload's record operations change
//! (`changed_ranges`: from the operation's byte ranges; an added-to 8-byte field only in
//! the bytes that differ), as a *union* per DB page since the page was last written — a
//! byte changed twice counts once. An insert changes its whole record, a delete the first
//! byte of its slot (the slot's status). A rollback step restores one record's before-image;
//! the host does not keep the undone operation's ranges, so a rollback step counts the whole
//! record (an upper bound on the bytes it changes; counted separately in
//! `undo_record_bytes`, so its weight is visible). `Fill`/`Set` ranges count whole, so the
//! net bytes are an upper bound, and the write amplification a lower bound, of a fully
//! byte-compared count.
//!
//! When a page is counted: each time its image is written to the device — an out-of-place
//! page write (`Core::write_image`) or an in-place append (`ipa`): eviction, checkpoint
//! flush, force-at-commit and a rollback's private-frame write alike. A page written with no
//! byte range recorded (e.g. the device-tx strategy re-writing a page it stole) counts as 0
//! bytes modified. Strategies that do not write through `Core::write_image`
//! (flagcommit-ex) are not counted.
//!
//! Invariant: the ranges of a page are disjoint, sorted and non-adjacent (merged on insert).
//! Cost: a few intervals per dirty page; no per-byte sets. The pages' range lists live in a
//! slab whose vectors are reused (a page's list is cleared, not freed, when it is written)
//! and are found through a hash map with a fixed hasher that is never iterated, so nothing
//! here allocates once the slab has grown to the number of pages dirty at once (about the
//! buffer pool's size) and the output does not depend on hashing. The first version, a
//! `BTreeMap` of freshly allocated vectors plus a vector per operation for its ranges, was
//! ~5 % of a TPC-C host benchmark with its allocations.

use crate::data::{Layout, PageNo};
use crate::lock::FixedHash;
use std::collections::BTreeMap;

/// The bytes of a record an operation changes, as (offset in the record, length) ranges.
///
/// An update's `AddI64(d)` field changes only the bytes in which `x` and `x + d` differ
/// (in-place-appends.md §3 logs updates "in byte-granularity"). The host keeps no field
/// bytes (`data.rs`: a digest per record), so the record's digest before the update stands
/// in for `x`: a pseudo-random prior value, which gives the byte-difference count its real
/// distribution (the low bytes `d` reaches, plus a carry into the next byte as often as
/// one happens) without tuning. `Fill` and `Set` ranges count whole (their prior bytes are
/// unknown and overwriting with equal bytes is rare); an insert counts its whole record, a
/// delete one byte (the slot's status).
pub fn changed_ranges(op: &workload::db::RecOp, before: u64, rb: u32) -> Vec<(u32, u32)> {
    let mut v = Vec::new();
    for_each_changed_range(op, before, rb, |s, l| v.push((s, l)));
    v
}

/// `changed_ranges` without the vector: calls `f(offset, len)` for each range, in the same
/// order.
#[inline]
pub fn for_each_changed_range(
    op: &workload::db::RecOp,
    before: u64,
    rb: u32,
    mut f: impl FnMut(u32, u32),
) {
    use workload::db::{FieldOp, RecOp};
    match op {
        RecOp::Read(_) => {}
        RecOp::Update { changes, .. } => {
            for c in changes.iter() {
                match c.op {
                    FieldOp::AddI64(d) if c.len == 8 => {
                        // Bytes where x and x + d differ: the nonzero bytes of x ^ (x + d).
                        let mut diff = before ^ before.wrapping_add(d as u64);
                        while diff != 0 {
                            let i = diff.trailing_zeros() / 8;
                            f(u32::from(c.offset) + i, 1);
                            diff &= !(0xFFu64 << (8 * i));
                        }
                    }
                    _ => f(u32::from(c.offset), u32::from(c.len)),
                }
            }
        }
        RecOp::Insert { .. } => f(0, rb),
        RecOp::Delete(_) => f(0, 1),
    }
}

/// The byte offset and size of record `slot` of `page`.
pub fn slot_bytes(layout: &Layout, page: PageNo, slot: u16) -> (u32, u32) {
    let (t, _) = layout.locate(page);
    let rb = u32::from(layout.schema.table(t).record_bytes);
    (u32::from(slot) * rb, rb)
}

/// Histogram buckets of net bytes per written page: upper bounds (inclusive), bytes.
pub const BUCKETS_BYTES: &[u64] = &[10, 50, 99, 500, 1000, 4096, u64::MAX];

/// Bucket labels (metric keys), same order as `BUCKETS_BYTES`.
pub const BUCKET_NAMES: &[&str] = &[
    "le_10", "le_50", "lt_100", "le_500", "le_1000", "le_4096", "more",
];

#[derive(Default)]
pub struct NetBytes {
    /// Dirty DB page → its index in `lists`. Looked up, never iterated.
    dirty: hashbrown::HashMap<PageNo, u32, FixedHash>,
    /// Changed byte ranges of a dirty DB page since its last write; entries not named by
    /// `dirty` are empty and listed in `free`.
    lists: Vec<Ranges>,
    free: Vec<u32>,
    /// Pages written (out of place or by an append).
    pub pages_written: u64,
    /// Sum over written pages of their net modified bytes.
    pub bytes_changed: u64,
    /// Bytes the host sent the device for those writes (whole pages, or delta records).
    pub bytes_written: u64,
    /// Bytes counted from rollback steps (whole records, an upper bound).
    pub undo_record_bytes: u64,
    pub hist: [u64; 7],
}

/// The report (docs/METRICS.md, `net_bytes`).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct NetBytesMetrics {
    pub pages_written: u64,
    pub bytes_changed: u64,
    pub bytes_written: u64,
    pub undo_record_bytes: u64,
    /// Net modified bytes per written page: (bucket, pages).
    pub hist: BTreeMap<String, u64>,
    /// Share of written pages with fewer than 100 bytes modified.
    pub share_lt_100_bytes: f64,
    /// Mean net modified bytes per written page.
    pub bytes_changed_mean: f64,
    /// `bytes_written / bytes_changed` (0 when nothing changed).
    pub dbms_write_amplification: f64,
}

/// The changed bytes of one page: sorted, disjoint, non-adjacent ranges [start, end) and
/// their total length (kept as ranges are added, so a write need not read the ranges: on
/// eviction they are long out of cache).
#[derive(Default)]
struct Ranges {
    v: Vec<(u32, u32)>,
    bytes: u64,
}

impl Ranges {
    /// Bytes [s, s + len) join the ranges: ranges overlapping or touching them are merged
    /// into one.
    #[inline]
    fn union(&mut self, s: u32, len: u32) {
        if len == 0 {
            return;
        }
        let v = &mut self.v;
        let (mut s, mut e) = (s, s + len);
        let i = v.partition_point(|r| r.1 < s);
        let mut j = i;
        let mut merged = 0u64;
        while j < v.len() && v[j].0 <= e {
            s = s.min(v[j].0);
            e = e.max(v[j].1);
            merged += u64::from(v[j].1 - v[j].0);
            j += 1;
        }
        if i == j {
            v.insert(i, (s, e));
        } else {
            v[i] = (s, e);
            v.drain(i + 1..j);
        }
        self.bytes = self.bytes + u64::from(e - s) - merged;
        debug_assert_eq!(
            self.bytes,
            self.v.iter().map(|r| u64::from(r.1 - r.0)).sum::<u64>()
        );
    }
}

impl NetBytes {
    /// The range list of `page`, made (from the free slab entries first) if it has none.
    fn list(&mut self, page: PageNo) -> &mut Ranges {
        let i = match self.dirty.entry(page) {
            hashbrown::hash_map::Entry::Occupied(o) => *o.get(),
            hashbrown::hash_map::Entry::Vacant(v) => {
                let i = match self.free.pop() {
                    Some(i) => i,
                    None => {
                        self.lists.push(Ranges::default());
                        (self.lists.len() - 1) as u32
                    }
                };
                *v.insert(i)
            }
        };
        &mut self.lists[i as usize]
    }

    /// Bytes [start, start + len) of `page` changed.
    pub fn add(&mut self, page: PageNo, start: u32, len: u32) {
        if len == 0 {
            return;
        }
        self.list(page).union(start, len);
    }

    /// A record operation on `page`; `before` is the record's value before it (its digest,
    /// standing in for the prior bytes of an added-to field, see `changed_ranges`).
    pub fn on_op(&mut self, layout: &Layout, page: PageNo, op: &workload::db::RecOp, before: u64) {
        if !op.writes() {
            return;
        }
        let (base, rb) = slot_bytes(layout, page, op.rid().slot);
        let v = self.list(page);
        for_each_changed_range(op, before, rb, |s, l| v.union(base + s, l));
    }

    /// A rollback step restored record `slot` of `page`.
    pub fn on_undo(&mut self, layout: &Layout, page: PageNo, slot: u16) {
        let (base, rb) = slot_bytes(layout, page, slot);
        self.undo_record_bytes += u64::from(rb);
        self.add(page, base, rb);
    }

    /// Net modified bytes of `page` now (without resetting).
    pub fn pending(&self, page: PageNo) -> u64 {
        self.dirty
            .get(&page)
            .map_or(0, |&i| self.lists[i as usize].bytes)
    }

    /// `page` was written, `sent` bytes crossing to the device; returns its net bytes.
    pub fn written(&mut self, page: PageNo, sent: u64) -> u64 {
        let n = match self.dirty.remove(&page) {
            Some(i) => {
                let r = &mut self.lists[i as usize];
                let n = r.bytes;
                r.v.clear();
                r.bytes = 0;
                self.free.push(i);
                n
            }
            None => 0,
        };
        self.pages_written += 1;
        self.bytes_changed += n;
        self.bytes_written += sent;
        let i = BUCKETS_BYTES.iter().position(|b| n <= *b).unwrap_or(6);
        self.hist[i] += 1;
        n
    }

    pub fn metrics(&self) -> NetBytesMetrics {
        let lt100: u64 = self.hist[..3].iter().sum();
        NetBytesMetrics {
            pages_written: self.pages_written,
            bytes_changed: self.bytes_changed,
            bytes_written: self.bytes_written,
            undo_record_bytes: self.undo_record_bytes,
            hist: BUCKET_NAMES
                .iter()
                .zip(self.hist)
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            share_lt_100_bytes: if self.pages_written == 0 {
                0.0
            } else {
                lt100 as f64 / self.pages_written as f64
            },
            bytes_changed_mean: if self.pages_written == 0 {
                0.0
            } else {
                self.bytes_changed as f64 / self.pages_written as f64
            },
            dbms_write_amplification: if self.bytes_changed == 0 {
                0.0
            } else {
                self.bytes_written as f64 / self.bytes_changed as f64
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_counts_a_byte_once() {
        let mut n = NetBytes::default();
        let p = PageNo(3);
        n.add(p, 100, 8);
        n.add(p, 104, 8); // overlaps 4
        n.add(p, 100, 8); // again
        assert_eq!(n.pending(p), 12);
        n.add(p, 112, 2); // adjacent: merged
        n.add(p, 10, 1);
        n.add(p, 0, 5);
        assert_eq!(n.pending(p), 14 + 1 + 5);
        n.add(p, 0, 200); // swallows everything
        assert_eq!(n.pending(p), 200);
        assert_eq!(n.written(p, 8192), 200);
        assert_eq!(n.pending(p), 0);
        // Written again with nothing changed: 0 bytes.
        assert_eq!(n.written(p, 8192), 0);
        let m = n.metrics();
        assert_eq!(m.pages_written, 2);
        assert_eq!(m.bytes_changed, 200);
        assert!((m.dbms_write_amplification - 16384.0 / 200.0).abs() < 1e-9);
        assert!((m.share_lt_100_bytes - 0.5).abs() < 1e-9);
    }

    #[test]
    fn an_added_field_changes_only_its_differing_bytes() {
        use workload::db::{Change, FieldOp, RecOp, Rid, TableId};
        let rid = Rid {
            table: TableId(0),
            page: 0,
            slot: 0,
        };
        let up = |d: i64| RecOp::Update {
            rid,
            changes: [Change {
                offset: 16,
                len: 8,
                op: FieldOp::AddI64(d),
            }]
            .into(),
        };
        // 0x..10 + 1: one byte; 0x..FF + 1: a carry into the next byte.
        assert_eq!(changed_ranges(&up(1), 0x1234_5610, 100), vec![(16, 1)]);
        assert_eq!(
            changed_ranges(&up(1), 0x1234_56FF, 100),
            vec![(16, 1), (17, 1)]
        );
        // A delta reaching 3 bytes changes 3 bytes (no carry here).
        assert_eq!(changed_ranges(&up(0x01_0101), 0x10_1010, 100).len(), 3);
        let fill = RecOp::Update {
            rid,
            changes: [Change {
                offset: 4,
                len: 20,
                op: FieldOp::Fill(9),
            }]
            .into(),
        };
        assert_eq!(changed_ranges(&fill, 0, 100), vec![(4, 20)]);
        assert_eq!(changed_ranges(&RecOp::Delete(rid), 0, 100), vec![(0, 1)]);
    }

    /// The byte-by-byte rule `changed_ranges` had before it used `x ^ (x + d)`.
    fn differing_bytes(offset: u16, before: u64, d: i64) -> Vec<(u32, u32)> {
        let x = before.to_le_bytes();
        let y = before.wrapping_add(d as u64).to_le_bytes();
        (0..8)
            .filter(|&i| x[i] != y[i])
            .map(|i| (u32::from(offset) + i as u32, 1))
            .collect()
    }

    #[test]
    fn added_fields_match_the_byte_by_byte_rule() {
        use workload::db::{Change, FieldOp, RecOp, Rid, TableId};
        let rid = Rid {
            table: TableId(0),
            page: 0,
            slot: 0,
        };
        let mut x = 11u64;
        for k in 0..20_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let before = x.rotate_left(k % 64);
            // Small and large, positive and negative deltas; some zero.
            let d = match k % 4 {
                0 => (x >> 60) as i64 - 8,
                1 => (x >> 40) as i64,
                2 => -((x >> 20) as i64),
                _ => x as i64,
            };
            let op = RecOp::Update {
                rid,
                changes: [
                    Change {
                        offset: 8,
                        len: 8,
                        op: FieldOp::AddI64(d),
                    },
                    Change {
                        offset: 40,
                        len: 3,
                        op: FieldOp::Fill(x),
                    },
                ]
                .into(),
            };
            let mut want = differing_bytes(8, before, d);
            want.push((40, 3));
            assert_eq!(changed_ranges(&op, before, 100), want, "{before:#x} + {d}");
        }
    }

    /// NetBytes against the representation it replaced (a byte set per page, removed when
    /// written) over many pages with writes interleaved, so slab entries are reused.
    #[test]
    fn many_pages_with_writes_match_per_page_byte_sets() {
        let mut n = NetBytes::default();
        let mut sets: BTreeMap<u64, std::collections::BTreeSet<u32>> = BTreeMap::new();
        let (mut changed, mut written) = (0u64, 0u64);
        let mut x = 3u64;
        for _ in 0..50_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let page = (x >> 58) % 40;
            if (x >> 20) % 8 == 0 {
                let want = sets.remove(&page).map_or(0, |s| s.len() as u64);
                assert_eq!(n.written(PageNo(page), 8192), want);
                changed += want;
                written += 1;
            } else {
                let s = ((x >> 33) % 8000) as u32;
                let l = ((x >> 24) % 40) as u32;
                n.add(PageNo(page), s, l);
                if l > 0 {
                    sets.entry(page).or_default().extend(s..s + l);
                }
            }
            let probe = (x >> 10) % 40;
            assert_eq!(
                n.pending(PageNo(probe)),
                sets.get(&probe).map_or(0, |s| s.len() as u64)
            );
        }
        assert_eq!(n.pages_written, written);
        assert_eq!(n.bytes_changed, changed);
        // At most one list per page ever dirty at once.
        assert!(n.lists.len() <= 40, "{}", n.lists.len());
    }

    #[test]
    fn random_ranges_match_a_byte_set() {
        let mut n = NetBytes::default();
        let mut set = std::collections::BTreeSet::new();
        let mut x = 7u64;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let s = ((x >> 33) % 500) as u32;
            let l = ((x >> 20) % 12) as u32;
            n.add(PageNo(0), s, l);
            set.extend(s..s + l);
            assert_eq!(n.pending(PageNo(0)), set.len() as u64);
        }
    }
}
