//! The buffer pool: a fixed number of frames, each caching one DB page's current image,
//! replaced by the LRU policy (`lru.rs`).
//!
//! A frame knows whether it is dirty, its WAL page LSN and recovery LSN (the first log
//! record that dirtied it since it was last clean), the client whose active transaction
//! dirtied it (device transactions: page-level locks guarantee a single one), and when the
//! read that filled it completes (`ready_at`): until then it is pinned and a client that
//! finds it waits for that instant.
//!
//! The pool does not decide whether a dirty frame may be written back (steal / no-steal,
//! the WAL rule, SCC/BPCC's last-page rule): the engine asks the recovery strategy and
//! passes the answer to the policy.

use crate::data::PageNo;
use crate::lock::FixedHash;
use crate::lru::{self, Choice, FrameView};
use sim::SimTime;
use std::collections::{BTreeSet, HashMap};

#[derive(Clone, Debug)]
pub struct Frame {
    pub page: PageNo,
    pub values: Vec<u64>,
    /// WAL page LSN: the last log record applied to this page (0 without a log).
    pub lsn: u64,
    pub dirty: bool,
    /// WAL: LSN of the first record that dirtied the page since it was last clean.
    pub rec_lsn: u64,
    /// The client whose active transaction dirtied the page (when one is known).
    pub owner: Option<u32>,
    pub ready_at: SimTime,
    stamp: u64,
}

impl Frame {
    pub fn new(page: PageNo, values: Vec<u64>, lsn: u64, ready_at: SimTime) -> Frame {
        Frame {
            page,
            values,
            lsn,
            dirty: false,
            rec_lsn: 0,
            owner: None,
            ready_at,
            stamp: 0,
        }
    }
}

pub struct Pool {
    frames: Vec<Option<Frame>>,
    map: HashMap<PageNo, u32, FixedHash>,
    lru: BTreeSet<(u64, u32)>,
    free: Vec<u32>,
    next_stamp: u64,
}

impl Pool {
    pub fn new(frames: u32) -> Pool {
        Pool {
            frames: (0..frames).map(|_| None).collect(),
            map: HashMap::default(),
            lru: BTreeSet::new(),
            free: (0..frames).rev().collect(),
            next_stamp: 1,
        }
    }

    pub fn capacity(&self) -> usize {
        self.frames.len()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The frame holding `page`, without touching its recency.
    pub fn find(&self, page: PageNo) -> Option<u32> {
        self.map.get(&page).copied()
    }

    /// Marks `f` most recently used.
    pub fn touch(&mut self, f: u32) {
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        if let Some(fr) = self.frames[f as usize].as_mut() {
            self.lru.remove(&(fr.stamp, f));
            fr.stamp = stamp;
            self.lru.insert((stamp, f));
        }
    }

    pub fn frame(&self, f: u32) -> &Frame {
        self.frames[f as usize]
            .as_ref()
            .expect("frame index of an empty frame")
    }

    pub fn frame_mut(&mut self, f: u32) -> &mut Frame {
        self.frames[f as usize]
            .as_mut()
            .expect("frame index of an empty frame")
    }

    pub fn has_free(&self) -> bool {
        !self.free.is_empty()
    }

    /// The LRU choice among occupied frames, given whether each may be evicted now.
    pub fn choose_victim(&self, evictable: impl Fn(&Frame) -> bool) -> Choice {
        lru::choose(self.lru.iter().map(|&(_, f)| {
            let fr = self.frame(f);
            FrameView {
                frame: f,
                evictable: evictable(fr),
                dirty: fr.dirty,
            }
        }))
    }

    /// Takes a frame out of the pool.
    pub fn remove(&mut self, f: u32) -> Frame {
        let fr = self.frames[f as usize]
            .take()
            .expect("removing an empty frame");
        self.lru.remove(&(fr.stamp, f));
        self.map.remove(&fr.page);
        self.free.push(f);
        fr
    }

    /// Puts `frame` into a free slot (the caller made room) and marks it most recently used.
    pub fn install(&mut self, frame: Frame) -> u32 {
        let f = self.free.pop().expect("install without a free frame");
        debug_assert!(!self.map.contains_key(&frame.page));
        self.map.insert(frame.page, f);
        self.frames[f as usize] = Some(frame);
        self.touch(f);
        f
    }

    /// Occupied frames in frame order (for checkpoints and commit-time forces).
    pub fn occupied(&self) -> impl Iterator<Item = (u32, &Frame)> {
        self.frames
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.as_ref().map(|f| (i as u32, f)))
    }

    pub fn check_invariants(&self) -> Result<(), String> {
        if self.map.len() + self.free.len() != self.frames.len() || self.lru.len() != self.map.len()
        {
            return Err("buffer pool: map, free list and LRU disagree".into());
        }
        for (p, f) in &self.map {
            match &self.frames[*f as usize] {
                Some(fr) if fr.page == *p && self.lru.contains(&(fr.stamp, *f)) => {}
                _ => return Err(format!("buffer pool: page {p:?} maps to a wrong frame")),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used_unprotected() {
        let mut p = Pool::new(2);
        let a = p.install(Frame::new(PageNo(1), vec![], 0, SimTime::ZERO));
        let b = p.install(Frame::new(PageNo(2), vec![], 0, SimTime::ZERO));
        p.touch(a);
        assert_eq!(p.choose_victim(|_| true), Choice::Evict(b));
        assert_eq!(p.choose_victim(|f| f.page != PageNo(2)), Choice::Evict(a));
        let fr = p.remove(b);
        assert_eq!(fr.page, PageNo(2));
        assert!(p.has_free());
        p.check_invariants().unwrap();
    }
}
