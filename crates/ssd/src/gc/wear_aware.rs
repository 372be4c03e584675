//! Wear-aware: greedy on live pages plus a penalty proportional to how worn the block is
//! relative to the unit's least-worn block, so GC spreads erases. The penalty is one page per
//! `1/8` of the unit's erase-count range.

use super::{GcView, VictimPolicy};
use media::BlockId;

pub struct WearAware;

impl VictimPolicy for WearAware {
    fn choose(&self, view: &GcView<'_>) -> Option<BlockId> {
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
}
