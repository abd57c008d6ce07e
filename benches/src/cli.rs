//! Argument parsers shared by the benchmark binaries' command lines.

/// A clap `value_parser` for counts that must be at least 1.
///
/// # Errors
/// Anything but a positive integer, with the text that was given.
pub fn positive(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("expected a positive integer, got {text:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::positive;

    #[test]
    fn accepts_counts_and_rejects_the_rest() {
        assert_eq!(positive(" 12 "), Ok(12));
        for bad in ["0", "-3", "x", ""] {
            let err = positive(bad).unwrap_err();
            assert!(err.contains("positive integer"), "{bad}: {err}");
        }
    }
}
