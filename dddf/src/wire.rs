//! The messages ranks exchange about a space, on the space's own
//! communicator (so its tags never meet the application's).
//!
//! Every message starts with the guid (8 bytes, little-endian).
//!
//! | tag        | direction          | body after the guid                |
//! |------------|--------------------|------------------------------------|
//! | `REQUEST`  | requester → home   | nothing                            |
//! | `DATA`     | home → requester   | the value's encoding               |
//! | `REFUSED`  | "home" → requester | `i32` LE: the home it computes     |
//! | `STOP`     | a rank → itself    | (no guid) ends its listener        |

/// A remote rank asks the home for a guid's value.
pub(crate) const REQUEST: i32 = 1;
/// The home sends a guid's value.
pub(crate) const DATA: i32 = 2;
/// The asked rank is not the guid's home by its own `home` function.
pub(crate) const REFUSED: i32 = 3;
/// Sent by a rank to itself once termination is detected.
pub(crate) const STOP: i32 = 4;

const GUID_BYTES: usize = 8;

/// A message with the guid header followed by `body`.
pub(crate) fn with_guid(guid: u64, body_len: usize) -> Vec<u8> {
    let mut message = Vec::with_capacity(GUID_BYTES + body_len);
    message.extend_from_slice(&guid.to_le_bytes());
    message
}

/// Splits a received message into its guid and body; `None` if it is too
/// short to carry a guid.
pub(crate) fn split_guid(message: &[u8]) -> Option<(u64, &[u8])> {
    let (head, body) = message.split_at_checked(GUID_BYTES)?;
    Some((u64::from_le_bytes(head.try_into().ok()?), body))
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
    fn guid_header_round_trips() {
        let mut message = with_guid(0xdead_beef_0000_0001, 3);
        message.extend_from_slice(&[7, 8, 9]);
        assert_eq!(
            split_guid(&message),
            Some((0xdead_beef_0000_0001, &[7u8, 8, 9][..]))
        );
        assert_eq!(split_guid(&[1, 2, 3]), None);
        assert_eq!(read_refused(&refused_body(-3)), Some(-3));
    }
}
