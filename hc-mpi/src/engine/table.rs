//! The request table: every posted operation and its `MPI_Request`, in the
//! dense arrays `MPI_Testsome` wants (MPI 4.0 §3.7.5).

use std::os::raw::c_int;
use std::time::Instant;

use mpi::ffi;

use crate::op::{Cancel, Done, OpId, Operation};
use crate::raw::empty_status;

/// `MPI_Test` (MPI 4.0 §3.7.3) of a request just posted: the outcome if
/// it completed during the post (an eager send, a receive whose message had
/// arrived), which then never enters the table.
pub(crate) fn test_posted(request: &mut ffi::MPI_Request) -> Option<Done> {
    let mut flag: c_int = 0;
    let mut status = empty_status();
    // SAFETY: a request just returned by MPI and owned by the caller;
    // out-parameters.
    let code = unsafe { ffi::MPI_Test(request, &mut flag, &mut status) };
    (code != ffi::MPI_SUCCESS as c_int || flag != 0).then_some(Done { status, code })
}

/// Posted operations; `requests[i]` belongs to `ops[i]`.
#[derive(Default)]
pub(crate) struct RequestTable {
    requests: Vec<ffi::MPI_Request>,
    ops: Vec<Box<dyn Operation>>,
    /// When each operation was started (the engine step's clock).
    started: Vec<Instant>,
    indices: Vec<c_int>,
    statuses: Vec<ffi::MPI_Status>,
    /// Reused between calls so that completing costs no allocation.
    done: Vec<(usize, Done)>,
}

impl RequestTable {
    pub(crate) fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub(crate) fn insert(
        &mut self,
        request: ffi::MPI_Request,
        op: Box<dyn Operation>,
        started: Instant,
    ) {
        self.requests.push(request);
        self.ops.push(op);
        self.started.push(started);
        self.indices.push(0);
        self.statuses.push(empty_status());
    }

    /// `MPI_Testsome` over every posted request; hands each completed
    /// operation (with its start) to `complete`. Returns whether any
    /// completed.
    pub(crate) fn test_some(
        &mut self,
        complete: impl FnMut(Box<dyn Operation>, Done, Instant),
    ) -> bool {
        if self.requests.is_empty() {
            return false;
        }
        let mut outcount: c_int = 0;
        // SAFETY: the arrays have one entry per posted request, as MPI
        // requires; the requests are owned by this table.
        let code = unsafe {
            ffi::MPI_Testsome(
                self.requests.len() as c_int,
                self.requests.as_mut_ptr(),
                &mut outcount,
                self.indices.as_mut_ptr(),
                self.statuses.as_mut_ptr(),
            )
        };
        self.done.clear();
        if code != ffi::MPI_SUCCESS as c_int && code != ffi::MPI_ERR_IN_STATUS as c_int {
            // An error MPI did not tie to a request: find the requests it
            // concerns by testing each one, so that every error reaches its
            // request instead of reading as "no progress".
            self.test_each(code);
            return self.remove_done(complete);
        }
        // SAFETY: reading an immutable MPI constant.
        if outcount == unsafe { ffi::RSMPI_UNDEFINED } || outcount <= 0 {
            return false;
        }
        let per_request_codes = code == ffi::MPI_ERR_IN_STATUS as c_int;
        for k in 0..outcount as usize {
            let status = self.statuses[k];
            let code = if per_request_codes {
                status.MPI_ERROR
            } else {
                code
            };
            self.done
                .push((self.indices[k] as usize, Done { status, code }));
        }
        self.remove_done(complete)
    }

    /// `MPI_Test` (MPI 4.0 §3.7.3) of each posted request after an
    /// `MPI_Testsome` that failed with `code`: the ones that completed or
    /// failed go to `done`. MPI leaves the array undefined after such an
    /// error; a request it already set to `MPI_REQUEST_NULL` completed
    /// with an outcome that is lost, so it fails with `code` rather than
    /// pass for a success with an empty status.
    fn test_each(&mut self, code: c_int) {
        let null = crate::raw::null_request();
        for (index, request) in self.requests.iter_mut().enumerate() {
            if *request == null {
                self.done.push((
                    index,
                    Done {
                        status: empty_status(),
                        code,
                    },
                ));
                continue;
            }
            let mut flag: c_int = 0;
            let mut status = empty_status();
            // SAFETY: a posted request owned by this table; out-parameters.
            let code = unsafe { ffi::MPI_Test(request, &mut flag, &mut status) };
            if code != ffi::MPI_SUCCESS as c_int || flag != 0 {
                self.done.push((index, Done { status, code }));
            }
        }
    }

    /// Takes the entries listed in `done` out of the table and hands them to
    /// `complete`; whether there were any.
    fn remove_done(&mut self, mut complete: impl FnMut(Box<dyn Operation>, Done, Instant)) -> bool {
        if self.done.is_empty() {
            return false;
        }
        // Remove from the highest index down, so that swap_remove never
        // moves an entry still to be removed.
        self.done
            .sort_unstable_by_key(|entry| std::cmp::Reverse(entry.0));
        let mut done = std::mem::take(&mut self.done);
        for (index, outcome) in done.drain(..) {
            self.requests.swap_remove(index);
            self.indices.pop();
            self.statuses.pop();
            let started = self.started.swap_remove(index);
            complete(self.ops.swap_remove(index), outcome, started);
        }
        self.done = done;
        true
    }

    /// `MPI_Cancel` of the posted operation `id`, unless MPI forbids
    /// cancelling it ([`Cancel::Never`]: it is left to complete); whether it
    /// was found.
    pub(crate) fn cancel(&mut self, id: OpId) -> bool {
        match self.ops.iter().position(|op| op.id() == id) {
            Some(index) => {
                if self.ops[index].cancel_kind() != Cancel::Never {
                    // SAFETY: a posted request owned by this table.
                    unsafe { ffi::MPI_Cancel(&mut self.requests[index]) };
                }
                true
            }
            None => false,
        }
    }

    /// `MPI_Cancel` of every posted receive (shutdown: no peer waits for
    /// them). Sends are left to complete, collectives must.
    pub(crate) fn cancel_receives(&mut self) {
        for (request, op) in self.requests.iter_mut().zip(&self.ops) {
            if op.cancel_kind() == Cancel::Receive {
                // SAFETY: a posted request owned by this table.
                unsafe { ffi::MPI_Cancel(request) };
            }
        }
    }

    /// Descriptions of the posted operations.
    pub(crate) fn describe(&self) -> impl Iterator<Item = String> + '_ {
        self.ops.iter().map(|op| op.describe())
    }

    /// Frees every request handle that is still posted and hands back its
    /// operation (shutdown: MPI may still complete the transfer in the
    /// background, so the caller leaks the buffers). The handle of an
    /// operation MPI forbids freeing ([`Cancel::Never`]) is left to MPI.
    pub(crate) fn abandon_all(&mut self) -> Vec<(Box<dyn Operation>, Instant)> {
        for (request, op) in self.requests.iter_mut().zip(&self.ops) {
            if op.cancel_kind() != Cancel::Never {
                // SAFETY: a posted request owned by this table, freed once.
                unsafe { ffi::MPI_Request_free(request) };
            }
        }
        self.requests.clear();
        self.indices.clear();
        self.statuses.clear();
        let ops = std::mem::take(&mut self.ops);
        ops.into_iter().zip(self.started.drain(..)).collect()
    }
}
