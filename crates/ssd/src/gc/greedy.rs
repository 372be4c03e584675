//! Greedy: the block with the fewest live pages (ties: lower block id). Reclaims the most
//! space per copy now; blind to age and wear.

use super::{GcView, VictimPolicy};
use media::BlockId;

pub struct Greedy;

impl VictimPolicy for Greedy {
    fn choose(&self, view: &GcView<'_>) -> Option<BlockId> {
        view.candidates
            .iter()
            .filter(|c| c.live < c.pages)
            .min_by_key(|c| (c.live, c.block.0))
            .map(|c| c.block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gc::Candidate;

    fn c(block: u32, live: u32) -> Candidate {
        Candidate {
            block: BlockId(block),
            live,
            pages: 8,
            age: 0,
            erase_count: 0,
        }
    }

    #[test]
    fn picks_fewest_live_and_skips_full_blocks() {
        let cands = [c(0, 5), c(1, 2), c(2, 8), c(3, 2)];
        let v = GcView {
            candidates: &cands,
            erase_count_min: 0,
            erase_count_max: 0,
        };
        assert_eq!(Greedy.choose(&v), Some(BlockId(1)));
        let full = [c(0, 8)];
        let v = GcView {
            candidates: &full,
            erase_count_min: 0,
            erase_count_max: 0,
        };
        assert_eq!(Greedy.choose(&v), None);
    }
}
