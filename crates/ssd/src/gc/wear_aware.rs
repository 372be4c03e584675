//! Wear-aware: greedy on live pages plus a penalty proportional to how worn the block is
//! relative to the unit's least-worn block, so GC spreads erases. The penalty is one page per
//! `1/8` of the erase-count range.

use super::{GcView, VictimPolicy};
use media::BlockId;

pub struct WearAware;

impl VictimPolicy for WearAware {
    fn choose(&self, view: &GcView<'_>) -> Option<BlockId> {
        let range = u64::from(view.erase_count_max.saturating_sub(view.erase_count_min)).max(1);
        view.candidates
            .iter()
            .filter(|c| c.live < c.pages)
            .min_by_key(|c| {
                let wear = u64::from(c.erase_count - view.erase_count_min.min(c.erase_count));
                let penalty = wear * u64::from(c.pages) / (8 * range);
                (u64::from(c.live) + penalty, c.block.0)
            })
            .map(|c| c.block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gc::Candidate;

    #[test]
    fn a_worn_block_loses_to_a_young_one_with_a_little_more_live_data() {
        let cands = [
            Candidate {
                block: BlockId(0),
                live: 2,
                pages: 64,
                age: 0,
                erase_count: 100,
            },
            Candidate {
                block: BlockId(1),
                live: 4,
                pages: 64,
                age: 0,
                erase_count: 0,
            },
        ];
        let v = GcView {
            candidates: &cands,
            erase_count_min: 0,
            erase_count_max: 100,
        };
        assert_eq!(WearAware.choose(&v), Some(BlockId(1)));
    }
}
