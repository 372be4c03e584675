//! Per parallel unit, two facts about its free blocks kept up to date as they change, so a
//! question asked before every command (LightTx's `wants_checkpoint`, §3.3.2: is a unit's
//! available zone used up, or is a unit at its GC threshold with nothing to collect?) is
//! answered without visiting every unit and searching its blocks:
//!
//! - *refill*: the unit's checkpoint window is empty and it has more clean free blocks than
//!   the GC threshold (a checkpoint could refill the window);
//! - *short*: it has at most the GC threshold of clean free blocks and no block GC may
//!   collect that frees space (full, eligible and not wholly live: `collectable`).
//!
//! `FtlCore` calls `UnitTrack::set` after every change to a unit's free pool or window
//! (`FtlCore::note_pool`) and whenever a block starts or stops being collectable (its
//! GC-candidate flag or its live count crosses the block's page count). `FtlCore::
//! check_invariants` compares the tracked state with one counted from scratch
//! (`FtlCore::count_units`), so a change that bypasses the bookkeeping is caught by every
//! crash check.

use media::PuId;

const REFILL: u8 = 1;
const SHORT: u8 = 2;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct UnitTrack {
    /// Per unit: blocks GC may collect that free space (full, eligible, fewer live pages
    /// than a block holds).
    pub(crate) collectable: Vec<u32>,
    /// Per unit: `REFILL` and `SHORT` bits.
    state: Vec<u8>,
    /// Units with `REFILL` set.
    refill: u32,
    /// Units with `SHORT` set.
    short: u32,
}

impl UnitTrack {
    pub(crate) fn new(units: usize) -> UnitTrack {
        UnitTrack {
            collectable: vec![0; units],
            state: vec![0; units],
            refill: 0,
            short: 0,
        }
    }

    /// Records unit `pu`'s two facts, keeping the counts in step.
    #[inline]
    pub(crate) fn set(&mut self, pu: PuId, refill: bool, short: bool) {
        let Some(s) = self.state.get_mut(pu.0 as usize) else {
            return;
        };
        let new = if refill { REFILL } else { 0 } | if short { SHORT } else { 0 };
        let old = *s;
        if old == new {
            return;
        }
        *s = new;
        self.refill = self.refill + u32::from(new & REFILL != 0) - u32::from(old & REFILL != 0);
        self.short = self.short + u32::from(new & SHORT != 0) - u32::from(old & SHORT != 0);
    }

    /// Units whose window is empty while a checkpoint could refill it.
    pub(crate) fn refill_count(&self) -> u32 {
        self.refill
    }

    /// Units at their GC threshold with nothing to collect, in unit order.
    pub(crate) fn short_units(&self) -> impl Iterator<Item = PuId> + '_ {
        let any = self.short > 0;
        self.state
            .iter()
            .enumerate()
            .filter(move |(_, s)| any && *s & SHORT != 0)
            .map(|(u, _)| PuId(u as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_follow_the_bits() {
        let mut t = UnitTrack::new(3);
        t.set(PuId(0), true, false);
        t.set(PuId(2), true, true);
        assert_eq!((t.refill_count(), t.short), (2, 1));
        t.set(PuId(2), false, true);
        t.set(PuId(0), true, false);
        assert_eq!((t.refill_count(), t.short), (1, 1));
        assert_eq!(t.short_units().collect::<Vec<_>>(), vec![PuId(2)]);
        t.set(PuId(2), false, false);
        assert_eq!(t.short_units().count(), 0);
        // A unit beyond the table (before the pools exist) is ignored.
        t.set(PuId(7), true, true);
        assert_eq!((t.refill_count(), t.short), (1, 0));
    }
}
