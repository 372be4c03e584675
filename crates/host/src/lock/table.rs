//! The lock table: an open-addressing hash table keyed by packed lock keys (`u64`), whose
//! slots hold the lock state itself, one 64-byte cache line per slot.
//!
//! Why its own table: with hashbrown's `HashTable` of slab indices a request touched its
//! control bytes, then its bucket, then the slab entry to compare keys, and nobody could
//! prefetch a bucket (no address is exposed). Here the key sits beside its value in one
//! 16-byte slot, four slots to a cache line, so a probe usually reads one line and compares
//! keys there, and `prefetch` can start that line before the request.
//!
//! Layout: a power-of-two array of `Slot { key, val }`, 16-byte aligned; `key == EMPTY`
//! marks a free slot (its `val` is `V::default()`). Linear probing from `home(key) = hash &
//! mask`. Deletion is tombstone-free by backward shift: after emptying slot `i`, each
//! following occupied slot `j` whose home does not lie cyclically in `(i, j]` moves back
//! into the hole, until an empty slot ends the run. The table doubles when an insert would
//! take it past half full (linear probing stays short at that load: about 1.5 slots per
//! hit, 2.5 per miss).
//!
//! Invariants (`check_invariants`): `len` counts the occupied slots; every occupied key is
//! reached from its home without crossing an empty slot; keys are unique.
//!
//! Slot indices are valid only until the next insert or removal (both move slots), so
//! callers keep keys, not indices, across them. The table is never iterated on simulation
//! paths (`iter` is for invariant checks), so slot order never reaches an output.

/// The packed key that marks an empty slot. No lock key packs to it (`LockKey::packed`
/// asserts it).
pub const EMPTY: u64 = u64::MAX;

/// One slot: the key and the value inline (16 bytes for a `u32` value: never straddles a
/// cache line).
#[derive(Default)]
#[repr(C, align(16))]
pub struct Slot<V> {
    key: u64,
    val: V,
}

pub struct Table<V> {
    slots: Vec<Slot<V>>,
    mask: usize,
    len: usize,
}

/// The table's hash of a packed key: FxHash's multiply, rotated so the well-mixed high
/// bits index the table (the same function as `lock::key_hash`).
#[inline]
pub fn hash(key: u64) -> u64 {
    key.wrapping_mul(0xf135_7aea_2e62_a9c5).rotate_left(26)
}

impl<V: Default> Table<V> {
    /// A table of at least `cap` slots (rounded up to a power of two, at least 8).
    pub fn with_capacity(cap: usize) -> Table<V> {
        let n = cap.max(8).next_power_of_two();
        Table {
            slots: empty_slots(n),
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

    /// The home slot of a key whose `hash` is given.
    #[inline]
    fn home(&self, h: u64) -> usize {
        h as usize & self.mask
    }

    /// Starts loading the home slot of a key with hash `h` (a hint; no effect on contents).
    #[inline]
    pub fn prefetch(&self, h: u64) {
        sim::mem::prefetch(&self.slots[self.home(h)]);
    }

    /// The slot holding `key` (hash `h`), if any.
    #[inline]
    pub fn find(&self, key: u64, h: u64) -> Option<usize> {
        debug_assert!(key != EMPTY && h == hash(key));
        let mut i = self.home(h);
        loop {
            let k = self.slots[i].key;
            if k == key {
                return Some(i);
            }
            if k == EMPTY {
                return None;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// The slot holding `key` (hash `h`), inserting it with `V::default()` first if absent
    /// (which may grow the table and move every slot), and whether it was inserted.
    #[inline]
    pub fn find_or_insert(&mut self, key: u64, h: u64) -> (usize, bool) {
        debug_assert!(key != EMPTY && h == hash(key));
        let mut i = self.home(h);
        loop {
            let k = self.slots[i].key;
            if k == key {
                return (i, false);
            }
            if k == EMPTY {
                break;
            }
            i = (i + 1) & self.mask;
        }
        if 2 * (self.len + 1) > self.slots.len() {
            self.grow();
            i = self.home(h);
            while self.slots[i].key != EMPTY {
                i = (i + 1) & self.mask;
            }
        }
        self.slots[i].key = key;
        self.len += 1;
        (i, true)
    }

    /// Doubles the slot array and re-inserts every key.
    #[cold]
    fn grow(&mut self) {
        let n = self.slots.len() * 2;
        let old = std::mem::replace(&mut self.slots, empty_slots(n));
        self.mask = n - 1;
        for s in old {
            if s.key == EMPTY {
                continue;
            }
            let mut i = self.home(hash(s.key));
            while self.slots[i].key != EMPTY {
                i = (i + 1) & self.mask;
            }
            self.slots[i] = s;
        }
    }

    #[cfg(test)]
    pub fn key_at(&self, i: usize) -> u64 {
        self.slots[i].key
    }

    #[inline]
    pub fn get(&self, i: usize) -> &V {
        debug_assert!(self.slots[i].key != EMPTY);
        &self.slots[i].val
    }

    #[inline]
    pub fn get_mut(&mut self, i: usize) -> &mut V {
        debug_assert!(self.slots[i].key != EMPTY);
        &mut self.slots[i].val
    }

    /// Empties slot `i` and returns its value; later slots of the probe run shift back so
    /// no tombstone is left.
    pub fn remove_at(&mut self, i: usize) -> V {
        debug_assert!(self.slots[i].key != EMPTY);
        let out = std::mem::take(&mut self.slots[i]).val;
        self.slots[i].key = EMPTY;
        self.len -= 1;
        let mut hole = i;
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let k = self.slots[j].key;
            if k == EMPTY {
                break;
            }
            // `j` may fill the hole if its home is not cyclically after the hole: its
            // distance from home is at least the hole's distance behind it.
            let dist_home = j.wrapping_sub(self.home(hash(k))) & self.mask;
            let dist_hole = j.wrapping_sub(hole) & self.mask;
            if dist_home >= dist_hole {
                self.slots[hole] = std::mem::take(&mut self.slots[j]);
                self.slots[j].key = EMPTY;
                hole = j;
            }
        }
        out
    }

    /// Occupied slots as (slot index, key, value), in slot order: for invariant checks and
    /// tests only (slot order is not an order anything may depend on).
    pub fn iter(&self) -> impl Iterator<Item = (usize, u64, &V)> + '_ {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.key != EMPTY)
            .map(|(i, s)| (i, s.key, &s.val))
    }

    /// Checks the invariants in the module docs.
    pub fn check_invariants(&self) -> Result<(), String> {
        let n = self.slots.len();
        if !n.is_power_of_two() || self.mask != n - 1 {
            return Err(format!("lock table: {n} slots with mask {:#x}", self.mask));
        }
        let mut count = 0;
        for (i, key, _) in self.iter() {
            count += 1;
            let mut j = self.home(hash(key));
            while j != i {
                if self.slots[j].key == EMPTY {
                    return Err(format!(
                        "lock table: key {key:#x} in slot {i} is cut off from its home by empty slot {j}"
                    ));
                }
                if self.slots[j].key == key {
                    return Err(format!("lock table: key {key:#x} in slots {j} and {i}"));
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

fn empty_slots<V: Default>(n: usize) -> Vec<Slot<V>> {
    let mut v = Vec::with_capacity(n);
    v.resize_with(n, || Slot {
        key: EMPTY,
        val: V::default(),
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// `count` distinct keys whose home is slot `home` of a table of `cap` slots.
    fn colliding(cap: usize, home: usize, count: usize) -> Vec<u64> {
        (0u64..)
            .filter(|&k| hash(k) as usize & (cap - 1) == home)
            .take(count)
            .collect()
    }

    #[test]
    fn four_slots_fill_a_cache_line() {
        assert_eq!(std::mem::size_of::<Slot<u32>>(), 16);
        assert_eq!(std::mem::align_of::<Slot<u32>>(), 16);
        let t: Table<u32> = Table::with_capacity(16);
        assert_eq!(t.slots.as_ptr() as usize % 16, 0);
    }

    /// Keys that share a home fill consecutive slots; removing the first shifts the rest
    /// back one slot each and leaves no hole, and removal in the middle of a run that wraps
    /// around the end of the array keeps every key findable.
    #[test]
    fn colliding_keys_shift_back_on_removal() {
        let mut t: Table<u32> = Table::with_capacity(16);
        let ks = colliding(16, 14, 4);
        for (n, &k) in ks.iter().enumerate() {
            let i = t.find_or_insert(k, hash(k)).0;
            assert_eq!(i, (14 + n) & 15, "the run wraps around the end");
            *t.get_mut(i) = n as u32;
        }
        // A key homed at slot 0 sits behind the wrapped run.
        let k0 = colliding(16, 0, 1)[0];
        let i0 = t.find_or_insert(k0, hash(k0)).0;
        assert_eq!(i0, 2);
        *t.get_mut(i0) = 99;
        t.check_invariants().unwrap();

        assert_eq!(t.remove_at(14), 0);
        t.check_invariants().unwrap();
        // ks[1..] moved back one slot each; k0 moved back to 1 (its home 0 is behind it).
        assert_eq!(t.find(ks[1], hash(ks[1])), Some(14));
        assert_eq!(t.find(ks[2], hash(ks[2])), Some(15));
        assert_eq!(t.find(ks[3], hash(ks[3])), Some(0));
        assert_eq!(t.find(k0, hash(k0)), Some(1));
        assert_eq!(*t.get(1), 99);
        assert_eq!(t.key_at(2), EMPTY);
        assert_eq!(t.find(ks[0], hash(ks[0])), None);

        // Removing in the middle of the run: ks[3] moves back, and k0 back to its home.
        let i = t.find(ks[2], hash(ks[2])).unwrap();
        assert_eq!(t.remove_at(i), 2);
        t.check_invariants().unwrap();
        assert_eq!(t.find(ks[3], hash(ks[3])), Some(15));
        assert_eq!(t.find(k0, hash(k0)), Some(0));
        assert_eq!(t.len(), 3);
    }

    /// A key at its home slot stays there when a hole opens before it.
    #[test]
    fn a_key_at_home_does_not_move_back() {
        let mut t: Table<u32> = Table::with_capacity(16);
        let a = colliding(16, 5, 1)[0];
        let b = colliding(16, 6, 1)[0];
        assert_eq!(t.find_or_insert(a, hash(a)), (5, true));
        assert_eq!(t.find_or_insert(b, hash(b)), (6, true));
        assert_eq!(t.find_or_insert(a, hash(a)), (5, false));
        t.remove_at(5);
        assert_eq!(t.find(b, hash(b)), Some(6));
        t.check_invariants().unwrap();
    }

    #[test]
    fn the_table_doubles_past_half_full_and_keeps_every_value() {
        let mut t: Table<u64> = Table::with_capacity(8);
        for k in 0..1000u64 {
            let i = t.find_or_insert(k * 7919, hash(k * 7919)).0;
            *t.get_mut(i) = k;
            assert!(2 * t.len() <= t.capacity());
        }
        assert_eq!(t.capacity(), 2048);
        t.check_invariants().unwrap();
        for k in 0..1000u64 {
            let i = t.find(k * 7919, hash(k * 7919)).unwrap();
            assert_eq!(*t.get(i), k);
        }
    }

    /// Property test against `std::collections::HashMap`: random inserts, updates and
    /// removals over a small key space (so runs collide and wrap), from many seeds; after
    /// every step the invariants hold, and at the end every key agrees with the model.
    /// (Seeded `sim::Rng` rather than proptest: this crate has no proptest dev-dependency.)
    #[test]
    fn random_operations_match_a_hashmap_model() {
        for seed in 0..40 {
            let mut rng = sim::Rng::new(seed);
            let mut t: Table<u64> = Table::with_capacity(8);
            let mut model: HashMap<u64, u64> = HashMap::new();
            let space = 4 + rng.below(200);
            for step in 0..2000u64 {
                let k = rng.below(space) * 0x1_0001 + (seed << 40);
                let h = hash(k);
                match rng.below(3) {
                    0 | 1 => {
                        let (i, new) = t.find_or_insert(k, h);
                        assert_eq!(new, !model.contains_key(&k));
                        *t.get_mut(i) += step;
                        *model.entry(k).or_insert(0) += step;
                    }
                    _ => {
                        let got = t.find(k, h).map(|i| t.remove_at(i));
                        assert_eq!(got, model.remove(&k), "seed {seed} step {step}");
                    }
                }
                if let Err(e) = t.check_invariants() {
                    panic!("seed {seed} step {step}: {e}");
                }
                assert_eq!(t.len(), model.len());
            }
            for (&k, &v) in &model {
                assert_eq!(t.find(k, hash(k)).map(|i| *t.get(i)), Some(v));
            }
            let mut keys: Vec<u64> = t.iter().map(|(_, k, _)| k).collect();
            keys.sort_unstable();
            let mut want: Vec<u64> = model.keys().copied().collect();
            want.sort_unstable();
            assert_eq!(keys, want);
        }
    }
}
