//! Probes (MPI 4.0 §3.8.1): a request that completes once a matching
//! message is pending, without receiving it.

use std::marker::PhantomData;
use std::os::raw::c_int;

use mpi::datatype::Equivalence;
use mpi::ffi;

use crate::comm::{Comm, Source, TagMatch};
use crate::engine::EngineState;
use crate::op::{mpi_error, Buffers, Cancel, Done, OpId, Operation, Reply, Start};
use crate::raw::{empty_status, RawComm};
use crate::request::{Request, Status};
use crate::Error;

/// A polled `MPI_Iprobe`; its status counts elements of `E`.
struct ProbeOp<E> {
    id: OpId,
    source: i32,
    tag: i32,
    comm: RawComm,
    reply: Reply<()>,
    element: PhantomData<fn() -> E>,
}

impl<E> ProbeOp<E> {
    const NAME: &'static str = "probe";
}

impl<E: Equivalence + 'static> Operation for ProbeOp<E> {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn describe(&self) -> String {
        format!("{}(source={}, tag={})", Self::NAME, self.source, self.tag)
    }

    fn id(&self) -> OpId {
        self.id
    }

    fn cancel_kind(&self) -> Cancel {
        Cancel::Receive
    }

    fn peer(&self) -> Option<(i32, i32)> {
        Some((self.source, self.tag))
    }

    fn start(&mut self, _state: &mut EngineState) -> Start {
        Start::Polled
    }

    fn poll(&mut self, _state: &mut EngineState) -> Option<Done> {
        let mut flag: c_int = 0;
        let mut status = empty_status();
        // SAFETY: valid handles; out-parameters.
        let code =
            unsafe { ffi::MPI_Iprobe(self.source, self.tag, self.comm.0, &mut flag, &mut status) };
        (code != ffi::MPI_SUCCESS as c_int || flag != 0).then_some(Done { status, code })
    }

    fn cancel_polled(self: Box<Self>) {
        self.reply.complete(Ok(((), Status::empty(0, true))));
    }

    fn complete(self: Box<Self>, done: Done, _state: &mut EngineState) {
        let result = if done.is_ok() {
            Ok((
                (),
                Status {
                    source: done.status.MPI_SOURCE,
                    tag: done.status.MPI_TAG,
                    count: crate::raw::get_count::<E>(&done.status).unwrap_or(0),
                    cancelled: false,
                },
            ))
        } else {
            Err(mpi_error(Self::NAME, done.code, None))
        };
        self.reply.complete(result);
    }

    fn fail(self: Box<Self>, error: Error, _buffers: Buffers) {
        self.reply.complete(Err(error));
    }
}

impl Comm {
    /// A request that completes once a message matching `source` and `tag`
    /// is pending (polled `MPI_Iprobe`, §3.8.1); its status counts elements
    /// of `E`. The message is not received. To serve a stream of messages,
    /// [`serve`](Comm::serve) is cheaper: it probes and receives each one
    /// in the same engine step.
    ///
    /// # Errors
    /// A bad rank or tag.
    pub fn iprobe<E: Equivalence + 'static>(
        &self,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Request<()>, Error> {
        let name = ProbeOp::<E>::NAME;
        let source = self.raw_source(name, source.into())?;
        let tag = self.raw_tag(name, tag.into())?;
        let (reply, request, id) = self.request(name, Cancel::Receive);
        self.start(ProbeOp::<E> {
            id,
            source,
            tag,
            comm: self.raw(),
            reply,
            element: PhantomData,
        });
        Ok(request)
    }

    /// `MPI_Probe`: waits until a matching message is pending and returns
    /// its status (counting elements of `E`).
    ///
    /// # Errors
    /// A bad rank or tag, or an MPI error.
    pub fn probe<E: Equivalence + 'static>(
        &self,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Status, Error> {
        Ok(self.iprobe::<E>(source, tag)?.wait()?.1)
    }
}
