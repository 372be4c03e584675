//! Static wear leveling as a policy: when the gap between the most and least worn blocks
//! exceeds `threshold`, choose the least-worn full block (it holds cold data that keeps a
//! young block out of circulation) for relocation.

use super::{GcView, VictimPolicy};
use media::BlockId;

pub struct StaticWl {
    pub threshold: u32,
}

impl VictimPolicy for StaticWl {
    fn choose(&self, view: &GcView<'_>) -> Option<BlockId> {
        if view.erase_count_max.saturating_sub(view.erase_count_min) <= self.threshold {
            return None;
        }
        view.candidates
            .iter()
            .min_by_key(|c| (c.erase_count, c.block.0))
            .map(|c| c.block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gc::Candidate;

    #[test]
    fn acts_only_past_the_threshold() {
        let cands = [
            Candidate {
                block: BlockId(3),
                live: 8,
                pages: 8,
                age: 0,
                erase_count: 1,
            },
            Candidate {
                block: BlockId(4),
                live: 1,
                pages: 8,
                age: 0,
                erase_count: 50,
            },
        ];
        let v = GcView {
            candidates: &cands,
            erase_count_min: 1,
            erase_count_max: 50,
        };
        assert_eq!(StaticWl { threshold: 10 }.choose(&v), Some(BlockId(3)));
        assert_eq!(StaticWl { threshold: 60 }.choose(&v), None);
    }
}
