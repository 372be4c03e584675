//! Static wear leveling as a policy: when the erase-count gap among collectable blocks exceeds
//! `threshold`, choose the least-worn one (it holds cold data that keeps a young block out of
//! circulation) for relocation.

use super::{GcView, VictimPolicy};
use media::BlockId;

pub struct StaticWl {
    pub threshold: u32,
}

impl VictimPolicy for StaticWl {
    fn choose(&self, view: &GcView<'_>) -> Option<BlockId> {
        let mut lo: Option<(u32, usize)> = None;
        let mut hi = 0u32;
        for (i, &ok) in view.collectable.iter().enumerate() {
            if !ok {
                continue;
            }
            let e = view.erase_count[i];
            hi = hi.max(e);
            if lo.is_none_or(|(l, _)| e < l) {
                lo = Some((e, i));
            }
        }
        let (l, i) = lo?;
        (hi - l > self.threshold).then(|| view.block(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gc::greedy::tests::V;

    #[test]
    fn acts_only_past_the_threshold() {
        let mut v = V::new(&[8, 1]);
        v.erase = vec![1, 50];
        assert_eq!(
            StaticWl { threshold: 10 }.choose(&v.view(8, 0)),
            Some(BlockId(10))
        );
        assert_eq!(StaticWl { threshold: 60 }.choose(&v.view(8, 0)), None);
    }
}
