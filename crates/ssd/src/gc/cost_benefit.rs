//! Cost-benefit (Rosenblum & Ousterhout, LFS): maximise age × (1 − u) / (2u), where u is
//! the fraction of live pages (reading them and writing them back costs 2u). Prefers old,
//! mostly-dead blocks, so cold data is not copied over and over.

use super::{GcView, VictimPolicy};
use media::BlockId;

pub struct CostBenefit;

impl VictimPolicy for CostBenefit {
    fn choose(&self, view: &GcView<'_>) -> Option<BlockId> {
        let mut best: Option<(f64, u32)> = None;
        for c in view.candidates.iter().filter(|c| c.live < c.pages) {
            let u = f64::from(c.live) / f64::from(c.pages);
            let score = if c.live == 0 {
                f64::INFINITY
            } else {
                (c.age as f64 + 1.0) * (1.0 - u) / (2.0 * u)
            };
            let better = match best {
                None => true,
                Some((s, b)) => score > s || (score == s && c.block.0 < b),
            };
            if better {
                best = Some((score, c.block.0));
            }
        }
        best.map(|(_, b)| BlockId(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gc::Candidate;

    #[test]
    fn an_old_block_beats_a_slightly_emptier_young_one() {
        let cands = [
            Candidate {
                block: BlockId(0),
                live: 3,
                pages: 8,
                age: 10,
                erase_count: 0,
            },
            Candidate {
                block: BlockId(1),
                live: 4,
                pages: 8,
                age: 1000,
                erase_count: 0,
            },
        ];
        let v = GcView {
            candidates: &cands,
            erase_count_min: 0,
            erase_count_max: 0,
        };
        assert_eq!(CostBenefit.choose(&v), Some(BlockId(1)));
    }
}
