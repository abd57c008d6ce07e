//! Property tests of the drivers' input handling: the FASTA reader and the
//! UTS parameter checks, on inputs generated (and shrunk) by proptest.

use apps::sw::alphabet::Alphabet;
use apps::sw::fasta::{parse_first, FastaError};
use apps::uts::{GeoShape, TreeParams, TreeType};
use proptest::prelude::*;

/// A FASTA text for `header` and `seq` (codes), written the ways files
/// differ: blank lines first, any line width, CRLF or LF, mixed case,
/// blanks inside lines, and more records after the first.
fn fasta_text(
    header: &str,
    seq: &[u8],
    width: usize,
    crlf: bool,
    leading_blank: usize,
    lowercase: &[bool],
) -> Vec<u8> {
    let newline: &[u8] = if crlf { b"\r\n" } else { b"\n" };
    let mut text = Vec::new();
    for _ in 0..leading_blank {
        text.extend_from_slice(b"  ");
        text.extend_from_slice(newline);
    }
    text.push(b'>');
    text.extend_from_slice(header.as_bytes());
    text.extend_from_slice(newline);
    let letters = Alphabet::Dna.decode(seq);
    for (row, chunk) in letters.chunks(width).enumerate() {
        for (i, &letter) in chunk.iter().enumerate() {
            let lower = lowercase[(row * width + i) % lowercase.len()];
            text.push(if lower {
                letter.to_ascii_lowercase()
            } else {
                letter
            });
        }
        if row % 3 == 1 {
            text.extend_from_slice(b" \t");
        }
        text.extend_from_slice(newline);
    }
    text.extend_from_slice(b">second record\nGGGG\n");
    text
}

proptest! {
    #[test]
    fn fasta_first_record_round_trips(
        header in "[ -~]{0,40}",
        seq in proptest::collection::vec(0u8..4, 1..300),
        width in 1usize..90,
        crlf in any::<bool>(),
        leading_blank in 0usize..3,
        lowercase in proptest::collection::vec(any::<bool>(), 1..8),
    ) {
        let text = fasta_text(&header, &seq, width, crlf, leading_blank, &lowercase);
        let record = parse_first(&text, Alphabet::Dna).expect("a well-formed record");
        prop_assert_eq!(record.header, header.trim());
        prop_assert_eq!(record.seq, seq);
    }

    #[test]
    fn a_bad_letter_is_reported_where_it_is(
        seq in proptest::collection::vec(0u8..4, 1..200),
        width in 1usize..60,
        at in any::<prop::sample::Index>(),
        bad in prop::sample::select(b"0123456789!#$%&*+-./:;=?@_".to_vec()),
    ) {
        let position = at.index(seq.len());
        let mut letters = Alphabet::Dna.decode(&seq);
        letters[position] = bad;
        let mut text = b">h\n".to_vec();
        for chunk in letters.chunks(width) {
            text.extend_from_slice(chunk);
            text.push(b'\n');
        }
        match parse_first(&text, Alphabet::Dna) {
            Err(FastaError::InvalidCharacter { byte, line, column, position: found, .. }) => {
                prop_assert_eq!(byte, bad);
                prop_assert_eq!(found, position);
                prop_assert_eq!(line, 2 + position / width);
                prop_assert_eq!(column, 1 + position % width);
            }
            other => prop_assert!(false, "expected an invalid character, got {:?}", other),
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        // Any outcome but a panic; an accepted record has letters only.
        if let Ok(record) = parse_first(&bytes, Alphabet::Protein) {
            prop_assert!(!record.seq.is_empty());
        }
    }

    #[test]
    fn tree_codes_round_trip_and_others_are_rejected(code in -10i64..10) {
        match TreeType::from_code(code) {
            Ok(tree) => prop_assert_eq!(i64::from(tree.code()), code),
            Err(_) => prop_assert!(!(0..=3).contains(&code)),
        }
        match GeoShape::from_code(code) {
            Ok(shape) => prop_assert_eq!(i64::from(shape.code()), code),
            Err(_) => prop_assert!(!(0..=3).contains(&code)),
        }
    }

    #[test]
    fn validate_accepts_exactly_the_documented_ranges(
        tree in 0i64..4,
        shape in 0i64..4,
        gen_mx in -3i32..20,
        b0 in prop_oneof![Just(f64::NAN), Just(f64::INFINITY), -5.0f64..50.0],
        q in -0.5f64..1.5,
        m in -3i32..10,
        shift in prop_oneof![Just(f64::NAN), -1.0f64..2.0],
        granularity in 0u32..4,
    ) {
        let params = TreeParams {
            tree_type: TreeType::from_code(tree).unwrap(),
            shape: GeoShape::from_code(shape).unwrap(),
            gen_mx,
            b0,
            m,
            q,
            shift_depth: shift,
            granularity,
            ..TreeParams::DEFAULT
        };
        let geometric = matches!(params.tree_type, TreeType::Geometric | TreeType::Hybrid);
        let expected = b0.is_finite() && b0 >= 0.0
            && (0.0..=1.0).contains(&q)
            && m >= 0
            && shift.is_finite() && shift >= 0.0
            && granularity >= 1
            && gen_mx >= 0
            && !(geometric && params.shape != GeoShape::Fixed && gen_mx == 0);
        prop_assert_eq!(params.validate().is_ok(), expected, "{:?}", params);
    }
}
