//! How a driver writes its report to standard output.
//!
//! A reader that stops reading early (`smith-waterman ... | head -1`) is no
//! error: the driver drops the rest of its report and ends with status 0,
//! as other command-line tools do, instead of panicking in `println!`. Any
//! other failure to write (a full disk) is an [`OutputError`] that the
//! driver reports like any other error.

use std::io::{self, Write};

/// The report could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// Writing or flushing standard output failed (not because its reader
    /// had gone).
    #[error("cannot write the report to standard output")]
    Stdout(#[source] io::Error),
}

/// How much of a report reached its reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// All of it.
    Whole,
    /// Its reader had stopped reading (a closed pipe). Whatever the driver
    /// would print next would be dropped as well, so it may skip the work
    /// that would produce it.
    ReaderGone,
}

/// Runs `write` on standard output, locked for the whole report, and
/// flushes it.
///
/// # Errors
/// [`OutputError::Stdout`] when a write or the flush fails for any reason
/// but a closed reader ([`io::ErrorKind::BrokenPipe`]), which ends the
/// report quietly: [`Delivery::ReaderGone`].
///
/// ```
/// use std::io::Write;
/// use apps::output::Delivery;
///
/// if apps::output::to_stdout(|out| writeln!(out, "searching..."))? == Delivery::ReaderGone {
///     return Ok(()); // nobody would read the result
/// }
/// # Ok::<(), apps::output::OutputError>(())
/// ```
pub fn to_stdout(
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<Delivery, OutputError> {
    to_writer(&mut io::stdout().lock(), write)
}

/// [`to_stdout`] on any writer (the tests' failing ones).
fn to_writer<W: Write>(
    out: &mut W,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<Delivery, OutputError> {
    match write(out).and_then(|()| out.flush()) {
        Ok(()) => Ok(Delivery::Whole),
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(Delivery::ReaderGone),
        Err(error) => Err(OutputError::Stdout(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes `room` bytes, then fails every write and flush with `kind`.
    struct Limited {
        taken: Vec<u8>,
        room: usize,
        kind: io::ErrorKind,
    }

    impl Write for Limited {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            if self.taken.len() == self.room {
                return Err(self.kind.into());
            }
            let n = bytes.len().min(self.room - self.taken.len());
            self.taken.extend_from_slice(&bytes[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            if self.taken.len() == self.room {
                Err(self.kind.into())
            } else {
                Ok(())
            }
        }
    }

    fn report(out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "first line")?;
        writeln!(out, "second line")
    }

    #[test]
    fn a_gone_reader_ends_the_report_quietly() {
        let mut out = Limited {
            taken: Vec::new(),
            room: 4,
            kind: io::ErrorKind::BrokenPipe,
        };
        assert_eq!(to_writer(&mut out, report).unwrap(), Delivery::ReaderGone);
        assert_eq!(out.taken, b"firs");
    }

    #[test]
    fn other_failures_are_errors_with_their_cause() {
        let mut out = Limited {
            taken: Vec::new(),
            room: 0,
            kind: io::ErrorKind::StorageFull,
        };
        let error = to_writer(&mut out, report).unwrap_err();
        let source = std::error::Error::source(&error)
            .and_then(|cause| cause.downcast_ref::<io::Error>())
            .expect("the write's error as the cause");
        assert_eq!(source.kind(), io::ErrorKind::StorageFull);
        assert!(error.to_string().contains("standard output"), "{error}");
    }

    #[test]
    fn a_failed_flush_is_an_error_too() {
        // Everything fits, but the flush fails.
        let mut out = Limited {
            taken: Vec::new(),
            room: "first line\nsecond line\n".len(),
            kind: io::ErrorKind::Other,
        };
        assert!(to_writer(&mut out, report).is_err());
    }

    #[test]
    fn a_whole_report_is_written() {
        let mut out = Vec::new();
        assert_eq!(to_writer(&mut out, report).unwrap(), Delivery::Whole);
        assert_eq!(out, b"first line\nsecond line\n");
    }
}
