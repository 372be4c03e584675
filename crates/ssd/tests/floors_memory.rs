//! SCC's and BPCC's "pending commit acks" (`Floors`) hold only pages whose previous
//! commit's ack (or an erase) is still in the future. Found by
//! review: the table kept an entry for every page ever written until it reached 16,384
//! entries, 1.26 MB of the 1.67 MB of DRAM SCC reported in LightTx Fig. 17.

#![allow(clippy::field_reassign_with_default)]

use commitlab_ssd::*;
use media::NandConfig;
use sim::{Lpn, SimTime, TxId};

fn device(protocol: &str) -> Device {
    let mut n = NandConfig::default();
    n.channels = 2;
    n.chips_per_channel = 1;
    n.dies_per_chip = 1;
    n.planes_per_die = 2;
    n.blocks_per_plane = 64;
    n.pages_per_block = 64;
    let mut c = DeviceConfig {
        nand: n,
        ..Default::default()
    };
    c.protocol.name = protocol.into();
    let nand = media::Nand::new(c.image_params().unwrap(), c.nand.timing.clone()).unwrap();
    Device::create(&c, nand).unwrap()
}

fn pending_bytes(d: &Device) -> u64 {
    d.dram_bytes()
        .iter()
        .find(|(k, _)| *k == "pending commit acks")
        .map(|(_, v)| *v)
        .expect("the protocol reports its pending commit acks")
}

#[test]
fn pending_commit_acks_forget_what_has_passed() {
    for p in ["scc", "bpcc"] {
        let mut d = device(p);
        let mut now = SimTime::ZERO;
        // 3,000 distinct pages in one-page and four-page transactions, each issued after the
        // previous one's ack: at any instant at most one transaction's pages are pending.
        for i in 0..600u32 {
            now = now.max(d.write_plain(Lpn(i), u64::from(i), now).unwrap());
            let tx = TxId(u64::from(i) + 1);
            d.begin(tx, now).unwrap();
            for k in 0..4 {
                let l = 600 + 4 * i + k;
                now = now.max(d.write(tx, Lpn(l), u64::from(l), now).unwrap());
            }
            now = now.max(d.commit(tx, now).unwrap());
        }
        // One more command at `now` lets the table forget the last commit too.
        d.write_plain(Lpn(0), 1, now).unwrap();
        let b = pending_bytes(&d);
        assert!(
            b <= 4 * 24,
            "{p}: {b} bytes of pending commit acks for at most one pending page"
        );
    }
}
