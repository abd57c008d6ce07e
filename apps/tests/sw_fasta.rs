//! FASTA parsing: first record, typed errors.

use apps::sw::alphabet::Alphabet;
use apps::sw::fasta::{parse_first, FastaError};

#[test]
fn parses_first_record_only() {
    let input = b"\n\n>seq1 some description\nACGT\nacgt\r\n  AC GT \n>seq2\nTTTT\n";
    let rec = parse_first(input, Alphabet::Dna).unwrap();
    assert_eq!(rec.header, "seq1 some description");
    assert_eq!(rec.seq, [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
}

#[test]
fn protein_record() {
    let rec = parse_first(b">p\nARND*\nbzx\n", Alphabet::Protein).unwrap();
    assert_eq!(rec.seq, [0, 1, 2, 3, 23, 20, 21, 22]);
    assert_eq!(Alphabet::Protein.decode(&rec.seq), b"ARND*BZX");
}

#[test]
fn empty_input() {
    for input in [&b""[..], b"\n", b"  \r\n\t\n"] {
        assert!(matches!(
            parse_first(input, Alphabet::Dna),
            Err(FastaError::EmptyInput)
        ));
    }
}

#[test]
fn missing_header() {
    let err = parse_first(b"\nACGT\n", Alphabet::Dna).unwrap_err();
    assert!(
        matches!(err, FastaError::MissingHeader { line: 2 }),
        "{err:?}"
    );
    assert!(err.to_string().contains("line 2"));
}

#[test]
fn empty_sequence() {
    for input in [&b">only header\n"[..], b">h\n\n>next\nACGT\n", b">h"] {
        let err = parse_first(input, Alphabet::Dna).unwrap_err();
        assert!(matches!(err, FastaError::EmptySequence { .. }), "{err:?}");
    }
}

#[test]
fn invalid_character_names_char_and_position() {
    let err = parse_first(b">x\nACGT\nAC-T\n", Alphabet::Dna).unwrap_err();
    match &err {
        FastaError::InvalidCharacter {
            byte,
            line,
            column,
            position,
            alphabet,
        } => {
            assert_eq!((*byte, *line, *column, *position), (b'-', 3, 3, 6));
            assert_eq!(*alphabet, Alphabet::Dna);
        }
        e => panic!("wrong error {e:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("'-'") && msg.contains("line 3") && msg.contains("column 3"),
        "{msg}"
    );
    assert!(msg.contains("position 6"), "{msg}");

    // 'N' is not DNA here; '*' is protein-only; a non-ASCII byte is shown in hex.
    assert!(matches!(
        parse_first(b">x\nN", Alphabet::Dna),
        Err(FastaError::InvalidCharacter {
            byte: b'N',
            position: 0,
            ..
        })
    ));
    assert!(matches!(
        parse_first(b">x\nAC*", Alphabet::Dna),
        Err(FastaError::InvalidCharacter {
            byte: b'*',
            position: 2,
            ..
        })
    ));
    let err = parse_first(b">x\nA\xC3\xA9", Alphabet::Protein).unwrap_err();
    assert!(err.to_string().contains("0xC3"), "{err}");
}

#[test]
fn read_missing_file_is_io_error() {
    let err = apps::sw::fasta::read_first("/nonexistent/definitely/not/here.fa", Alphabet::Dna)
        .unwrap_err();
    assert!(matches!(err, FastaError::Io(_)));
}
