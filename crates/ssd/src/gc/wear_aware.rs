//! Wear-aware: greedy on live pages plus a penalty proportional to how worn the block is
//! relative to the unit's least-worn block, so GC spreads erases. The penalty is one page per
//! `1/8` of the unit's erase-count range.
//!
//! Cost: `choose` runs once per victim over every block of the unit (8,192 in Flag Commit's
//! full-scale device), so it reads the erase counts once for both ends of the range, and a
//! candidate whose live pages alone already reach the best score so far is passed over
//! without its penalty (the penalty is never negative, so it cannot win): the same victim as
//! scoring every candidate, ties to the lowest block.

use super::{GcView, VictimPolicy};
use media::BlockId;

pub struct WearAware;

impl VictimPolicy for WearAware {
    fn choose(&self, view: &GcView<'_>) -> Option<BlockId> {
        let (lo, hi) = if view.erase_count.is_empty() {
            (0, 0)
        } else {
            view.erase_count
                .iter()
                .fold((u32::MAX, 0), |(lo, hi), &e| (lo.min(e), hi.max(e)))
        };
        let range = u64::from(hi - lo).max(1);
        let pages = u64::from(view.pages);
        let mut best: Option<(u64, usize)> = None;
        for i in view.candidates() {
            let live = u64::from(view.live[i]);
            if best.is_some_and(|(s, _)| live >= s) {
                continue;
            }
            let wear = u64::from(view.erase_count[i] - lo);
            let score = live + wear * pages / (8 * range);
            if best.is_none_or(|(s, _)| score < s) {
                best = Some((score, i));
            }
        }
        best.map(|(_, i)| view.block(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gc::greedy::tests::V;

    #[test]
    fn a_worn_block_loses_to_a_young_one_with_a_little_more_live_data() {
        let mut v = V::new(&[2, 4]);
        v.erase = vec![100, 0];
        assert_eq!(WearAware.choose(&v.view(64, 0)), Some(BlockId(11)));
    }

    /// Every candidate scored, the first lowest score kept: the rule `choose` must give.
    fn reference(view: &GcView<'_>) -> Option<BlockId> {
        let lo = view.erase_count.iter().copied().min().unwrap_or(0);
        let hi = view.erase_count.iter().copied().max().unwrap_or(0);
        let range = u64::from(hi - lo).max(1);
        let mut best: Option<(u64, usize)> = None;
        for i in view.candidates() {
            let wear = u64::from(view.erase_count[i] - lo);
            let score = u64::from(view.live[i]) + wear * u64::from(view.pages) / (8 * range);
            if best.is_none_or(|(s, _)| score < s) {
                best = Some((score, i));
            }
        }
        best.map(|(_, i)| view.block(i))
    }

    /// Passing over candidates by their live pages picks the victim scoring every candidate
    /// picks, on random views (wide and narrow erase ranges, ties, protected and full blocks).
    #[test]
    fn skipping_candidates_picks_the_same_victim_as_scoring_all() {
        let mut rng = sim::Rng::new(7).fork("wear-aware");
        for round in 0..2000u64 {
            let n = 1 + rng.below(64) as usize;
            let pages = 1 + rng.below(64) as u32;
            let spread = [1, 3, 17, 1000, 100_000][(round % 5) as usize];
            let base = rng.below(1_000_000) as u32;
            let mut v = V::new(
                &(0..n)
                    .map(|_| rng.below(u64::from(pages) + 1) as u16)
                    .collect::<Vec<_>>(),
            );
            v.erase = (0..n).map(|_| base + rng.below(spread) as u32).collect();
            v.ok = (0..n).map(|_| rng.below(5) != 0).collect();
            let view = v.view(pages, 0);
            assert_eq!(WearAware.choose(&view), reference(&view), "round {round}");
        }
    }
}
