//! Argument parsers shared by the benchmark binaries' command lines.

/// A count that is not a positive integer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected a positive integer, got {given:?}")]
#[non_exhaustive]
pub struct NotPositive {
    /// The text given.
    pub given: String,
}

/// A clap `value_parser` for counts that must be at least 1.
///
/// ```
/// use benches::cli::positive;
///
/// assert_eq!(positive("12"), Ok(12));
/// assert!(positive("0").is_err());
/// ```
///
/// # Errors
/// [`NotPositive`] for anything but a positive integer.
pub fn positive(text: &str) -> Result<usize, NotPositive> {
    match text.trim().parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(NotPositive {
            given: text.to_owned(),
        }),
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
            assert_eq!(err.given, bad);
            assert!(err.to_string().contains("positive integer"), "{bad}: {err}");
        }
    }
}
