//! Cost-benefit (Rosenblum & Ousterhout, LFS): maximise age × (1 − u) / (2u), where u is
//! the fraction of live pages (reading them and writing them back costs 2u). Prefers old,
//! mostly-dead blocks, so cold data is not copied over and over.

use super::{GcView, VictimPolicy};
use media::BlockId;

pub struct CostBenefit;

impl VictimPolicy for CostBenefit {
    fn choose(&self, view: &GcView<'_>) -> Option<BlockId> {
        let mut best: Option<(f64, usize)> = None;
        for i in view.candidates() {
            let live = view.live[i];
            let u = f64::from(live) / f64::from(view.pages);
            let age = view.clock.saturating_sub(view.stamp[i]) as f64;
            let score = if live == 0 {
                f64::INFINITY
            } else {
                (age + 1.0) * (1.0 - u) / (2.0 * u)
            };
            if best.is_none_or(|(s, _)| score > s) {
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
    fn an_old_block_beats_a_slightly_emptier_young_one() {
        let mut v = V::new(&[3, 4]);
        v.stamp = vec![990, 0];
        assert_eq!(CostBenefit.choose(&v.view(8, 1000)), Some(BlockId(11)));
    }
}
