//! ABORT is acked only once the device has finished what the transaction set going.
//! Found by review: ABORT acked at once while the aborted transaction's
//! programs were still running, so under strict isolation the next transaction overlapped
//! them and completed transactions per second rose with the abort ratio (LightTx +40 %, AW
//! +51 % from 0 to 50 % aborts).

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
    n.blocks_per_plane = 32;
    n.pages_per_block = 16;
    let mut c = DeviceConfig {
        nand: n,
        ..Default::default()
    };
    c.protocol.name = protocol.into();
    let nand = media::Nand::new(c.image_params().unwrap(), c.nand.timing.clone()).unwrap();
    Device::create(&c, nand).unwrap()
}

#[test]
fn abort_acks_after_the_transactions_programs_complete() {
    for info in protocol::REGISTRY {
        let mut d = device(info.name);
        let tx = TxId(7);
        let mut now = d.begin(tx, SimTime::ZERO).unwrap();
        // Ten pages over four planes: at least two rounds of programs, so some are still
        // running when the last write is acked.
        for l in 0..10 {
            now = now.max(d.write(tx, Lpn(l), 100 + u64::from(l), now).unwrap());
        }
        let programs_end = d.core.program_end_max;
        let ack = match d.abort(tx, now) {
            Ok(a) => a,
            // `none` has no atomicity and refuses ABORT.
            Err(SsdError::Unsupported { .. }) => continue,
            Err(e) => panic!("{}: {e}", info.name),
        };
        assert!(
            ack >= programs_end,
            "{}: ABORT issued at {now} acked at {ack}, before the transaction's programs end at {programs_end}",
            info.name
        );
    }
}
