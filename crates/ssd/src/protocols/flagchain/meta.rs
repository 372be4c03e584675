//! The on-flash page format of CFC and AFC (Flag Commit §3.1, §3.2): the OOB fields of a data
//! page (byte by byte in `cfc.rs`), the commit-flag byte values and which bits each protocol
//! clears, and [`Variant`], the one place where the two protocols' flag semantics differ
//! (Definitions 3.1 and 3.3). Pure data: no device access.

use crate::oob::{get_u32, get_u64, kind, put_u32, put_u64};
use media::Ppa;

/// Width of the OOB layout (see `cfc.rs` for the byte map).
pub const OOB_BYTES: u32 = 26;
pub(super) const OFF_LBA: usize = 1;
pub(super) const OFF_VER: usize = 5;
pub(super) const OFF_XID: usize = 13;
pub(super) const OFF_LINK: usize = 17;
pub(super) const OFF_ORD: usize = 21;
pub(super) const OFF_FLAG: usize = 25;
/// The NULL link (first page of a transaction).
pub(super) const NULL_LINK: u32 = u32::MAX;

/// Flag byte values. Bits other than the protocol's stay 1 (erased).
/// CFC uses bit 0: 1 = FALSE, 0 = TRUE (§3.1 "we use bit 0 to represent TRUE").
/// AFC uses bits 1..0 (§3.2): "11" initial FALSE, "10" TRUE (initial or set), "00" FALSE.
pub const FLAG_CFC_FALSE: u8 = 0xFF;
pub const FLAG_TRUE: u8 = 0xFE;
pub const FLAG_AFC_INITIAL_FALSE: u8 = 0xFF;
pub const FLAG_AFC_FALSE: u8 = 0xFC;
/// Clearing this bit commits: CFC FALSE→TRUE, AFC "11"→"10".
pub(super) const BIT_COMMIT: u8 = 0x01;
/// Clearing this bit marks an AFC page FALSE: "10"→"00".
pub(super) const BIT_AFC_ABORT: u8 = 0x02;

/// Which of the two protocols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Commit-based flag commit (§3.1): a transaction is committed iff it holds a TRUE flag
    /// (here: every source group of its chains holds one).
    Cfc,
    /// Abort-based flag commit (§3.2): a transaction is committed iff none of its pages holds
    /// a FALSE flag (Definition 3.3).
    Afc,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::Cfc => "cfc",
            Variant::Afc => "afc",
        }
    }

    /// The flag a shadow page of a multi-page transaction is programmed with. AFC's first page
    /// starts FALSE so that a crash right after it cannot look committed (§3.2).
    pub fn initial_flag(self, ord: u32) -> u8 {
        match self {
            Variant::Cfc => FLAG_CFC_FALSE,
            Variant::Afc if ord == 0 => FLAG_AFC_INITIAL_FALSE,
            Variant::Afc => FLAG_TRUE,
        }
    }

    pub fn is_true(self, flag: u8) -> bool {
        match self {
            Variant::Cfc => flag & 1 == 0,
            Variant::Afc => flag & 3 == 2,
        }
    }

    /// Whether a flag read from a (possibly stale) summary can no longer change: recovery
    /// must read the page itself otherwise (footnote 7: flags change after the summary).
    /// CFC: TRUE is final. AFC: "00" is final; "10" on a first page is final (it is a
    /// committed first page or a plain write, neither of which is ever marked FALSE).
    pub fn is_final(self, flag: u8, ord: u32) -> bool {
        match self {
            Variant::Cfc => self.is_true(flag),
            Variant::Afc => flag & 2 == 0 || (ord == 0 && self.is_true(flag)),
        }
    }
}

/// The metadata of one data page (its OOB area).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageMeta {
    pub ppa: Ppa,
    /// Logical page (the paper's LBA).
    pub lba: u32,
    /// Version: a device-wide write sequence (see `cfc.rs`, "Version #").
    pub ver: u64,
    pub xid: u32,
    /// Position of the page among its transaction's writes (0 for the first).
    pub ord: u32,
    /// Physical address of the preceding page in the chain, `Ppa::NONE` for NULL.
    pub link: Ppa,
    pub flag: u8,
}

impl PageMeta {
    /// Parses a data page's OOB; `None` for other kinds.
    pub fn parse(ppa: Ppa, oob: &[u8]) -> Option<PageMeta> {
        if oob.len() < OOB_BYTES as usize || oob[0] != kind::DATA {
            return None;
        }
        let link = get_u32(oob, OFF_LINK);
        Some(PageMeta {
            ppa,
            lba: get_u32(oob, OFF_LBA),
            ver: get_u64(oob, OFF_VER),
            xid: get_u32(oob, OFF_XID),
            ord: get_u32(oob, OFF_ORD),
            link: if link == NULL_LINK {
                Ppa::NONE
            } else {
                Ppa(link)
            },
            flag: oob[OFF_FLAG],
        })
    }

    /// Writes the fields into an OOB buffer whose kind byte is set.
    pub fn write(&self, oob: &mut [u8]) {
        oob[0] = kind::DATA;
        put_u32(oob, OFF_LBA, self.lba);
        put_u64(oob, OFF_VER, self.ver);
        put_u32(oob, OFF_XID, self.xid);
        put_u32(
            oob,
            OFF_LINK,
            if self.link == Ppa::NONE {
                NULL_LINK
            } else {
                self.link.0
            },
        );
        put_u32(oob, OFF_ORD, self.ord);
        oob[OFF_FLAG] = self.flag;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_encodings() {
        assert!(!Variant::Cfc.is_true(FLAG_CFC_FALSE) && Variant::Cfc.is_true(FLAG_TRUE));
        assert!(!Variant::Afc.is_true(FLAG_AFC_INITIAL_FALSE));
        assert!(Variant::Afc.is_true(FLAG_TRUE) && !Variant::Afc.is_true(FLAG_AFC_FALSE));
        // Every transition only clears bits.
        assert_eq!(FLAG_CFC_FALSE & !BIT_COMMIT, FLAG_TRUE);
        assert_eq!(FLAG_AFC_INITIAL_FALSE & !BIT_COMMIT, FLAG_TRUE);
        assert_eq!(FLAG_TRUE & !BIT_AFC_ABORT, FLAG_AFC_FALSE);
        let m = PageMeta {
            ppa: Ppa(77),
            lba: 77,
            ver: 3,
            xid: 3,
            ord: 2,
            link: Ppa(5),
            flag: FLAG_TRUE,
        };
        let mut oob = [0xFFu8; 32];
        m.write(&mut oob);
        assert_eq!(PageMeta::parse(Ppa(77), &oob), Some(m));
    }
}
