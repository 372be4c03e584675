//! The lock manager: strict two-phase locking on pages or records, shared and exclusive
//! modes, FIFO wait queues, and the wait-for graph the engine checks for deadlocks.
//!
//! Lock holders are clients (each runs one transaction at a time). A request is granted at
//! once if it is compatible with every holder and nobody is queued (an upgrade S→X of the
//! only holder is granted at once; an upgrade that must wait goes to the front of the
//! queue). Otherwise it waits. Locks are released only all at once (`release_all`, at
//! commit or after rollback: strict 2PL); releasing grants queued requests in FIFO order
//! until the first that is still incompatible.
//!
//! Waits-for edges of a waiting client: the holders of its key whose mode conflicts with
//! its request, and the requests queued ahead of it that conflict with it (it cannot pass
//! them). A deadlock is a cycle of such edges.
//!
//! Invariants: a client waits for at most one key; a client appears at most once among a
//! key's holders; holders of one key are pairwise compatible.
//!
//! Lookups use a hash map with a fixed hasher and are never iterated, so runs stay
//! deterministic. The hasher is FxHash (`FxHasher`): a lock is taken for every record a
//! transaction touches (TPC-C: about 130 per transaction with the index path), and SipHash
//! plus one allocation per lock entry were about a quarter of a TPC-C run. Entries live in
//! a slab (see `LockManager`).

use crate::data::PageNo;
use hashbrown::HashTable;
use std::collections::VecDeque;
use std::hash::{BuildHasherDefault, Hasher};
use workload::db::Rid;

/// FxHash, the multiply-rotate hash of rustc (`rustc-hash` 2): fast on small integer keys,
/// not resistant to chosen keys (irrelevant here: keys come from the simulation). `finish`
/// rotates so the well-mixed high bits land in the low bits hashbrown indexes by.
#[derive(Clone, Copy, Default)]
pub struct FxHasher {
    hash: u64,
}

const FX_K: u64 = 0xf135_7aea_2e62_a9c5;

impl FxHasher {
    #[inline]
    fn add(&mut self, w: u64) {
        self.hash = self.hash.wrapping_add(w).wrapping_mul(FX_K);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(w));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash.rotate_left(26)
    }
}

/// The host's hash-map hasher: fixed (no per-process random state), so lookups cost the
/// same in every run; maps using it are looked up, never iterated on simulation paths.
pub type FixedHash = BuildHasherDefault<FxHasher>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LockKey {
    Page(PageNo),
    Record(Rid),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Mode {
    Shared,
    Exclusive,
}

fn compatible(a: Mode, b: Mode) -> bool {
    a == Mode::Shared && b == Mode::Shared
}

impl LockKey {
    /// The key packed in 64 bits, the lock table's hash key: a page is `1 << 63 | page`, a
    /// record `table << 48 | page << 16 | slot` (table ids stay below 2^15: schemas have a
    /// handful of tables). Half the bytes of the enum, so twice the keys per cache line.
    #[inline]
    fn packed(self) -> u64 {
        match self {
            LockKey::Page(p) => {
                debug_assert!(p.0 < 1 << 63);
                (1 << 63) | p.0
            }
            LockKey::Record(r) => {
                debug_assert!(r.table.0 < 1 << 15);
                (u64::from(r.table.0) << 48) | (u64::from(r.page) << 16) | u64::from(r.slot)
            }
        }
    }

    fn unpack(k: u64) -> LockKey {
        if k >> 63 == 1 {
            LockKey::Page(PageNo(k & !(1 << 63)))
        } else {
            LockKey::Record(Rid {
                table: workload::db::TableId((k >> 48) as u16),
                page: (k >> 16) as u32,
                slot: k as u16,
            })
        }
    }
}

/// A holder: client `c` and mode, packed as `c << 1 | exclusive`.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Holder(u32);

impl Holder {
    fn new(c: u32, mode: Mode) -> Holder {
        Holder((c << 1) | u32::from(mode == Mode::Exclusive))
    }
    fn client(self) -> u32 {
        self.0 >> 1
    }
    fn mode(self) -> Mode {
        if self.0 & 1 == 1 {
            Mode::Exclusive
        } else {
            Mode::Shared
        }
    }
}

/// Holders kept inline in the entry before spilling to the heap. Most keys have one holder
/// (every exclusive lock, most shared ones); hot index pages have several.
const INLINE: usize = 5;

/// A key's holders in grant order: the first `INLINE` in the entry, the rest in `more`. The
/// order is observable (it orders the wait-for edges the deadlock search follows), so
/// removal shifts like `Vec::remove`.
struct Holders {
    n: u32,
    inline: [Holder; INLINE],
    more: Vec<Holder>,
}

impl Holders {
    const fn new() -> Holders {
        Holders {
            n: 0,
            inline: [Holder(0); INLINE],
            more: Vec::new(),
        }
    }
    #[inline]
    fn len(&self) -> usize {
        self.n as usize
    }
    #[inline]
    fn get(&self, i: usize) -> Holder {
        if i < INLINE {
            self.inline[i]
        } else {
            self.more[i - INLINE]
        }
    }
    #[inline]
    fn set(&mut self, i: usize, h: Holder) {
        if i < INLINE {
            self.inline[i] = h;
        } else {
            self.more[i - INLINE] = h;
        }
    }
    fn iter(&self) -> impl Iterator<Item = Holder> + '_ {
        self.inline[..self.len().min(INLINE)]
            .iter()
            .chain(self.more.iter())
            .copied()
    }
    fn position(&self, c: u32) -> Option<usize> {
        self.iter().position(|h| h.client() == c)
    }
    fn push(&mut self, h: Holder) {
        let n = self.len();
        if n < INLINE {
            self.inline[n] = h;
        } else {
            self.more.push(h);
        }
        self.n += 1;
    }
    fn remove(&mut self, pos: usize) {
        let n = self.len();
        if n > INLINE {
            // Shift the inline part left by one and pull the first spilled holder in.
            if pos < INLINE {
                self.inline.copy_within(pos + 1.., pos);
                self.inline[INLINE - 1] = self.more.remove(0);
            } else {
                self.more.remove(pos - INLINE);
            }
        } else {
            self.inline.copy_within(pos + 1..n, pos);
        }
        self.n -= 1;
    }
    fn is_empty(&self) -> bool {
        self.n == 0
    }
}

/// One locked key: 64 bytes, so a request touches one cache line of it (the first version
/// kept holders in a `Vec` and waiters in a `VecDeque` inside the entry: two lines and a
/// heap buffer per key). Aligned to a line: the slab's buffer is only as aligned as the
/// allocator makes it (16 bytes), and an entry straddling two lines made the key compare
/// and the holder scan two misses (perf annotate: 11 % and 30 % of `acquire`'s samples).
#[repr(align(64))]
struct Entry {
    key: u64,
    holders: Holders,
    /// Queued requests (rare), `Some` only while not empty: allocated on a wait, freed when
    /// the last waiter is granted or withdraws (`grant`). Boxed so the entry stays 64 bytes
    /// (a bare `VecDeque` is 32). (Keeping an emptied box for the entry's next key made
    /// every grant and many requests read the cold box to learn it was empty: 4 % of the
    /// host bench.)
    #[allow(clippy::box_collection)]
    waiters: Option<Box<VecDeque<(u32, Mode)>>>,
}

impl Entry {
    #[inline]
    fn has_waiters(&self) -> bool {
        debug_assert!(self.waiters.as_ref().is_none_or(|w| !w.is_empty()));
        self.waiters.is_some()
    }
    fn waiters_mut(&mut self) -> &mut VecDeque<(u32, Mode)> {
        self.waiters.get_or_insert_with(Default::default)
    }
    fn waiters(&self) -> impl Iterator<Item = &(u32, Mode)> + '_ {
        self.waiters.iter().flat_map(|w| w.iter())
    }
}

/// Result of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquire {
    Granted,
    Waiting,
}

/// Keys with holders or waiters live in a slab of entries; the hash table holds each key's
/// slab index (4-byte buckets, the key compared in the entry, which the request reads next
/// anyway), and clients list the slab indices they hold, so releasing needs no lookup but
/// the one that drops an emptied key (found by its slab index, not its key). Freed entries
/// (their spill buffers kept) are reused last-freed first, so the entries in use stay few
/// and warm in cache. The table's buckets were the run's hottest cache misses with
/// `(key, index)` pairs of 16 bytes; a quarter of that keeps four times as many in cache.
pub struct LockManager {
    index: HashTable<u32>,
    slab: Vec<Entry>,
    free: Vec<u32>,
    /// Per client: the slab indices of the keys it holds, in acquisition order.
    held: Vec<Vec<u32>>,
    /// Per client: the slab index and mode of its waiting request.
    waiting: Vec<Option<(u32, Mode)>>,
    /// Per client, `RECENT` direct-mapped slots of keys it holds: (packed key, mode: 0 none,
    /// 1 shared, 2 exclusive). About a third of a TPC-C transaction's requests name a key
    /// its client already holds (index paths walked again); when the slot says so in a mode
    /// that covers the request, it is granted without the table lookup. A client's holding
    /// changes only through its own requests and grants and its `release_all`, which keep
    /// the slots exact (a slot may be overwritten by another key: then the lookup runs).
    recent: Vec<(u64, u8)>,
}

/// Slots of `LockManager::recent` per client (a power of two).
const RECENT: usize = 64;

fn mode_code(m: Mode) -> u8 {
    match m {
        Mode::Shared => 1,
        Mode::Exclusive => 2,
    }
}

/// The lock table's hash of a packed key (FxHash).
#[inline]
fn key_hash(k: u64) -> u64 {
    let mut h = FxHasher::default();
    h.write_u64(k);
    h.finish()
}

impl LockManager {
    pub fn new(clients: u32) -> LockManager {
        LockManager {
            // Sized for a TPC-C load (50 clients × ~130 keys) so the table does not grow and
            // rehash during the run's first transactions.
            index: HashTable::with_capacity(8192),
            slab: Vec::new(),
            free: Vec::new(),
            held: vec![Vec::new(); clients as usize],
            waiting: vec![None; clients as usize],
            recent: vec![(0, 0); clients as usize * RECENT],
        }
    }

    fn entry(&self, key: LockKey) -> Option<&Entry> {
        let key = key.packed();
        let slab = &self.slab;
        self.index
            .find(key_hash(key), |&i| slab[i as usize].key == key)
            .map(|&i| &slab[i as usize])
    }

    /// The mode `c` holds `key` in, if any.
    pub fn held_mode(&self, c: u32, key: LockKey) -> Option<Mode> {
        self.entry(key)
            .and_then(|e| e.holders.iter().find(|h| h.client() == c).map(|h| h.mode()))
    }

    /// Requests `key` in `mode` for `c`.
    pub fn acquire(&mut self, c: u32, key: LockKey, mode: Mode) -> Acquire {
        debug_assert!(self.waiting[c as usize].is_none());
        let key = key.packed();
        let h = key_hash(key);
        let r = c as usize * RECENT + (h as usize & (RECENT - 1));
        let (rk, rm) = self.recent[r];
        if rk == key && (rm == 2 || (rm == 1 && mode == Mode::Shared)) {
            return Acquire::Granted;
        }
        let (slab, free) = (&mut self.slab, &mut self.free);
        let i = match self.index.find(h, |&i| slab[i as usize].key == key) {
            Some(&i) => i,
            None => {
                let i = match free.pop() {
                    Some(i) => {
                        slab[i as usize].key = key;
                        i
                    }
                    None => {
                        slab.push(Entry {
                            key,
                            holders: Holders::new(),
                            waiters: None,
                        });
                        (slab.len() - 1) as u32
                    }
                };
                self.index
                    .insert_unique(h, i, |&j| key_hash(slab[j as usize].key));
                i
            }
        };
        let e = &mut self.slab[i as usize];
        if let Some(pos) = e.holders.position(c) {
            let have = e.holders.get(pos).mode();
            if have == Mode::Exclusive || mode == Mode::Shared {
                self.recent[r] = (key, mode_code(have));
                return Acquire::Granted;
            }
            if e.holders.len() == 1 {
                e.holders.set(pos, Holder::new(c, Mode::Exclusive));
                self.recent[r] = (key, 2);
                return Acquire::Granted;
            }
            e.waiters_mut().push_front((c, mode));
            self.waiting[c as usize] = Some((i, mode));
            return Acquire::Waiting;
        }
        if !e.has_waiters() && e.holders.iter().all(|h| compatible(h.mode(), mode)) {
            e.holders.push(Holder::new(c, mode));
            self.held[c as usize].push(i);
            self.recent[r] = (key, mode_code(mode));
            return Acquire::Granted;
        }
        e.waiters_mut().push_back((c, mode));
        self.waiting[c as usize] = Some((i, mode));
        Acquire::Waiting
    }

    /// The holders of `key` whose mode conflicts with `mode` (other than `c`).
    pub fn conflicting_holders(&self, c: u32, key: LockKey, mode: Mode) -> Vec<u32> {
        self.entry(key).map_or(Vec::new(), |e| {
            e.holders
                .iter()
                .filter(|h| h.client() != c && !compatible(h.mode(), mode))
                .map(|h| h.client())
                .collect()
        })
    }

    /// Whom `c` waits for (empty if it is not waiting).
    pub fn waits_for(&self, c: u32) -> Vec<u32> {
        let mut out = Vec::new();
        self.waits_for_into(c, &mut out);
        out
    }

    /// Appends whom `c` waits for to `out`: the conflicting holders, then the conflicting
    /// requests queued ahead of `c` that are not holders too. Queued clients are distinct (a
    /// client waits for at most one key), so a queued client is checked against the holders
    /// only, not against the whole list.
    pub fn waits_for_into(&self, c: u32, out: &mut Vec<u32>) {
        let Some((i, mode)) = self.waiting[c as usize] else {
            return;
        };
        let e = &self.slab[i as usize];
        let from = out.len();
        out.extend(
            e.holders
                .iter()
                .filter(|h| h.client() != c && !compatible(h.mode(), mode))
                .map(|h| h.client()),
        );
        let to = out.len();
        for w in e.waiters() {
            if w.0 == c {
                break;
            }
            if !compatible(w.1, mode) && !out[from..to].contains(&w.0) {
                out.push(w.0);
            }
        }
    }

    pub fn is_waiting(&self, c: u32) -> bool {
        self.waiting[c as usize].is_some()
    }

    /// A cycle of the wait-for graph through `start`, if there is one (depth-first search,
    /// neighbours in a deterministic order).
    pub fn cycle_through(&self, start: u32) -> Option<Vec<u32>> {
        crate::deadlock::cycle_through(start, self.held.len(), |c, out| self.waits_for_into(c, out))
    }

    /// Withdraws `c`'s waiting request (it is being aborted). Returns the clients this grants.
    pub fn cancel_wait(&mut self, c: u32) -> Vec<u32> {
        let Some((i, _)) = self.waiting[c as usize].take() else {
            return Vec::new();
        };
        self.slab[i as usize].waiters_mut().retain(|w| w.0 != c);
        let mut granted = Vec::new();
        self.grant(i, &mut granted);
        granted
    }

    /// Releases every lock `c` holds. Returns the clients whose requests this granted.
    pub fn release_all(&mut self, c: u32) -> Vec<u32> {
        debug_assert!(self.waiting[c as usize].is_none());
        let mut ids = std::mem::take(&mut self.held[c as usize]);
        self.recent[c as usize * RECENT..(c as usize + 1) * RECENT].fill((0, 0));
        let mut granted = Vec::new();
        // The entries were last touched when acquired, a whole transaction ago: nearly every
        // one is a cache miss, and the loop body (holder removal, grants) is too long for the
        // CPU to overlap them by itself. Hints for the entries `AHEAD` keys on let the misses
        // overlap (the load of each entry was 87 % of this function's samples).
        const AHEAD: usize = 8;
        for &i in ids.iter().take(AHEAD) {
            sim::mem::prefetch(&self.slab[i as usize]);
        }
        for (n, &i) in ids.iter().enumerate() {
            if let Some(&j) = ids.get(n + AHEAD) {
                sim::mem::prefetch(&self.slab[j as usize]);
            }
            let e = &mut self.slab[i as usize];
            if let Some(pos) = e.holders.position(c) {
                e.holders.remove(pos);
            }
            self.grant(i, &mut granted);
        }
        // Keep the vector's capacity for the client's next transaction (grants above
        // pushed to other clients' lists only).
        ids.clear();
        if self.held[c as usize].is_empty() {
            self.held[c as usize] = ids;
        }
        granted
    }

    /// Grants queued requests on entry `i` in FIFO order; frees the entry if nobody holds
    /// or waits for it any more.
    fn grant(&mut self, i: u32, granted: &mut Vec<u32>) {
        let e = &mut self.slab[i as usize];
        if let Some(waiters) = e.waiters.as_mut() {
            let slot = key_hash(e.key) as usize & (RECENT - 1);
            while let Some(&(w, mode)) = waiters.front() {
                if let Some(pos) = e.holders.position(w) {
                    // An upgrade: possible once `w` is the only holder.
                    if e.holders.len() != 1 {
                        break;
                    }
                    e.holders.set(pos, Holder::new(w, Mode::Exclusive));
                    self.recent[w as usize * RECENT + slot] = (e.key, 2);
                } else if e.holders.iter().all(|h| compatible(h.mode(), mode)) {
                    e.holders.push(Holder::new(w, mode));
                    self.held[w as usize].push(i);
                    self.recent[w as usize * RECENT + slot] = (e.key, mode_code(mode));
                } else {
                    break;
                }
                waiters.pop_front();
                self.waiting[w as usize] = None;
                granted.push(w);
            }
            if waiters.is_empty() {
                e.waiters = None;
            }
        }
        if e.holders.is_empty() && !e.has_waiters() {
            if let Ok(found) = self.index.find_entry(key_hash(e.key), |&j| j == i) {
                found.remove();
            }
            self.free.push(i);
        }
    }

    /// Locks currently held by `c`.
    pub fn held_count(&self, c: u32) -> usize {
        self.held[c as usize].len()
    }

    /// Checks the invariants in the module docs (debug builds, tests), and that the index,
    /// the slab and the free list agree.
    pub fn check_invariants(&self) -> Result<(), String> {
        for (n, &(key, m)) in self.recent.iter().enumerate() {
            if m == 0 {
                continue;
            }
            let c = (n / RECENT) as u32;
            let k = LockKey::unpack(key);
            let want = if m == 2 {
                Mode::Exclusive
            } else {
                Mode::Shared
            };
            if key_hash(key) as usize & (RECENT - 1) != n % RECENT
                || self.held_mode(c, k) != Some(want)
            {
                return Err(format!(
                    "client {c}: recent slot {} says {k:?} in {want:?}, the table says {:?}",
                    n % RECENT,
                    self.held_mode(c, k)
                ));
            }
        }
        if self.index.len() + self.free.len() != self.slab.len() {
            return Err(format!(
                "lock table: {} keys and {} free entries but {} slab entries",
                self.index.len(),
                self.free.len(),
                self.slab.len()
            ));
        }
        for &i in self.index.iter() {
            let e = &self.slab[i as usize];
            let packed = e.key;
            let key = LockKey::unpack(packed);
            if key.packed() != packed {
                return Err(format!(
                    "{key:?}: packed key {packed:#x} does not round-trip"
                ));
            }
            if self.free.contains(&i) {
                return Err(format!("{key:?}: index names free entry {i}"));
            }
            if self.entry(key).map(|x| x as *const Entry) != Some(e as *const Entry) {
                return Err(format!("{key:?}: entry {i} is not what a lookup finds"));
            }
            if e.waiters.as_ref().is_some_and(|w| w.is_empty()) {
                return Err(format!("{key:?}: an empty waiter queue is kept"));
            }
            if e.holders.is_empty() && !e.has_waiters() {
                return Err(format!("{key:?}: kept with no holder or waiter"));
            }
            if e.holders.len() != e.holders.iter().count() {
                return Err(format!(
                    "{key:?}: {} holders counted but {} stored",
                    e.holders.len(),
                    e.holders.iter().count()
                ));
            }
            let hs: Vec<(u32, Mode)> = e.holders.iter().map(|h| (h.client(), h.mode())).collect();
            for (n, a) in hs.iter().enumerate() {
                for b in &hs[n + 1..] {
                    if a.0 == b.0 || !compatible(a.1, b.1) {
                        return Err(format!("{key:?}: holders {a:?} and {b:?} conflict"));
                    }
                }
                if !self.held[a.0 as usize].contains(&i) {
                    return Err(format!("{key:?}: holder {} does not list it", a.0));
                }
            }
            for w in e.waiters() {
                if self.waiting[w.0 as usize] != Some((i, w.1)) {
                    return Err(format!("{key:?}: waiter {} is not waiting for it", w.0));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(n: u64) -> LockKey {
        LockKey::Page(PageNo(n))
    }

    #[test]
    fn shared_share_exclusive_waits_and_fifo_grants() {
        let mut l = LockManager::new(4);
        assert_eq!(l.acquire(0, k(1), Mode::Shared), Acquire::Granted);
        assert_eq!(l.acquire(1, k(1), Mode::Shared), Acquire::Granted);
        assert_eq!(l.acquire(2, k(1), Mode::Exclusive), Acquire::Waiting);
        // A shared request behind a queued exclusive one waits (no starvation).
        assert_eq!(l.acquire(3, k(1), Mode::Shared), Acquire::Waiting);
        assert_eq!(l.waits_for(3), vec![2]);
        assert_eq!(l.release_all(0), Vec::<u32>::new());
        assert_eq!(l.release_all(1), vec![2]);
        assert_eq!(l.release_all(2), vec![3]);
        l.check_invariants().unwrap();
    }

    #[test]
    fn two_upgraders_deadlock_and_the_cycle_is_found() {
        let mut l = LockManager::new(2);
        l.acquire(0, k(1), Mode::Shared);
        l.acquire(1, k(1), Mode::Shared);
        assert_eq!(l.acquire(0, k(1), Mode::Exclusive), Acquire::Waiting);
        assert_eq!(l.acquire(1, k(1), Mode::Exclusive), Acquire::Waiting);
        assert!(l.cycle_through(1).is_some());
        let g = l.cancel_wait(1);
        assert!(g.is_empty());
        assert_eq!(l.release_all(1), vec![0]);
        assert_eq!(l.held_mode(0, k(1)), Some(Mode::Exclusive));
        l.check_invariants().unwrap();
    }

    /// Random requests, releases and cancellations over a few keys: the slab, the index and
    /// every client's lists stay consistent, entries are reused, and holders never conflict.
    #[test]
    fn random_traffic_keeps_the_table_consistent() {
        let mut rng = sim::Rng::new(7);
        let mut l = LockManager::new(6);
        let mut max_slab = 0;
        for step in 0..20_000 {
            let c = rng.below(6) as u32;
            if l.is_waiting(c) {
                if rng.below(4) == 0 {
                    for g in l.cancel_wait(c) {
                        assert!(!l.is_waiting(g));
                    }
                }
            } else if rng.below(5) == 0 {
                l.release_all(c);
                assert_eq!(l.held_count(c), 0);
            } else {
                let key = if rng.below(2) == 0 {
                    k(rng.below(5))
                } else {
                    LockKey::Record(Rid {
                        table: workload::db::TableId(1),
                        page: rng.below(3) as u32,
                        slot: rng.below(2) as u16,
                    })
                };
                let mode = if rng.below(2) == 0 {
                    Mode::Shared
                } else {
                    Mode::Exclusive
                };
                if l.acquire(c, key, mode) == Acquire::Granted {
                    let have = l.held_mode(c, key).unwrap();
                    assert!(have == Mode::Exclusive || mode == Mode::Shared);
                }
            }
            if let Err(e) = l.check_invariants() {
                panic!("step {step}: {e}");
            }
            max_slab = max_slab.max(l.slab.len());
        }
        // 11 keys at most are ever in use at once.
        assert!(max_slab <= 11, "{max_slab}");
    }

    /// Holders keep their grant order across the inline part and the spill vector when
    /// released in any order (the order feeds the deadlock search, so outputs depend on it).
    #[test]
    fn holder_order_survives_removal_across_the_spill() {
        let mut rng = sim::Rng::new(3);
        for _ in 0..50 {
            let n = 1 + rng.below(12) as u32;
            let mut l = LockManager::new(n + 1);
            let mut model: Vec<u32> = (0..n).collect();
            for c in 0..n {
                assert_eq!(l.acquire(c, k(9), Mode::Shared), Acquire::Granted);
            }
            while !model.is_empty() {
                assert_eq!(l.conflicting_holders(n, k(9), Mode::Exclusive), model);
                let c = model.remove(rng.below(model.len() as u64) as usize);
                l.release_all(c);
                l.check_invariants().unwrap();
            }
            assert!(l.conflicting_holders(n, k(9), Mode::Exclusive).is_empty());
        }
    }

    #[test]
    fn an_entry_is_one_cache_line_and_keys_pack_both_ways() {
        assert_eq!(std::mem::size_of::<Entry>(), 64);
        assert_eq!(std::mem::align_of::<Entry>(), 64);
        let mut l = LockManager::new(1);
        l.acquire(0, k(1), Mode::Shared);
        assert_eq!(
            l.slab.as_ptr() as usize % 64,
            0,
            "an entry straddles two lines"
        );
        for key in [
            k(0),
            k((1 << 40) + 3),
            LockKey::Record(Rid {
                table: workload::db::TableId(0x7FFF),
                page: u32::MAX,
                slot: u16::MAX,
            }),
            LockKey::Record(Rid {
                table: workload::db::TableId(0),
                page: 0,
                slot: 0,
            }),
        ] {
            assert_eq!(LockKey::unpack(key.packed()), key);
        }
    }

    #[test]
    fn crossing_exclusive_requests_form_a_cycle() {
        let mut l = LockManager::new(3);
        l.acquire(0, k(1), Mode::Exclusive);
        l.acquire(1, k(2), Mode::Exclusive);
        assert_eq!(l.acquire(0, k(2), Mode::Exclusive), Acquire::Waiting);
        assert!(l.cycle_through(0).is_none());
        assert_eq!(l.acquire(1, k(1), Mode::Exclusive), Acquire::Waiting);
        let c = l.cycle_through(1).unwrap();
        assert_eq!(c.len(), 2);
    }
}
