//! The listener: the paper's listener task, which answers other ranks'
//! requests and receives the values this rank asked for.
//!
//! It is a message service of the communication engine on the space's
//! communicator ([`Comm::serve`](hc_mpi::Comm::serve)): the engine matches
//! each message of the space's tag with `MPI_Improbe`, receives exactly that
//! message with `MPI_Imrecv`, and runs [`handle`] on it inline — no thread
//! of its own, nothing to wake. A remote get therefore crosses at most four
//! hand-offs end to end: the awaiting task posts `REQUEST` itself (or queues
//! it for the engine's holder), the home's engine answers with `DATA` from
//! the handler, the requester's engine stores the value in the guid's DDF,
//! and that put releases the awaiting task onto a worker.
//!
//! Handlers run on the engine, so they are short: a table lookup, the
//! user's `home`/`size`/`reader`, a reply `isend`. A panic in one of them is
//! caught here and recorded as the space's failure; from then on the
//! listener drops every message (the counts can no longer balance), and
//! `close` reports the failure on every rank (see `termination`).

use std::panic::{self, AssertUnwindSafe};

use hc_mpi::{Message, Service};

use crate::payload::Payload;
use crate::shared::Shared;
use crate::sync::Arc;
use crate::wire;
use crate::DddfError;

/// Starts the space's listener on its communicator.
pub(crate) fn start<T: Payload>(shared: &Arc<Shared<T>>) -> Result<Service, DddfError> {
    let listener = Arc::clone(shared);
    let service = shared.comm.serve(wire::TAG, move |message: Message<u8>| {
        handle(&listener, message)
    })?;
    Ok(service)
}

/// Handles one message of the space, on the engine.
fn handle<T: Payload>(shared: &Shared<T>, message: Message<u8>) {
    if shared.has_failed() {
        return;
    }
    let source = message.source;
    let handled = panic::catch_unwind(AssertUnwindSafe(|| {
        shared.handle_message(source, &message.data)
    }));
    match handled {
        Ok(()) => shared.counters.message_handled(),
        Err(payload) => shared.record_failure(DddfError::ListenerPanicked {
            source,
            message: hc_runtime::panic_message(&*payload).to_owned(),
        }),
    }
}
