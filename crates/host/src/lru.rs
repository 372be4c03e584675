//! Buffer replacement policy: LRU, as a pure decision over a read-only view.
//!
//! The pool hands over its frames from least to most recently used, each with whether the
//! engine and the recovery strategy allow evicting it now (not pinned by its read in flight,
//! not protected by no-steal or by SCC/BPCC's last-shadow-page rule). The policy returns the first evictable one; the pool
//! carries the choice out.

/// One frame as the policy sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameView {
    pub frame: u32,
    pub evictable: bool,
    pub dirty: bool,
}

/// What to do to make room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    Evict(u32),
    /// Every frame is protected.
    Nothing,
}

/// LRU: the least recently used evictable frame. `lru_order` runs from least to most
/// recently used.
pub fn choose(lru_order: impl IntoIterator<Item = FrameView>) -> Choice {
    lru_order
        .into_iter()
        .find(|f| f.evictable)
        .map_or(Choice::Nothing, |f| Choice::Evict(f.frame))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn least_recent_evictable_wins() {
        let v = |frame, evictable| FrameView {
            frame,
            evictable,
            dirty: false,
        };
        assert_eq!(
            choose([v(3, false), v(1, true), v(2, true)]),
            Choice::Evict(1)
        );
        assert_eq!(choose([v(3, false)]), Choice::Nothing);
    }
}
