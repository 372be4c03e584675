use super::*;
use media::BlockId;

fn erase(start: u64, end: u64) -> LoggedOp {
    LoggedOp {
        kind: OpKind::Erase { block: BlockId(0) },
        start: SimTime::from_ns(start),
        end: SimTime::from_ns(end),
    }
}

#[test]
fn fates_are_numbered_mask_first_then_tears_in_index_order() {
    let ops = vec![erase(0, 10), erase(0, 10)];
    let f = fates_at(&ops, &[0, 1]);
    // Mask 0: intact, then op 0's two tears, then op 1's two; mask 1 (op 0 persisted):
    // intact, op 1's two tears; mask 2: intact, op 0's two; mask 3: intact.
    assert_eq!(f.len(), 5 + 3 + 3 + 1);
    assert_eq!(f[0], (vec![], None));
    assert_eq!(f[1], (vec![], Some((0, TornKind::EraseUnstable))));
    assert_eq!(f[3], (vec![], Some((1, TornKind::EraseUnstable))));
    assert_eq!(f[5], (vec![0], None));
    assert_eq!(f[6], (vec![0], Some((1, TornKind::EraseUnstable))));
    assert_eq!(f[8], (vec![1], None));
    assert_eq!(f[11], (vec![0, 1], None));
}

#[test]
fn one_device_fates_are_fates_at_and_two_devices_multiply_data_outer() {
    let ops = vec![erase(0, 10), erase(0, 10), erase(0, 10)];
    let one: Vec<Fate> = fates_of(&ops, &[0, 1, 2], 3)
        .into_iter()
        .map(|(p, t, l)| {
            assert!(l.is_none());
            (p, t)
        })
        .collect();
    assert_eq!(one, fates_at(&ops, &[0, 1, 2]));
    let two = fates_of(&ops, &[0, 1, 2], 2);
    assert_eq!(
        two.len(),
        fates_at(&ops, &[0, 1]).len() * fates_at(&ops, &[2]).len()
    );
    assert_eq!(two[1], (vec![], None, Some((2, TornKind::EraseUnstable))));
}

#[test]
fn a_device_without_operations_in_flight_draws_nothing() {
    let ops = vec![erase(0, 10), erase(0, 10)];
    let mut a = Rng::new(5);
    let mut b = Rng::new(5);
    let (p, t, l) = draw_fates_of(&ops, &[0, 1], 2, &mut a);
    assert_eq!((p, t), draw_fates(&ops, &[0, 1], &mut b));
    assert!(l.is_none());
    assert_eq!(a.next_u64(), b.next_u64());
}

#[test]
fn instants_start_at_zero_and_recovery_instants_do_not() {
    let ops = vec![erase(5, 9), erase(5, 7)];
    let ns = |v: Vec<SimTime>| v.into_iter().map(|t| t.as_ns()).collect::<Vec<_>>();
    assert_eq!(ns(instants(op_times(&ops))), vec![0, 5, 7, 9]);
    assert_eq!(ns(recovery_instants(&ops)), vec![5, 7, 9]);
}

#[test]
fn word_fates_tear_halves_and_alternate_words_and_the_product_is_bounded() {
    assert_eq!(word_fates(1), vec![WordFate::Lost, WordFate::Done]);
    assert_eq!(
        word_fates(8),
        vec![
            WordFate::Lost,
            WordFate::Done,
            WordFate::Torn(0xff >> 4),
            WordFate::Torn(0x55)
        ]
    );
    assert_eq!(word_fates(200)[2], WordFate::Torn(u64::MAX >> 32));
    assert_eq!(word_fate_product(&[8, 1], 100).unwrap().len(), 8);
    assert_eq!(word_fate_product(&[8, 8, 8], 20), Err(64));
    let mut r = Rng::new(1);
    for _ in 0..100 {
        if let WordFate::Torn(m) = draw_word_fate(&mut r, 4) {
            assert_eq!(m & !0xf, 0);
        }
    }
}

#[test]
fn product_of_is_word_fate_product_over_given_lists() {
    let lists: Vec<Vec<WordFate>> = [8, 1, 4].iter().map(|&w| word_fates(w)).collect();
    assert_eq!(
        product_of(&lists, 1000),
        word_fate_product(&[8, 1, 4], 1000)
    );
    assert_eq!(product_of(&lists, 20), word_fate_product(&[8, 1, 4], 20));
    // Reduced lists: the first list's fate outermost, each list in its order.
    let reduced = vec![
        vec![WordFate::Lost, WordFate::Done],
        vec![WordFate::Lost],
        vec![WordFate::Done, WordFate::Torn(1)],
    ];
    assert_eq!(
        product_of(&reduced, 100).unwrap(),
        vec![
            vec![WordFate::Lost, WordFate::Lost, WordFate::Done],
            vec![WordFate::Lost, WordFate::Lost, WordFate::Torn(1)],
            vec![WordFate::Done, WordFate::Lost, WordFate::Done],
            vec![WordFate::Done, WordFate::Lost, WordFate::Torn(1)],
        ]
    );
    assert_eq!(product_of(&reduced, 3), Err(4));
    assert_eq!(product_of(&[], 0).unwrap(), vec![Vec::<WordFate>::new()]);
}
