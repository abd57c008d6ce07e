//! The listener: the paper's listener task, which answers other ranks'
//! requests and receives the values this rank asked for.
//!
//! It is a thread that never calls MPI itself: it asks the communication
//! worker to probe the space's communicator for any message, then to
//! receive exactly the probed one (same source and tag; MPI 4.0 §3.8.1
//! guarantees that receive gets the probed message, as the listener is the
//! only receiver on this communicator), and handles it. While it waits it
//! is parked on the request's DDF, so it costs no core. It ends on the
//! `STOP` message its own rank sends once termination is decided (see
//! `termination`).

use hc_mpi::{Comm, Error, ANY_SOURCE, ANY_TAG};

use crate::payload::Payload;
use crate::shared::Shared;
use crate::sync::Arc;
use crate::wire;
use crate::DddfError;

/// Body of the listener thread.
pub(crate) fn run<T: Payload>(shared: Arc<Shared<T>>) {
    loop {
        match receive_one(&shared.comm) {
            Ok((_, wire::STOP, _)) => return,
            Ok((source, tag, message)) => {
                // `home` and `size` are user code: a panic in them stops
                // the listener with an error that `close` reports on every
                // rank, instead of leaving the message counts unbalanced.
                let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    shared.handle_message(source, tag, &message)
                }));
                if let Err(payload) = handled {
                    shared.record_failure(DddfError::ListenerPanicked {
                        source,
                        message: hc_runtime::panic_message(&*payload).to_owned(),
                    });
                    return;
                }
                shared.counters.message_handled();
            }
            Err(error) => {
                shared.record_failure(error.into());
                return;
            }
        }
    }
}

/// Receives the next message of any source and tag: `(source, tag, bytes)`.
fn receive_one(comm: &Comm) -> Result<(i32, i32, Vec<u8>), Error> {
    let (_, probed) = comm.iprobe::<u8>(ANY_SOURCE, ANY_TAG)?.wait()?;
    let buffer = vec![0u8; probed.count];
    let (message, status) = comm.irecv(buffer, probed.source, probed.tag)?.wait()?;
    Ok((status.source, status.tag, message))
}
