//! The command line of the examples that take one numeric option.

use std::fmt;
use std::str::FromStr;

/// A command line an example cannot run.
///
/// `Debug` shows the message too: `main` returning the error prints it
/// with `{:?}`.
#[derive(thiserror::Error)]
pub enum ArgError {
    /// The option needs a number after it.
    #[error(
        "{option} takes a number, not {}",
        given.as_ref().map_or("nothing".to_owned(), |text| format!("{text:?}"))
    )]
    NotANumber {
        /// The option.
        option: &'static str,
        /// What followed it, if anything.
        given: Option<String>,
    },
    /// Not an option of this example.
    #[error("unknown argument {0:?}")]
    Unknown(String),
}

impl fmt::Debug for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The number after `name` among this process's arguments; `default`
/// without it.
pub fn number_option<T: FromStr>(name: &'static str, default: T) -> Result<T, ArgError> {
    let mut args = std::env::args().skip(1);
    let mut value = default;
    while let Some(arg) = args.next() {
        if arg != name {
            return Err(ArgError::Unknown(arg));
        }
        let given = args.next();
        value =
            given
                .as_deref()
                .and_then(|text| text.parse().ok())
                .ok_or(ArgError::NotANumber {
                    option: name,
                    given,
                })?;
    }
    Ok(value)
}
