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

/// Plain data: no padding bytes, and every bit pattern, all zero bytes included, is a value,
/// so a table of it may be compared and copied as bytes and allocated zeroed.
///
/// # Safety
/// Implement only for types with exactly these properties (integers, and `#[repr(transparent)]`
/// newtypes of them).
pub unsafe trait Plain: Copy {}
// SAFETY: primitive integers have no padding and every bit pattern is a value.
unsafe impl Plain for u8 {}
// SAFETY: as above.
unsafe impl Plain for u16 {}
// SAFETY: as above.
unsafe impl Plain for u32 {}
// SAFETY: as above.
unsafe impl Plain for u64 {}

/// `n` elements of all-zero bytes from the allocator's zeroed path (what `vec![0; n]` does
/// for an integer), advised to use huge pages, untouched.
fn plain_zeroed<T: Plain>(n: usize) -> Vec<T> {
    if n == 0 || std::mem::size_of::<T>() == 0 {
        return Vec::new();
    }
    let layout = match std::alloc::Layout::array::<T>(n) {
        Ok(l) => l,
        Err(_) => panic!("a table of {n} elements does not fit the address space"),
    };
    // SAFETY: `layout` has a non-zero size; a null result is handled below.
    let p = unsafe { std::alloc::alloc_zeroed(layout) } as *mut T;
    if p.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    advise_huge(p as *mut u8, layout.size());
    // SAFETY: `p` comes from the global allocator with the layout of `n` elements of `T`,
    // all of them initialised (zero bytes are a `T`: `Plain`).
    unsafe { Vec::from_raw_parts(p, n, n) }
}

/// Bytes compared and copied at a time by `huge_clone`: one 4 KiB memory page.
const CLONE_CHUNK_BYTES: usize = 4096;

/// A copy of `src` in a new allocation advised to use huge pages, which writes only the
/// parts of `src` that are not all zero bytes: the rest stays untouched zeroed memory
/// (as in `huge_zeroed`), which the kernel neither zeroes nor counts as resident until it is
/// written; `Vec::clone` faults in (the kernel zeroing each page) and writes every page of
/// the copy. For a device's per-page tables this copies what its programmed pages occupy
/// and leaves the erased remainder costing nothing, as it costs nothing in a new device.
/// Same contents as `src.to_vec()`.
pub fn huge_clone<T: Plain>(src: &[T]) -> Vec<T> {
    let mut dst = plain_zeroed::<T>(src.len());
    let bytes = std::mem::size_of_val(src);
    // SAFETY: `T: Plain` has no padding, so both slices are `bytes` initialised bytes; `dst`
    // has `src.len()` elements of `T`; the two allocations are distinct; any bytes written
    // into `dst` are a valid `T` (every bit pattern is one).
    let (from, to) = unsafe {
        (
            std::slice::from_raw_parts(src.as_ptr() as *const u8, bytes),
            std::slice::from_raw_parts_mut(dst.as_mut_ptr() as *mut u8, bytes),
        )
    };
    for (a, b) in from
        .chunks(CLONE_CHUNK_BYTES)
        .zip(to.chunks_mut(CLONE_CHUNK_BYTES))
    {
        if !all_zero(a) {
            b.copy_from_slice(a);
        }
    }
    dst
}

/// Whether every byte of `b` is zero; the OR of eight-byte words, so the loop vectorises.
fn all_zero(b: &[u8]) -> bool {
    let mut words = b.chunks_exact(8);
    let acc = words.by_ref().fold(0u64, |acc, w| {
        let mut x = [0u8; 8];
        x.copy_from_slice(w);
        acc | u64::from_ne_bytes(x)
    });
    acc == 0 && words.remainder().iter().all(|x| *x == 0)
}

/// A large table that keeps its huge-page advice and its untouched zero pages when copied:
/// a `Vec` whose `clone` is `huge_clone`. The device's per-page tables (NAND page records,
/// mapping table, reverse map, page flags) are held in it, so a copy of a prefilled or aged
/// device (`ssd::Device::try_clone`) costs what its written pages occupy. Everything else
/// is the `Vec`'s.
#[derive(Debug, PartialEq, Eq)]
pub struct HugeTable<T: Plain>(pub Vec<T>);

impl<T: Plain> Default for HugeTable<T> {
    fn default() -> HugeTable<T> {
        HugeTable(Vec::new())
    }
}

impl<T: Plain> HugeTable<T> {
    /// `n` elements of zero bytes, untouched (`huge_zeroed`).
    pub fn zeroed(n: usize) -> HugeTable<T> {
        HugeTable(plain_zeroed(n))
    }
}

impl<T: Plain> Clone for HugeTable<T> {
    fn clone(&self) -> HugeTable<T> {
        HugeTable(huge_clone(&self.0))
    }
}

impl<T: Plain> std::ops::Deref for HugeTable<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T: Plain> std::ops::DerefMut for HugeTable<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
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
