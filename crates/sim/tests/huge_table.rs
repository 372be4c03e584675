//! A copy of a large, mostly unwritten table (`sim::mem::HugeTable`) costs memory only for
//! its written parts, as the original does. Alone in its own test binary: the check reads the
//! process's resident set, which other tests running beside it would move.

use commitlab_sim::mem::HugeTable;

/// The process's resident set in bytes (`/proc/self/statm`, second field, in pages).
#[cfg(target_os = "linux")]
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

#[cfg(target_os = "linux")]
#[test]
fn copy_of_a_sparse_table_leaves_its_unwritten_pages_untouched() {
    const MIB: usize = 1 << 20;
    let mut t: HugeTable<u32> = HugeTable::zeroed(64 * MIB); // 256 MiB
                                                             // Four written places, one of them a run spanning two memory pages.
    for i in [0, 5 * MIB, 33 * MIB + 1023, 64 * MIB - 1] {
        t[i] = i as u32 | 1;
    }
    t[20 * MIB..20 * MIB + 2000].fill(7);
    let before = resident_bytes();
    let c = t.clone();
    let grown = resident_bytes().saturating_sub(before);
    assert_eq!(c.len(), t.len());
    assert!(c == t, "the copy differs from the original");
    // `Vec::clone` writes every page of the copy: 256 MiB. Written places cost at most one
    // 2 MiB huge page each.
    assert!(
        grown < (32 * MIB) as u64,
        "the copy made {} MiB resident",
        grown / MIB as u64
    );
}

#[test]
fn copy_is_element_for_element_the_original() {
    let mut t: HugeTable<u8> = HugeTable::zeroed(3 * 4096 + 17);
    t[4096] = 1;
    let n = t.len();
    t[n - 1] = 0xFF;
    let c = t.clone();
    assert_eq!(c.0, t.0);
    let e: HugeTable<u64> = HugeTable::default();
    assert!(e.clone().is_empty());
    let full = HugeTable(vec![u16::MAX; 10_000]);
    assert_eq!(full.clone().0, full.0);
}
