//! The accumulator's links to its parent and children in the binomial
//! tree: one communicator of its own, the engine's service of its
//! messages, and the sends still in flight.

use hc_mpi::{Comm, Message, ReduceOp, Request, Service};

use super::window::Wire;
use super::SspError;
use crate::sync::{lock, Mutex};

/// The tag of every message (on the accumulator's own communicator).
pub(super) const TAG: i32 = 0;
/// Completed sends are pruned once this many are pending.
const PRUNE_AT: usize = 64;

#[derive(Debug)]
pub(super) struct Links {
    comm: Comm,
    sends: Mutex<Vec<Request<Vec<u64>>>>,
    /// Taken out (and so stopped) when the accumulator ends.
    service: Mutex<Option<Service>>,
}

impl Links {
    /// Duplicates `comm` and checks, collectively, that every rank passed
    /// the same `settings` (named by `names`).
    pub(super) fn connect(
        comm: &Comm,
        settings: [(&'static str, u64); 3],
    ) -> Result<Links, SspError> {
        let own = comm
            .duplicate()
            .map_err(|source| mpi("duplicate the communicator", source))?;
        // MAX over each setting and its complement gives the largest and the
        // smallest: equal to ours on every rank iff all agree.
        let words: Vec<u64> = settings.iter().flat_map(|&(_, v)| [v, !v]).collect();
        let max = own
            .allreduce(words, ReduceOp::Max)
            .map_err(|source| mpi("MPI_Allreduce of the settings", source))?;
        for (i, &(what, local)) in settings.iter().enumerate() {
            let (largest, smallest) = (max[2 * i], !max[2 * i + 1]);
            if largest != local || smallest != local {
                let other = if largest != local { largest } else { smallest };
                return Err(SspError::Mismatch { what, local, other });
            }
        }
        Ok(Links {
            comm: own,
            sends: Mutex::new(Vec::new()),
            service: Mutex::new(None),
        })
    }

    /// Serves the accumulator's messages with `handler` on the engine.
    pub(super) fn serve(
        &self,
        handler: impl FnMut(Message<u64>) + Send + 'static,
    ) -> Result<(), SspError> {
        let service = self
            .comm
            .serve(TAG, handler)
            .map_err(|source| mpi("serve the accumulator's messages", source))?;
        *lock(&self.service) = Some(service);
        Ok(())
    }

    /// Starts sending `wire` to `dest`. Called in the order the messages
    /// were produced (under the window's lock), so that MPI's
    /// non-overtaking rule delivers them in that order.
    pub(super) fn send(&self, dest: i32, wire: Wire) -> Result<(), SspError> {
        // A standing operation of the accumulator, not of the caller's
        // finish: `close` waits for it.
        let request =
            hc_runtime::outside_finish(|| self.comm.isend(wire.encode().to_vec(), dest, TAG))
                .map_err(|source| mpi("MPI_Isend", source))?;
        lock(&self.sends).push(request);
        Ok(())
    }

    /// Forgets the sends that completed, reporting a failed one. Called
    /// with no lock of the accumulator held: testing a request may step
    /// the engine (shared placement), which may run the accumulator's own
    /// handler on this thread.
    pub(super) fn prune(&self) -> Result<(), SspError> {
        let pending = {
            let mut sends = lock(&self.sends);
            if sends.len() < PRUNE_AT {
                return Ok(());
            }
            std::mem::take(&mut *sends)
        };
        let mut failed = None;
        let mut still = Vec::new();
        for request in pending {
            match request.try_wait() {
                Err(request) => still.push(request),
                Ok(Err(source)) => {
                    failed.get_or_insert(mpi("MPI_Isend", source));
                }
                Ok(Ok(_)) => {}
            }
        }
        lock(&self.sends).append(&mut still);
        failed.map_or(Ok(()), Err)
    }

    /// Stops serving: every rank closed, so no message comes any more, or
    /// the accumulator failed, so what still comes is moot.
    pub(super) fn stop_serving(&self) -> Result<(), SspError> {
        // Out of the lock before it drops: stopping may run the handler
        // on this thread (shared placement).
        let service = lock(&self.service).take();
        match service {
            // Dropping it stops it without waiting, even inside a handler.
            Some(service) => service
                .failure()
                .map_or(Ok(()), |source| Err(mpi("serve", source))),
            None => Ok(()),
        }
    }

    /// Awaits every send still in flight.
    pub(super) async fn drain(&self) -> Result<(), SspError> {
        let pending = std::mem::take(&mut *lock(&self.sends));
        for request in pending {
            request.await.map_err(|source| mpi("MPI_Isend", source))?;
        }
        Ok(())
    }
}

fn mpi(what: &'static str, source: hc_mpi::Error) -> SspError {
    SspError::Mpi { what, source }
}
