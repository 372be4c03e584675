//! Greedy: the block with the fewest live pages (ties: lower block id). Reclaims the most
//! space per copy now; blind to age and wear.

use super::{GcView, VictimPolicy};
use media::BlockId;

pub struct Greedy;

impl VictimPolicy for Greedy {
    fn choose(&self, view: &GcView<'_>) -> Option<BlockId> {
        // Two branch-free passes (the minimum, then its first position) vectorize; this scan
        // runs once per GC victim over every block of a unit.
        let key = |(&live, &ok): (&u16, &bool)| if ok { live } else { u16::MAX };
        let min = view.live.iter().zip(view.collectable).map(key).min()?;
        if u32::from(min) >= view.pages {
            return None;
        }
        let i = view
            .live
            .iter()
            .zip(view.collectable)
            .map(key)
            .position(|k| k == min)?;
        Some(view.block(i))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A view over blocks `10..10+n` with the given live counts, all collectable.
    pub(crate) struct V {
        pub live: Vec<u16>,
        pub ok: Vec<bool>,
        pub stamp: Vec<u64>,
        pub erase: Vec<u32>,
    }
    impl V {
        pub fn new(live: &[u16]) -> V {
            let n = live.len();
            V {
                live: live.to_vec(),
                ok: vec![true; n],
                stamp: vec![0; n],
                erase: vec![0; n],
            }
        }
        pub fn view(&self, pages: u32, clock: u64) -> GcView<'_> {
            GcView {
                first_block: 10,
                live: &self.live,
                collectable: &self.ok,
                stamp: &self.stamp,
                clock,
                erase_count: &self.erase,
                pages,
            }
        }
    }

    #[test]
    fn picks_fewest_live_and_skips_full_or_protected_blocks() {
        let mut v = V::new(&[5, 2, 8, 2, 0]);
        v.ok[4] = false;
        assert_eq!(Greedy.choose(&v.view(8, 0)), Some(BlockId(11)));
        let full = V::new(&[8]);
        assert_eq!(Greedy.choose(&full.view(8, 0)), None);
    }
}
