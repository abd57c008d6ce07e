//! Parsing of the **first** record of a FASTA file.
//!
//! Rules: blank lines before the header are skipped; the first non-blank line
//! must start with `>` (its remainder, trimmed, is the header); the sequence
//! is every following line up to the next `>` line or the end of input.
//! Spaces, tabs and `\r` inside sequence lines are ignored; letters are
//! case-insensitive and must belong to the chosen [`Alphabet`].

use crate::sw::alphabet::{show_byte, Alphabet};
use std::path::Path;

/// The first record of a FASTA input, already encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FastaRecord {
    /// Header line without the leading `>`, trimmed.
    pub header: String,
    /// Sequence codes (see [`crate::sw::alphabet`]).
    pub seq: Vec<u8>,
}

/// Why a FASTA input was rejected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FastaError {
    /// The input is empty or contains only whitespace.
    #[error("empty FASTA input")]
    EmptyInput,
    /// The first non-blank line does not start with `>`.
    #[error("line {line}: expected a FASTA header starting with '>'")]
    MissingHeader {
        /// 1-based line number.
        line: usize,
    },
    /// The first record has a header but no sequence letters.
    #[error("FASTA record '{header}' has an empty sequence")]
    EmptySequence {
        /// The record's header.
        header: String,
    },
    /// A byte that is not a letter of the alphabet.
    #[error(
        "invalid {} character {} at line {line}, column {column} (sequence position {position})",
        alphabet.name(),
        show_byte(*byte)
    )]
    InvalidCharacter {
        /// The offending byte.
        byte: u8,
        /// Alphabet in use.
        alphabet: Alphabet,
        /// 1-based line number.
        line: usize,
        /// 1-based column (byte) within the line.
        column: usize,
        /// 0-based index the letter would have had in the sequence.
        position: usize,
    },
    /// Reading the file failed.
    #[error("cannot read FASTA input")]
    Io(#[from] std::io::Error),
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r')
}

/// Parses the first record of `input` with the given alphabet.
pub fn parse_first(input: &[u8], alphabet: Alphabet) -> Result<FastaRecord, FastaError> {
    let mut lines = input.split(|&b| b == b'\n').enumerate();
    // Find the header.
    let header = loop {
        match lines.next() {
            None => return Err(FastaError::EmptyInput),
            Some((_, line)) if line.iter().all(|&b| is_blank(b)) => continue,
            Some((idx, line)) => {
                let start = line.iter().position(|&b| !is_blank(b)).unwrap_or(0);
                if line[start] != b'>' {
                    return Err(FastaError::MissingHeader { line: idx + 1 });
                }
                break String::from_utf8_lossy(&line[start + 1..])
                    .trim()
                    .to_string();
            }
        }
    };
    let mut seq = Vec::new();
    for (idx, line) in lines {
        if line.first() == Some(&b'>') {
            break;
        }
        for (col, &byte) in line.iter().enumerate() {
            if is_blank(byte) {
                continue;
            }
            match alphabet.encode_byte(byte) {
                Some(code) => seq.push(code),
                None => {
                    return Err(FastaError::InvalidCharacter {
                        byte,
                        alphabet,
                        line: idx + 1,
                        column: col + 1,
                        position: seq.len(),
                    })
                }
            }
        }
    }
    if seq.is_empty() {
        return Err(FastaError::EmptySequence { header });
    }
    Ok(FastaRecord { header, seq })
}

/// Reads a file and parses its first record.
pub fn read_first(path: impl AsRef<Path>, alphabet: Alphabet) -> Result<FastaRecord, FastaError> {
    let data = std::fs::read(path)?;
    parse_first(&data, alphabet)
}
