//! The messages ranks exchange about a space, on the space's own
//! communicator (so they never meet the application's) and with one tag,
//! [`TAG`], which the space's message service receives.
//!
//! Every message starts with the guid (8 bytes, little-endian) and one
//! byte naming its kind:
//!
//! | kind       | direction          | body after the header              |
//! |------------|--------------------|------------------------------------|
//! | `REQUEST`  | requester → home   | nothing                            |
//! | `DATA`     | home → requester   | the value's encoding               |
//! | `REFUSED`  | "home" → requester | `i32` LE: the home it computes     |

/// The tag of every message of a space.
pub(crate) const TAG: i32 = 1;

/// The kind of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A remote rank asks the home for a guid's value.
    Request = 1,
    /// The home sends a guid's value.
    Data = 2,
    /// The asked rank is not the guid's home by its own `home` function.
    Refused = 3,
}

impl Kind {
    fn from_byte(byte: u8) -> Option<Kind> {
        match byte {
            1 => Some(Kind::Request),
            2 => Some(Kind::Data),
            3 => Some(Kind::Refused),
            _ => None,
        }
    }
}

const GUID_BYTES: usize = 8;
const HEADER_BYTES: usize = GUID_BYTES + 1;

/// A message of `kind` about `guid`, with room for `body_len` more bytes.
pub(crate) fn message(guid: u64, kind: Kind, body_len: usize) -> Vec<u8> {
    let mut message = Vec::with_capacity(HEADER_BYTES + body_len);
    message.extend_from_slice(&guid.to_le_bytes());
    message.push(kind as u8);
    message
}

/// Why a received message could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Malformed {
    /// Shorter than the header.
    Short(usize),
    /// An unknown kind byte.
    Kind(u8),
}

/// Splits a received message into its guid, kind and body.
pub(crate) fn split(message: &[u8]) -> Result<(u64, Kind, &[u8]), Malformed> {
    let (head, body) = message
        .split_at_checked(HEADER_BYTES)
        .ok_or(Malformed::Short(message.len()))?;
    let (guid, kind) = head.split_at(GUID_BYTES);
    let guid = u64::from_le_bytes(guid.try_into().expect("8 bytes"));
    let kind = Kind::from_byte(kind[0]).ok_or(Malformed::Kind(kind[0]))?;
    Ok((guid, kind, body))
}

/// The body of a `REFUSED` message.
pub(crate) fn refused_body(its_home: i32) -> [u8; 4] {
    its_home.to_le_bytes()
}

/// Reads a `REFUSED` body.
pub(crate) fn read_refused(body: &[u8]) -> Option<i32> {
    Some(i32::from_le_bytes(body.try_into().ok()?))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let mut data = message(0xdead_beef_0000_0001, Kind::Data, 3);
        data.extend_from_slice(&[7, 8, 9]);
        assert_eq!(
            split(&data),
            Ok((0xdead_beef_0000_0001, Kind::Data, &[7u8, 8, 9][..]))
        );
        assert_eq!(split(&[1, 2, 3]), Err(Malformed::Short(3)));
        let mut bad = message(5, Kind::Request, 0);
        bad[8] = 9;
        assert_eq!(split(&bad), Err(Malformed::Kind(9)));
        assert_eq!(read_refused(&refused_body(-3)), Some(-3));
    }
}
