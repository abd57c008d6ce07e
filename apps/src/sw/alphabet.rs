//! Mapping between sequence letters (bytes) and small integer codes.
//!
//! * DNA: `A C G T` -> `0 1 2 3` (case-insensitive).
//! * Protein: the 24 letters of the standard BLOSUM order
//!   `A R N D C Q E G H I L K M F P S T W Y V B Z X *` -> `0..24`
//!   (case-insensitive); the first 20 are the standard amino acids.

use std::fmt;

/// DNA letters in code order.
pub const DNA_LETTERS: &[u8; 4] = b"ACGT";
/// Protein letters in code order (BLOSUM62 row/column order).
pub const PROTEIN_LETTERS: &[u8; 24] = b"ARNDCQEGHILKMFPSTWYVBZX*";
/// Number of standard amino acids (codes `0..20`).
pub const STANDARD_AMINO_ACIDS: usize = 20;

const INVALID: u8 = 0xFF;

const fn build_table(letters: &[u8]) -> [u8; 256] {
    let mut t = [INVALID; 256];
    let mut i = 0;
    while i < letters.len() {
        let c = letters[i];
        t[c as usize] = i as u8;
        t[c.to_ascii_lowercase() as usize] = i as u8;
        i += 1;
    }
    t
}

static DNA_TABLE: [u8; 256] = build_table(DNA_LETTERS);
static PROTEIN_TABLE: [u8; 256] = build_table(PROTEIN_LETTERS);

/// A sequence alphabet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Alphabet {
    /// `ACGT`.
    Dna,
    /// 20 amino acids plus `B Z X *`.
    Protein,
}

impl Alphabet {
    /// Letters in code order (upper case).
    pub fn letters(self) -> &'static [u8] {
        match self {
            Alphabet::Dna => DNA_LETTERS,
            Alphabet::Protein => PROTEIN_LETTERS,
        }
    }

    /// Number of codes.
    pub fn size(self) -> usize {
        self.letters().len()
    }

    /// Human-readable name.
    pub fn name(self) -> &'static str {
        match self {
            Alphabet::Dna => "DNA",
            Alphabet::Protein => "protein",
        }
    }

    /// Code of one letter (case-insensitive), `None` if not in the alphabet.
    pub fn encode_byte(self, c: u8) -> Option<u8> {
        let t = match self {
            Alphabet::Dna => &DNA_TABLE,
            Alphabet::Protein => &PROTEIN_TABLE,
        };
        match t[c as usize] {
            INVALID => None,
            code => Some(code),
        }
    }

    /// Upper-case letter of a code, `None` if out of range.
    pub fn decode_byte(self, code: u8) -> Option<u8> {
        self.letters().get(code as usize).copied()
    }

    /// Encodes a whole sequence; the error names the first bad byte and its
    /// 0-based position.
    pub fn encode(self, seq: &[u8]) -> Result<Vec<u8>, EncodeError> {
        seq.iter()
            .enumerate()
            .map(|(position, &byte)| {
                self.encode_byte(byte).ok_or(EncodeError {
                    alphabet: self,
                    byte,
                    position,
                })
            })
            .collect()
    }

    /// Decodes codes back to upper-case letters (`?` for out-of-range codes).
    pub fn decode(self, codes: &[u8]) -> Vec<u8> {
        codes
            .iter()
            .map(|&c| self.decode_byte(c).unwrap_or(b'?'))
            .collect()
    }
}

/// A byte that is not a letter of the alphabet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodeError {
    /// Alphabet that was used.
    pub alphabet: Alphabet,
    /// The offending byte.
    pub byte: u8,
    /// Its 0-based position in the input.
    pub position: usize,
}

/// Formats a byte for error messages: `'x'` when printable, else `0xNN`.
pub(crate) fn show_byte(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", b as char)
    } else {
        format!("0x{b:02X}")
    }
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid {} character {} at position {}",
            self.alphabet.name(),
            show_byte(self.byte),
            self.position
        )
    }
}

impl std::error::Error for EncodeError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dna_roundtrip_case_insensitive() {
        assert_eq!(
            Alphabet::Dna.encode(b"ACGTacgt").unwrap(),
            [0, 1, 2, 3, 0, 1, 2, 3]
        );
        assert_eq!(Alphabet::Dna.decode(&[3, 2, 1, 0]), b"TGCA");
        let e = Alphabet::Dna.encode(b"ACNT").unwrap_err();
        assert_eq!((e.byte, e.position), (b'N', 2));
        assert!(e.to_string().contains("'N'"));
    }

    #[test]
    fn protein_codes() {
        let p = Alphabet::Protein;
        for (i, &c) in PROTEIN_LETTERS.iter().enumerate() {
            assert_eq!(p.encode_byte(c), Some(i as u8));
            assert_eq!(p.encode_byte(c.to_ascii_lowercase()), Some(i as u8));
        }
        assert_eq!(p.encode_byte(b'J'), None);
        assert_eq!(p.encode_byte(b'O'), None);
        assert_eq!(Alphabet::Dna.encode_byte(b'*'), None);
    }
}
