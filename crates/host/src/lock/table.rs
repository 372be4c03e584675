//! The lock table's index: an open-addressing hash table from a key's 32-bit tag to a slab
//! index, 8 bytes a slot, eight slots to a cache line. The keys themselves live in the
//! caller's slab; a lookup compares tags in the table and confirms a match with a closure
//! that compares the real key (a tag match on another key only costs that check).
//!
//! Why its own table: with hashbrown's `HashTable` of slab indices a request touched its
//! control bytes, then its bucket (another line), then the slab entry, and no bucket
//! address is exposed to prefetch. Here tag and index share one slot, a probe usually
//! reads one line, and `prefetch` can start that line before the request. (16-byte slots
//! holding the whole key were tried: the table is then 256 KiB where this one is 128 KiB,
//! and its line missed far more often; `acquire` was 12.6 % of the host bench.)
//!
//! Layout: a power-of-two array of `Slot { tag, val }`; `tag == 0` marks a free slot (tags
//! are never 0: `tag_of` maps 0 to 1). A key's home is `tag & mask`, so the home of any
//! stored slot can be recomputed from the slot alone, which backward-shift deletion needs.
//! Linear probing. Deletion is tombstone-free by backward shift: after emptying slot `i`,
//! each following occupied slot `j` whose home does not lie cyclically in `(i, j]` moves
//! back into the hole, until an empty slot ends the run. The table doubles when an insert
//! would take it past half full.
//!
//! Invariants (`check_invariants`): `len` counts the occupied slots; every occupied slot
//! is reached from its home without crossing an empty slot; at most half the slots are
//! occupied. (Uniqueness of keys is the caller's: the table never sees keys.)
//!
//! Slot indices are valid only until the next insert or removal (both may move slots).
//! The table is never iterated on simulation paths (`iter` is for invariant checks), so
//! slot order never reaches an output.

/// One slot: a tag (0: free) and the caller's value.
#[derive(Clone, Copy, Default)]
#[repr(C, align(8))]
pub struct Slot {
    tag: u32,
    val: u32,
}

pub struct Table {
    slots: Vec<Slot>,
    mask: usize,
    len: usize,
}

/// The tag of a key whose 64-bit hash is `h`: its high half (the low half feeds other
/// indexes), never 0.
#[inline]
pub fn tag_of(h: u64) -> u32 {
    ((h >> 32) as u32).max(1)
}

impl Table {
    /// A table of at least `cap` slots (rounded up to a power of two, at least 8).
    pub fn with_capacity(cap: usize) -> Table {
        let n = cap.max(8).next_power_of_two();
        Table {
            slots: vec![Slot::default(); n],
            mask: n - 1,
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    #[cfg(test)]
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    #[inline]
    fn home(&self, tag: u32) -> usize {
        tag as usize & self.mask
    }

    /// Starts loading the home slot of `tag` (a hint; no effect on contents).
    #[inline]
    pub fn prefetch(&self, tag: u32) {
        sim::mem::prefetch(&self.slots[self.home(tag)]);
    }

    /// The slot with tag `tag` whose value `is_key` accepts, if any.
    #[inline]
    pub fn find(&self, tag: u32, mut is_key: impl FnMut(u32) -> bool) -> Option<usize> {
        debug_assert!(tag != 0);
        let mut i = self.home(tag);
        loop {
            let s = self.slots[i];
            if s.tag == tag && is_key(s.val) {
                return Some(i);
            }
            if s.tag == 0 {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Inserts `val` under `tag` (the caller has checked that its key is absent), growing
    /// the table first if it would pass half full. Returns the slot.
    pub fn insert(&mut self, tag: u32, val: u32) -> usize {
        debug_assert!(tag != 0);
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
        }
        self.len += 1;
        self.place(Slot { tag, val })
    }

    fn place(&mut self, s: Slot) -> usize {
        let mut i = self.home(s.tag);
        while self.slots[i].tag != 0 {
            i = (i + 1) & self.mask;
        }
        self.slots[i] = s;
        i
    }

    /// Doubles the slot array and re-places every slot.
    #[cold]
    fn grow(&mut self) {
        let n = self.slots.len() * 2;
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); n]);
        self.mask = n - 1;
        for s in old {
            if s.tag != 0 {
                self.place(s);
            }
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> u32 {
        debug_assert!(self.slots[i].tag != 0);
        self.slots[i].val
    }

    /// Empties slot `i` and returns its value; later slots of the probe run shift back so
    /// no tombstone is left.
    pub fn remove_at(&mut self, i: usize) -> u32 {
        debug_assert!(self.slots[i].tag != 0);
        let out = self.slots[i].val;
        self.slots[i] = Slot::default();
        self.len -= 1;
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let s = self.slots[j];
            if s.tag == 0 {
                break;
            }
            // `j` may fill the hole if its home is not cyclically after the hole: its
            // distance from home is at least the hole's distance behind it.
            let dist_home = j.wrapping_sub(self.home(s.tag)) & self.mask;
            let dist_hole = j.wrapping_sub(hole) & self.mask;
            if dist_home >= dist_hole {
                self.slots[hole] = s;
                self.slots[j] = Slot::default();
                hole = j;
            }
        }
        out
    }

    /// Occupied slots as (slot index, tag, value), in slot order: for invariant checks and
    /// tests only (slot order is not an order anything may depend on).
    pub fn iter(&self) -> impl Iterator<Item = (usize, u32, u32)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.tag != 0)
            .map(|(i, s)| (i, s.tag, s.val))
    }

    /// Checks the invariants in the module docs.
    pub fn check_invariants(&self) -> Result<(), String> {
        let n = self.slots.len();
        if !n.is_power_of_two() || self.mask != n - 1 {
            return Err(format!("lock table: {n} slots with mask {:#x}", self.mask));
        }
        let mut count = 0;
        for (i, tag, _) in self.iter() {
            count += 1;
            let mut j = self.home(tag);
            while j != i {
                if self.slots[j].tag == 0 {
                    return Err(format!(
                        "lock table: tag {tag:#x} in slot {i} is cut off from its home by empty slot {j}"
                    ));
                }
                j = (j + 1) & self.mask;
            }
        }
        if count != self.len {
            return Err(format!(
                "lock table: {count} occupied slots but len {}",
                self.len
            ));
        }
        if 2 * self.len > n {
            return Err(format!("lock table: {} keys in {n} slots", self.len));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// A map from u64 keys to u64 values built like the lock manager: keys and values in
    /// a slab, the table mapping tags to slab indices.
    struct Map {
        t: Table,
        slab: Vec<(u64, u64)>,
        free: Vec<u32>,
        tag: fn(u64) -> u32,
    }

    impl Map {
        fn new(cap: usize, tag: fn(u64) -> u32) -> Map {
            Map {
                t: Table::with_capacity(cap),
                slab: Vec::new(),
                free: Vec::new(),
                tag,
            }
        }
        fn find(&self, k: u64) -> Option<usize> {
            self.t.find((self.tag)(k), |i| self.slab[i as usize].0 == k)
        }
        fn get(&self, k: u64) -> Option<u64> {
            self.find(k).map(|s| self.slab[self.t.get(s) as usize].1)
        }
        /// Adds `v` to `k`'s value (inserting 0 first); returns the slot and whether new.
        fn add(&mut self, k: u64, v: u64) -> (usize, bool) {
            if let Some(s) = self.find(k) {
                self.slab[self.t.get(s) as usize].1 += v;
                return (s, false);
            }
            let i = match self.free.pop() {
                Some(i) => {
                    self.slab[i as usize] = (k, v);
                    i
                }
                None => {
                    self.slab.push((k, v));
                    (self.slab.len() - 1) as u32
                }
            };
            (self.t.insert((self.tag)(k), i), true)
        }
        fn remove(&mut self, k: u64) -> Option<u64> {
            let s = self.find(k)?;
            let i = self.t.remove_at(s);
            self.free.push(i);
            Some(self.slab[i as usize].1)
        }
    }

    fn real_tag(k: u64) -> u32 {
        tag_of(k.wrapping_mul(0xf135_7aea_2e62_a9c5).rotate_left(26))
    }

    /// Tags that collide a lot: 4 bits of the key, so every home is shared by many keys
    /// and equal tags of different keys are common.
    fn poor_tag(k: u64) -> u32 {
        (k as u32 & 0xF) | 0x10
    }

    #[test]
    fn eight_slots_fill_a_cache_line() {
        assert_eq!(std::mem::size_of::<Slot>(), 8);
        assert_eq!(tag_of(0), 1);
        assert_eq!(tag_of(7 << 32), 7);
    }

    /// Slots that share a home fill consecutive slots, wrapping around the end; removing
    /// the first shifts the rest back one slot each and leaves no hole, and a slot whose
    /// home is behind a removed one moves back to its home.
    #[test]
    fn colliding_slots_shift_back_on_removal() {
        let mut t = Table::with_capacity(16);
        for v in 0..4 {
            assert_eq!(t.insert(14, v), (14 + v as usize) & 15, "the run wraps around");
        }
        // Homed at slot 0, it sits behind the wrapped run; a different tag homed at 14.
        assert_eq!(t.insert(16, 99), 2);
        assert_eq!(t.insert(30, 7), 3);
        t.check_invariants().unwrap();

        assert_eq!(t.remove_at(14), 0);
        t.check_invariants().unwrap();
        let at = |t: &Table, v: u32| t.iter().find(|s| s.2 == v).map(|s| s.0);
        assert_eq!(at(&t, 1), Some(14));
        assert_eq!(at(&t, 2), Some(15));
        assert_eq!(at(&t, 3), Some(0));
        assert_eq!(at(&t, 99), Some(1));
        assert_eq!(at(&t, 7), Some(2));
        assert_eq!(t.find(14, |v| v == 0), None);
        assert_eq!(t.find(30, |v| v == 7), Some(2));

        // Removing in the middle of the run: slot 3's value moves back, the slot homed at
        // 0 returns to its home, and the tag-30 slot follows.
        assert_eq!(t.remove_at(15), 2);
        t.check_invariants().unwrap();
        assert_eq!(at(&t, 3), Some(15));
        assert_eq!(at(&t, 99), Some(0));
        assert_eq!(at(&t, 7), Some(1));
        assert_eq!(t.len(), 4);
    }

    /// A slot at its home stays there when a hole opens before it.
    #[test]
    fn a_slot_at_home_does_not_move_back() {
        let mut t = Table::with_capacity(16);
        assert_eq!(t.insert(5, 1), 5);
        assert_eq!(t.insert(6, 2), 6);
        t.remove_at(5);
        assert_eq!(t.find(6, |v| v == 2), Some(6));
        t.check_invariants().unwrap();
    }

    /// Equal tags of different keys: the closure tells them apart.
    #[test]
    fn equal_tags_are_told_apart_by_the_key() {
        let mut m = Map::new(8, |_| 3);
        for k in 0..4 {
            m.add(k, k * 10);
        }
        for k in 0..4 {
            assert_eq!(m.get(k), Some(k * 10));
        }
        assert_eq!(m.get(4), None);
        assert_eq!(m.remove(1), Some(10));
        assert_eq!(m.get(1), None);
        assert_eq!(m.get(3), Some(30));
        m.t.check_invariants().unwrap();
    }

    #[test]
    fn the_table_doubles_past_half_full_and_keeps_every_value() {
        let mut m = Map::new(8, real_tag);
        for k in 0..1000u64 {
            assert!(m.add(k * 7919, k).1);
            assert!(2 * m.t.len() <= m.t.capacity());
        }
        assert_eq!(m.t.capacity(), 2048);
        m.t.check_invariants().unwrap();
        for k in 0..1000u64 {
            assert_eq!(m.get(k * 7919), Some(k));
        }
    }

    /// Property test against `std::collections::HashMap`: random inserts, updates and
    /// removals over a small key space (so runs collide and wrap), with the real tag and
    /// with a tag of 4 bits (equal tags everywhere), from many seeds; after every step the
    /// invariants hold, and at the end every key agrees with the model. (Seeded `sim::Rng`
    /// rather than proptest: this crate has no proptest dev-dependency.)
    #[test]
    fn random_operations_match_a_hashmap_model() {
        for seed in 0..40 {
            let mut rng = sim::Rng::new(seed);
            let tag: fn(u64) -> u32 = if seed % 2 == 0 { real_tag } else { poor_tag };
            let mut m = Map::new(8, tag);
            let mut model: HashMap<u64, u64> = HashMap::new();
            let space = 4 + rng.below(200);
            for step in 0..2000u64 {
                let k = rng.below(space) * 0x1_0001 + (seed << 40);
                if rng.below(3) < 2 {
                    let (_, new) = m.add(k, step);
                    assert_eq!(new, !model.contains_key(&k));
                    *model.entry(k).or_insert(0) += step;
                } else {
                    assert_eq!(m.remove(k), model.remove(&k), "seed {seed} step {step}");
                }
                if let Err(e) = m.t.check_invariants() {
                    panic!("seed {seed} step {step}: {e}");
                }
                assert_eq!(m.t.len(), model.len());
            }
            for (&k, &v) in &model {
                assert_eq!(m.get(k), Some(v));
            }
            let mut keys: Vec<u64> = m.t.iter().map(|s| m.slab[s.2 as usize].0).collect();
            keys.sort_unstable();
            let mut want: Vec<u64> = model.keys().copied().collect();
            want.sort_unstable();
            assert_eq!(keys, want);
        }
    }
}
