//! CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), used for on-medium record checks
//! and image headers, computed by `crc32fast` (a well-kept crate instead
//! of a hand-written table; it uses SIMD where the CPU has it).
//!
//! Invariant: the value is the standard CRC-32 of the bytes, the same the hand-written table
//! implementation computed before, so images written by earlier builds still verify. The
//! tests keep that table implementation as the reference and compare both on random inputs
//! and on chained updates; a crate upgrade that changed a value would fail them.

/// Continue a CRC over more bytes; start with `crc = 0`.
pub fn crc32_update(crc: u32, bytes: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new_with_initial(crc);
    h.update(bytes);
    h.finalize()
}

pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-written implementation this module used before crc32fast (kept as the
    /// reference: on-medium formats must not change).
    fn reference_update(crc: u32, bytes: &[u8]) -> u32 {
        let mut table = [0u32; 256];
        for (i, t) in table.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *t = c;
        }
        let mut c = !crc;
        for b in bytes {
            c = table[((c ^ u32::from(*b)) & 0xFF) as usize] ^ (c >> 8);
        }
        !c
    }

    #[test]
    fn matches_the_standard_check_value() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32_update(crc32(b"1234"), b"56789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
    }

    proptest::proptest! {
        /// Any bytes, any split into two updates, any starting value: crc32fast gives what
        /// the hand-written table gave (a property test, not a seed loop).
        #[test]
        fn identical_to_the_hand_written_table_implementation(
            bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..5000),
            cut in 0usize..5000,
            seed in proptest::num::u32::ANY,
        ) {
            let cut = cut.min(bytes.len());
            proptest::prop_assert_eq!(crc32(&bytes), reference_update(0, &bytes));
            let chained = crc32_update(crc32(&bytes[..cut]), &bytes[cut..]);
            proptest::prop_assert_eq!(chained, reference_update(0, &bytes));
            proptest::prop_assert_eq!(crc32_update(seed, &bytes), reference_update(seed, &bytes));
        }
    }
}
