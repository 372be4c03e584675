//! Large arrays backed by transparent huge pages where the OS allows it.
//!
//! The simulator's per-page tables (mapping table, reverse map, NAND page records) are
//! hundreds of MiB for a 32 GiB device and are accessed at random. With 4 KiB pages nearly
//! every access also misses the TLB; asking Linux for 2 MiB pages (`madvise(MADV_HUGEPAGE)`,
//! honoured when `/sys/kernel/mm/transparent_hugepage/enabled` is `always` or `madvise`)
//! removes most of those misses. Elsewhere, or if the call fails, this is a plain `vec!`:
//! the advice changes speed, never contents.

/// A vector of `n` copies of `value`, advised to use huge pages before it is first touched.
pub fn huge_vec<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    advise_huge(v.as_mut_ptr() as *mut u8, n * std::mem::size_of::<T>());
    v.resize(n, value);
    v
}

/// `n` zeros of an integer type, advised to use huge pages, and never touched here: `vec![0; n]`
/// of an integer is a zeroed allocation, which for a large one comes straight from `mmap`
/// (the allocator's `calloc` path), whose pages the kernel zeroes on first touch. Building a
/// 32 GiB device's page records this way costs nothing up front (a memset of them was most of
/// the ~10 % of a host benchmark process spent in the kernel zeroing pages), and a run only
/// ever touches the records of pages it programs. (For a type whose zero is not all-zero
/// bytes, `vec!` would write every element: use `huge_vec`.)
pub fn huge_zeroed<T: Copy + Default>(n: usize) -> Vec<T> {
    let mut v = vec![T::default(); n];
    advise_huge(v.as_mut_ptr() as *mut u8, n * std::mem::size_of::<T>());
    v
}

#[cfg(target_os = "linux")]
fn advise_huge(ptr: *mut u8, len: usize) {
    const MADV_HUGEPAGE: i32 = 14;
    const HUGE: usize = 2 << 20;
    extern "C" {
        fn madvise(addr: *mut u8, len: usize, advice: i32) -> i32;
    }
    if len < HUGE {
        return;
    }
    // madvise needs a page-aligned start; the allocator's pointer may be offset a little.
    let start = (ptr as usize).next_multiple_of(4096);
    let end = ptr as usize + len;
    if end <= start {
        return;
    }
    // SAFETY: the range lies inside an allocation this function's caller owns and has not
    // yet initialised; MADV_HUGEPAGE only changes how the kernel backs the pages, never
    // their contents, and a failure (EINVAL on kernels without THP) is ignored.
    unsafe {
        madvise(start as *mut u8, end - start, MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_ptr: *mut u8, _len: usize) {}

/// Asks the CPU to start fetching the cache line holding `r` without waiting for it.
#[inline]
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint with no architectural effect; it cannot fault, and the
    // pointer comes from a live reference anyway.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
            r as *const T as *const i8,
        );
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

#[cfg(test)]
mod tests {
    #[test]
    fn contents_are_those_of_vec() {
        let v = super::huge_vec(5 << 20, 7u8);
        assert_eq!(v.len(), 5 << 20);
        assert!(v.iter().all(|x| *x == 7));
        assert_eq!(super::huge_vec(3, 1u32), vec![1, 1, 1]);
        let z = super::huge_zeroed::<u8>(5 << 20);
        assert_eq!(z.len(), 5 << 20);
        assert!(z.iter().all(|x| *x == 0));
        let z = super::huge_zeroed::<u32>(3 << 20);
        assert_eq!(z.len(), 3 << 20);
        assert!(z.iter().all(|x| *x == 0));
    }
}
