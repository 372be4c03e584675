//! Recovery classification of CFC and AFC pages (Flag Commit §3.1.3, §3.2, §3.4): [`Graph`]
//! builds chains, clusters and their source groups from a set of pages, and [`decide`] says
//! which transactions are committed, which are inconsistent, and which pages are in S⁺. Pure
//! functions over page metadata, used by recovery (`recovery.rs`) and by COMMIT
//! (`normal.rs`); the tests below replay the paper's figures.

use super::meta::{PageMeta, Variant};
use crate::error::Result;
use media::Ppa;

const NO: u32 = u32::MAX;

/// The chain structure of a set of data pages.
///
/// A link from page `p` to page `q` is *valid* only if `q` is in the set, belongs to the same
/// transaction and was written before it (`q.ord < p.ord`). Physical links can dangle once
/// their target is erased, and the address may be reused; the XID and order check make a
/// reused address harmless (XIDs are unique for the device's lifetime, and a page of the same
/// transaction that happens to land there only merges two pieces of one chain).
///
/// Pages are grouped into *clusters*: with the block-based flag technique (§3.4), pages of one
/// transaction in one block joined by valid links; without it, every page is its own cluster.
/// A *source group* (a head) is a cluster no page of another cluster links into. With
/// single-page clusters the heads are exactly the head pages `U = S − R` of §3.1.3; with
/// clusters they are the paper's head clusters.
///
/// The cluster graph has no cycles: a cluster is a tree of intra-block links (each page has
/// one link, to an older page), so only its oldest page links out of it, and only to a page
/// older still; along any path of clusters the oldest page's order strictly decreases.
#[derive(Clone, Debug)]
pub struct Graph {
    /// Valid predecessor of each page (index into the page slice), or `u32::MAX`.
    pub pred: Vec<u32>,
    /// Cluster of each page.
    pub cluster: Vec<u32>,
    /// The head clusters (source groups); their pages are `members_of(c)`.
    pub sources: Vec<u32>,
    /// Members of each cluster (CSR: `members[start[c]..start[c+1]]`).
    member_start: Vec<u32>,
    members: Vec<u32>,
}

impl Graph {
    /// Builds the structure. `block_of` maps a page to its erase block.
    pub fn build(pages: &[PageMeta], block_of: &dyn Fn(Ppa) -> u32, block_flags: bool) -> Graph {
        let n = pages.len();
        let mut by_ppa: Vec<(u32, u32)> = pages
            .iter()
            .enumerate()
            .map(|(i, p)| (p.ppa.0, i as u32))
            .collect();
        by_ppa.sort_unstable();
        let find = |ppa: Ppa| -> Option<u32> {
            by_ppa
                .binary_search_by_key(&ppa.0, |e| e.0)
                .ok()
                .map(|k| by_ppa[k].1)
        };
        let mut pred = vec![NO; n];
        for (i, p) in pages.iter().enumerate() {
            if p.link == Ppa::NONE {
                continue;
            }
            if let Some(j) = find(p.link) {
                let q = &pages[j as usize];
                if q.xid == p.xid && q.ord < p.ord {
                    pred[i] = j;
                }
            }
        }
        // Clusters: union-find over valid links that stay inside one block.
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn root(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                let g = parent[parent[x as usize] as usize];
                parent[x as usize] = g;
                x = g;
            }
            x
        }
        if block_flags {
            for i in 0..n {
                let j = pred[i];
                if j != NO && block_of(pages[i].ppa) == block_of(pages[j as usize].ppa) {
                    let (a, b) = (root(&mut parent, i as u32), root(&mut parent, j));
                    if a != b {
                        parent[a.max(b) as usize] = a.min(b);
                    }
                }
            }
        }
        let mut cid = vec![NO; n];
        let mut cluster = vec![0u32; n];
        let mut nc = 0u32;
        for (i, c) in cluster.iter_mut().enumerate() {
            let r = root(&mut parent, i as u32) as usize;
            if cid[r] == NO {
                cid[r] = nc;
                nc += 1;
            }
            *c = cid[r];
        }
        let ncl = nc as usize;
        // Members of each cluster (CSR).
        let mut member_start = vec![0u32; ncl + 1];
        for &c in &cluster {
            member_start[c as usize + 1] += 1;
        }
        for c in 0..ncl {
            member_start[c + 1] += member_start[c];
        }
        let mut fill = member_start.clone();
        let mut members = vec![0u32; n];
        for (i, &c) in cluster.iter().enumerate() {
            members[fill[c as usize] as usize] = i as u32;
            fill[c as usize] += 1;
        }
        // A cluster is a head unless a page of another cluster links into it.
        let mut linked = vec![false; ncl];
        for i in 0..n {
            let j = pred[i];
            if j != NO && cluster[i] != cluster[j as usize] {
                linked[cluster[j as usize] as usize] = true;
            }
        }
        let sources = (0..ncl as u32).filter(|c| !linked[*c as usize]).collect();
        Graph {
            pred,
            cluster,
            sources,
            member_start,
            members,
        }
    }

    /// The pages of cluster `c`.
    pub fn members_of(&self, c: u32) -> &[u32] {
        &self.members
            [self.member_start[c as usize] as usize..self.member_start[c as usize + 1] as usize]
    }

    /// Every page reachable from the given head clusters by following links, a reached
    /// cluster counting as a whole (§3.1.3's S⁺, at cluster granularity with §3.4).
    pub fn reach(&self, from: impl Iterator<Item = u32>) -> Vec<bool> {
        let n = self.pred.len();
        let mut seen_cluster = vec![false; self.member_start.len().saturating_sub(1)];
        let mut out = vec![false; n];
        let mut stack: Vec<u32> = from.collect();
        while let Some(c) = stack.pop() {
            if seen_cluster[c as usize] {
                continue;
            }
            seen_cluster[c as usize] = true;
            for &m in self.members_of(c) {
                out[m as usize] = true;
                let p = self.pred[m as usize];
                if p != NO {
                    stack.push(self.cluster[p as usize]);
                }
            }
        }
        out
    }
}

/// What recovery concluded about the transactions on a device.
#[derive(Clone, Debug, Default)]
pub struct Decision {
    /// Committed transactions (sorted).
    pub committed: Vec<u32>,
    /// CFC: transactions with both a TRUE and a FALSE head (§3.1.3: "inconsistent", treated
    /// as aborted), sorted. Never set for AFC.
    pub inconsistent: Vec<u32>,
    /// S⁺: whether each page is a committed page.
    pub in_s_plus: Vec<bool>,
    /// Current flag of each page where known (read from the page or final in the scan).
    pub flags: Vec<Option<u8>>,
    /// Per head cluster (in `Graph::sources` order): whether it holds a TRUE page (CFC).
    pub head_true: Vec<bool>,
}

impl Decision {
    pub fn is_committed(&self, xid: u32) -> bool {
        self.committed.binary_search(&xid).is_ok()
    }
    pub fn is_inconsistent(&self, xid: u32) -> bool {
        self.inconsistent.binary_search(&xid).is_ok()
    }
}

/// Page indices grouped by transaction: sorted by (XID, Ord); returns the order and the
/// start of each group.
pub(super) fn by_xid(pages: &[PageMeta]) -> (Vec<u32>, Vec<usize>) {
    let mut order: Vec<u32> = (0..pages.len() as u32).collect();
    order.sort_unstable_by_key(|&i| (pages[i as usize].xid, pages[i as usize].ord, i));
    let mut starts = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        if k == 0 || pages[order[k - 1] as usize].xid != pages[i as usize].xid {
            starts.push(k);
        }
    }
    starts.push(order.len());
    (order, starts)
}

/// Decides which transactions are committed. `current[i]` says whether page `i`'s scanned flag
/// was read from the page itself; otherwise it came from a summary page written before later
/// flag changes (footnote 7), and `read_flag(i)` reads the page, but only where the flag could
/// still have changed ([`Variant::is_final`]).
///
/// CFC (§3.1.3): U⁺ / U⁻ are the head clusters with / without a TRUE flag; a transaction with
/// heads in both is inconsistent and treated as aborted; S⁺ is everything reachable from the
/// remaining U⁺. AFC (§3.2): following every chain from its head, a transaction is committed
/// iff no page of it holds FALSE (Definition 3.3); S⁺ is everything reachable from its heads.
pub fn decide(
    v: Variant,
    pages: &[PageMeta],
    g: &Graph,
    current: &[bool],
    read_flag: &mut dyn FnMut(usize) -> Result<u8>,
) -> Result<Decision> {
    let n = pages.len();
    let mut flags: Vec<Option<u8>> = pages
        .iter()
        .zip(current)
        .map(|(p, cur)| (*cur || v.is_final(p.flag, p.ord)).then_some(p.flag))
        .collect();
    let mut committed = Vec::new();
    let mut inconsistent = Vec::new();
    let mut head_true = vec![false; g.sources.len()];
    let mut flag_of = |i: usize, flags: &mut Vec<Option<u8>>| -> Result<u8> {
        if let Some(f) = flags[i] {
            return Ok(f);
        }
        let f = read_flag(i)?;
        flags[i] = Some(f);
        Ok(f)
    };
    match v {
        Variant::Cfc => {
            // (xid, TRUE head?) per head cluster.
            let mut heads: Vec<(u32, bool)> = Vec::with_capacity(g.sources.len());
            let mut order: Vec<u32> = Vec::new();
            for (k, &c) in g.sources.iter().enumerate() {
                let m = g.members_of(c);
                let xid = pages[m[0] as usize].xid;
                let mut has_true = m
                    .iter()
                    .any(|&i| flags[i as usize].is_some_and(|f| v.is_true(f)));
                if !has_true {
                    // The commit flag sits on a cluster's newest page; look there first.
                    order.clear();
                    order.extend_from_slice(m);
                    order.sort_by_key(|&i| std::cmp::Reverse(pages[i as usize].ord));
                    for &i in &order {
                        if v.is_true(flag_of(i as usize, &mut flags)?) {
                            has_true = true;
                            break;
                        }
                    }
                }
                head_true[k] = has_true;
                heads.push((xid, has_true));
            }
            heads.sort_unstable();
            let mut k = 0;
            while k < heads.len() {
                let xid = heads[k].0;
                let (mut t, mut f) = (false, false);
                while k < heads.len() && heads[k].0 == xid {
                    t |= heads[k].1;
                    f |= !heads[k].1;
                    k += 1;
                }
                if t && !f {
                    committed.push(xid);
                } else if t && f {
                    inconsistent.push(xid);
                }
            }
            // An inconsistent transaction stays aborted only while one of its FALSE heads
            // survives every TRUE page of it; recovery needs to know every TRUE page.
            if !inconsistent.is_empty() {
                for (i, p) in pages.iter().enumerate() {
                    if inconsistent.binary_search(&p.xid).is_ok() {
                        flag_of(i, &mut flags)?;
                    }
                }
            }
        }
        Variant::Afc => {
            let (order, starts) = by_xid(pages);
            for w in starts.windows(2) {
                let grp = &order[w[0]..w[1]];
                let mut aborted = grp
                    .iter()
                    .any(|&i| flags[i as usize].is_some_and(|f| !v.is_true(f)));
                if !aborted {
                    for &i in grp {
                        if !v.is_true(flag_of(i as usize, &mut flags)?) {
                            aborted = true;
                            break;
                        }
                    }
                }
                if !aborted {
                    committed.push(pages[grp[0] as usize].xid);
                }
            }
        }
    }
    let is_committed = |x: u32| committed.binary_search(&x).is_ok();
    let in_s_plus = g.reach(
        g.sources
            .iter()
            .copied()
            .filter(|&c| is_committed(pages[g.members_of(c)[0] as usize].xid)),
    );
    debug_assert!((0..n).all(|i| in_s_plus[i] == is_committed(pages[i].xid)));
    Ok(Decision {
        committed,
        inconsistent,
        in_s_plus,
        flags,
        head_true,
    })
}

#[cfg(test)]
mod tests {
    use super::super::meta::{FLAG_AFC_FALSE, FLAG_AFC_INITIAL_FALSE, FLAG_CFC_FALSE, FLAG_TRUE};
    use super::*;

    /// A page for the figure shapes: `ppa` = block * 8 + page.
    fn pg(ppa: u32, xid: u32, ord: u32, link: Option<u32>, flag: u8) -> PageMeta {
        PageMeta {
            ppa: Ppa(ppa),
            lba: ppa,
            ver: u64::from(ord) + 1,
            xid,
            ord,
            link: link.map_or(Ppa::NONE, Ppa),
            flag,
        }
    }

    fn classify(v: Variant, pages: &[PageMeta], block_flags: bool) -> Decision {
        let g = Graph::build(pages, &|p| p.0 / 8, block_flags);
        let cur = vec![true; pages.len()];
        decide(v, pages, &g, &cur, &mut |i| Ok(pages[i].flag)).unwrap()
    }

    const F: u8 = FLAG_CFC_FALSE;
    const T: u8 = FLAG_TRUE;

    #[test]
    fn fig3_cfc_commit_flag_on_the_last_page_commits() {
        // P2 (0,1) ← P3 (0,2) ← P6 (1,1): links point to the preceding page.
        let before = [
            pg(1, 7, 0, None, F),
            pg(2, 7, 1, Some(1), F),
            pg(9, 7, 2, Some(2), F),
        ];
        assert!(classify(Variant::Cfc, &before, false).committed.is_empty());
        let mut after = before;
        after[2].flag = T;
        let d = classify(Variant::Cfc, &after, false);
        assert!(d.committed.contains(&7));
        assert!(d.in_s_plus.iter().all(|x| *x));
    }

    #[test]
    fn fig5_cfc_gc_shapes() {
        // Fig. 5a: chain P4 ← P7 ← P1 (head P1 TRUE). P1 reclaimed, its flag moved to P7.
        let a = [pg(4, 3, 0, None, F), pg(7, 3, 1, Some(4), T)];
        assert!(classify(Variant::Cfc, &a, false).committed.contains(&3));
        // Without the move, the new head P7 is FALSE: the transaction would look uncommitted.
        let a_bad = [pg(4, 3, 0, None, F), pg(7, 3, 1, Some(4), F)];
        assert!(classify(Variant::Cfc, &a_bad, false).committed.is_empty());
        // Fig. 5b: P7 in the middle reclaimed: two subchains, P1 (TRUE, dangling link) and
        // P4, which gets a TRUE flag (footnote 6).
        let b = [pg(4, 3, 0, None, T), pg(1, 3, 2, Some(7), T)];
        let d = classify(Variant::Cfc, &b, false);
        assert!(d.committed.contains(&3) && d.in_s_plus.iter().all(|x| *x));
        // Had P4 not been flagged, the subchains would disagree: inconsistent, aborted.
        let b_bad = [pg(4, 3, 0, None, F), pg(1, 3, 2, Some(7), T)];
        let d = classify(Variant::Cfc, &b_bad, false);
        assert!(d.committed.is_empty() && d.inconsistent.contains(&3));
        assert!(d.in_s_plus.iter().all(|x| !*x));
    }

    #[test]
    fn inconsistent_subchains_after_a_crash_in_commit_are_aborted() {
        // A chain split by relocation before commit: two heads; a crash set only one TRUE.
        let pages = [
            pg(0, 5, 0, None, F),
            pg(1, 5, 1, Some(0), T),   // head of subchain 1, flag set
            pg(17, 5, 2, Some(40), F), // head of subchain 2 (its link dangles), flag not set
            pg(20, 9, 0, None, T),     // an unrelated committed plain write
        ];
        let d = classify(Variant::Cfc, &pages, false);
        assert!(d.inconsistent.contains(&5));
        assert!(!d.committed.contains(&5) && d.committed.contains(&9));
        assert_eq!(d.in_s_plus, vec![false, false, false, true]);
    }

    #[test]
    fn links_into_reused_addresses_do_not_join_chains() {
        // Page 3 of XID 2 links to address 1, since reused by XID 4 (another transaction) and
        // address 2 reused by a later page of XID 2 itself (higher order): both are dangling.
        let pages = [
            pg(1, 4, 0, None, T),
            pg(2, 2, 5, None, F),
            pg(3, 2, 3, Some(1), T),
            pg(5, 2, 4, Some(2), F),
        ];
        let g = Graph::build(&pages, &|p| p.0 / 8, false);
        assert_eq!(g.pred, vec![NO, NO, NO, NO]);
        let d = classify(Variant::Cfc, &pages, false);
        assert!(d.committed.contains(&4) && d.inconsistent.contains(&2));
    }

    const AT: u8 = FLAG_TRUE; // "10"
    const AI: u8 = FLAG_AFC_INITIAL_FALSE; // "11"
    const AF: u8 = FLAG_AFC_FALSE; // "00"

    #[test]
    fn fig6_afc_first_page_decides_until_it_is_reclaimed() {
        let running = [
            pg(1, 2, 0, None, AI),
            pg(2, 2, 1, Some(1), AT),
            pg(9, 2, 2, Some(2), AT),
        ];
        assert!(classify(Variant::Afc, &running, false).committed.is_empty());
        let mut committed = running;
        committed[0].flag = AT;
        assert!(classify(Variant::Afc, &committed, false)
            .committed
            .contains(&2));
    }

    #[test]
    fn fig7_afc_gc_shapes() {
        // Fig. 7a: the FALSE first page P5 reclaimed, FALSE moved to P1 (the last page).
        let a = [pg(3, 6, 1, None, AT), pg(1, 6, 2, Some(3), AF)];
        assert!(classify(Variant::Afc, &a, false).committed.is_empty());
        // Without it, the rest looks committed: the reason AFC keeps FALSE flags in GC.
        let a_bad = [pg(3, 6, 1, None, AT), pg(1, 6, 2, Some(3), AT)];
        assert!(classify(Variant::Afc, &a_bad, false).committed.contains(&6));
        // Fig. 7b: P4 in the middle reclaimed, a FALSE added to P1: both pieces aborted.
        let b = [pg(5, 6, 0, None, AI), pg(1, 6, 3, Some(4), AF)];
        let d = classify(Variant::Afc, &b, false);
        assert!(d.committed.is_empty() && d.in_s_plus.iter().all(|x| !*x));
    }

    #[test]
    fn fig8_fig9_block_based_clusters() {
        // Fig. 8b: Block A (0..8) holds P2,P3,P5,P7 chained inside the block; Block B (8..16)
        // holds P1,P4,P6; the clusters are linked via P2.Link. Order of writes: P1 P2 P3 P4 P5
        // P6 P7 (ord 0..6).
        let pages = [
            pg(8, 1, 0, None, F),     // P1 in B
            pg(0, 1, 1, Some(8), F),  // P2 in A → cluster B
            pg(1, 1, 2, Some(0), F),  // P3 → P2
            pg(9, 1, 3, Some(8), F),  // P4 → P1 (cluster B)
            pg(2, 1, 4, Some(1), F),  // P5 → P3
            pg(10, 1, 5, Some(9), F), // P6 → P4
            pg(3, 1, 6, Some(2), T),  // P7 → P5, commit flag
        ];
        let g = Graph::build(&pages, &|p| p.0 / 8, true);
        assert_eq!(g.sources.len(), 1, "one head cluster (A)");
        let d = classify(Variant::Cfc, &pages, true);
        assert!(d.committed.contains(&1) && d.in_s_plus.iter().all(|x| *x));
        // Page-granular recovery of the same pages sees two heads (P7 and P6): inconsistent.
        let d = classify(Variant::Cfc, &pages, false);
        assert!(d.inconsistent.contains(&1));
        // Fig. 9b: Block A reclaimed, the valid P5 moved with TRUE and its Link set to the
        // cluster in B; P1, P4, P6 need no reprogramming.
        let after = [
            pg(8, 1, 0, None, F),
            pg(9, 1, 3, Some(8), F),
            pg(10, 1, 5, Some(9), F),
            pg(16, 1, 4, Some(8), T), // P5' in a new block, linked to cluster B
        ];
        let d = classify(Variant::Cfc, &after, true);
        assert!(d.committed.contains(&1) && d.in_s_plus.iter().all(|x| *x));
        // Fig. 9a (no block technique): P1 and P6 must both be flagged.
        let after_a = [
            pg(8, 1, 0, None, T),
            pg(9, 1, 3, Some(8), F),
            pg(10, 1, 5, Some(9), T),
            pg(16, 1, 4, Some(2), T),
        ];
        assert!(classify(Variant::Cfc, &after_a, false)
            .committed
            .contains(&1));
    }

    #[test]
    fn clusters_in_one_block_are_separate_unless_linked() {
        // Two relocations left two copies of one transaction in the same GC block 2 (16..24),
        // each linking out to a page in block 0: two clusters, two heads, each needs a TRUE.
        let pages = [
            pg(0, 1, 0, None, F),
            pg(1, 1, 1, Some(0), F),
            pg(16, 1, 2, Some(1), T),
            pg(17, 1, 3, Some(0), F),
        ];
        let g = Graph::build(&pages, &|p| p.0 / 8, true);
        assert_eq!(g.sources.len(), 2);
        assert!(classify(Variant::Cfc, &pages, true)
            .inconsistent
            .contains(&1));
        let mut ok = pages;
        ok[3].flag = T;
        assert!(classify(Variant::Cfc, &ok, true).committed.contains(&1));
        // A later copy linking to the earlier one inside the block joins its cluster.
        let joined = [
            pg(0, 1, 0, None, F),
            pg(16, 1, 2, Some(0), F),
            pg(17, 1, 3, Some(16), T),
        ];
        let g = Graph::build(&joined, &|p| p.0 / 8, true);
        assert_eq!(g.sources.len(), 1);
        assert_eq!(g.cluster[1], g.cluster[2]);
    }

    #[test]
    fn stale_summary_flags_are_read_from_the_page_when_they_can_still_change() {
        // The scan says FALSE (a summary written before the commit); the page says TRUE.
        let pages = [pg(1, 2, 0, None, F), pg(2, 2, 1, Some(1), F)];
        let g = Graph::build(&pages, &|p| p.0 / 8, false);
        let mut reads = Vec::new();
        let stale = vec![false; pages.len()];
        let d = decide(Variant::Cfc, &pages, &g, &stale, &mut |i| {
            reads.push(i);
            Ok(if i == 1 { T } else { F })
        })
        .unwrap();
        assert!(d.committed.contains(&2));
        assert_eq!(reads, vec![1], "only the head is read");
        // AFC must look at every page whose flag can still change.
        let pages = [
            pg(1, 2, 0, None, AI),
            pg(2, 2, 1, Some(1), AT),
            pg(3, 2, 2, Some(2), AT),
        ];
        let g = Graph::build(&pages, &|p| p.0 / 8, false);
        let mut n = 0;
        let stale = vec![false; pages.len()];
        let d = decide(Variant::Afc, &pages, &g, &stale, &mut |i| {
            n += 1;
            let _ = i;
            Ok(AT)
        })
        .unwrap();
        assert!(d.committed.contains(&2));
        assert_eq!(n, 3);
    }
}
