//! Point-to-point communication (Table I of the HCMPI paper; MPI 4.0
//! §3.7): `isend`/`issend`/`irecv` and their blocking forms.
//!
//! Every call here checks its arguments, builds its operation on the
//! caller's thread and hands it to the engine; none calls MPI itself.
//! Buffers are owned `Vec`s, moved in and handed back by the completed
//! [`Request`], so a buffer cannot be touched (or freed) while MPI uses it.
//! Receives truncate the vector to the received count.

use std::os::raw::c_void;

use mpi::datatype::Equivalence;
use mpi::ffi;

use crate::comm::{started, Comm, Source, TagMatch};
use crate::engine::EngineState;
use crate::op::{count, dispose, mpi_error, Buffers, Cancel, Done, OpId, Operation, Reply, Start};
use crate::raw::{null_request, DatatypeOf, RawComm};
use crate::request::{Request, Status};
use crate::Error;

/// `MPI_Isend` or `MPI_Issend` (MPI 4.0 §3.7.2).
struct SendOp<E> {
    id: OpId,
    data: Vec<E>,
    dest: i32,
    tag: i32,
    comm: RawComm,
    synchronous: bool,
    reply: Reply<Vec<E>>,
}

impl<E> SendOp<E> {
    const STANDARD: &'static str = "isend";
    const SYNCHRONOUS: &'static str = "issend";
}

impl<E: Equivalence + Send + 'static> Operation for SendOp<E> {
    fn name(&self) -> &'static str {
        if self.synchronous {
            Self::SYNCHRONOUS
        } else {
            Self::STANDARD
        }
    }

    fn describe(&self) -> String {
        format!(
            "{}(dest={}, tag={}, {} elements)",
            self.name(),
            self.dest,
            self.tag,
            self.data.len()
        )
    }

    fn id(&self) -> OpId {
        self.id
    }

    fn cancel_kind(&self) -> Cancel {
        Cancel::Send
    }

    fn bytes(&self) -> usize {
        std::mem::size_of_val(self.data.as_slice())
    }

    fn peer(&self) -> Option<(i32, i32)> {
        Some((self.dest, self.tag))
    }

    fn start(&mut self, _state: &mut EngineState) -> Start {
        let mut request = null_request();
        let call = if self.synchronous {
            ffi::MPI_Issend
        } else {
            ffi::MPI_Isend
        };
        let datatype = DatatypeOf::<E>::new();
        // SAFETY: the buffer is owned by this operation until completion
        // and holds `len` elements (checked to fit a count by the API);
        // the handles are valid; `request` is an out-parameter.
        let code = unsafe {
            call(
                self.data.as_ptr() as *const c_void,
                self.data.len() as i32,
                datatype.raw(),
                self.dest,
                self.tag,
                self.comm.0,
                &mut request,
            )
        };
        started(code, request)
    }

    fn complete(self: Box<Self>, done: Done, state: &mut EngineState) {
        let name = self.name();
        let SendOp {
            data,
            dest,
            tag,
            reply,
            ..
        } = *self;
        let result = if !done.is_ok() {
            Err(mpi_error(name, done.code, None))
        } else if done.cancelled() && state.shutting_down {
            Err(Error::Shutdown { op: name })
        } else {
            let status = Status {
                source: dest,
                tag,
                count: data.len(),
                cancelled: done.cancelled(),
            };
            Ok((data, status))
        };
        reply.complete(result);
    }

    fn fail(self: Box<Self>, error: Error, buffers: Buffers) {
        let SendOp { data, reply, .. } = *self;
        dispose(data, buffers);
        reply.complete(Err(error));
    }
}

/// `MPI_Irecv` (MPI 4.0 §3.7.2).
struct RecvOp<E> {
    id: OpId,
    data: Vec<E>,
    source: i32,
    tag: i32,
    comm: RawComm,
    reply: Reply<Vec<E>>,
}

impl<E> RecvOp<E> {
    const NAME: &'static str = "irecv";
}

impl<E: Equivalence + Send + 'static> Operation for RecvOp<E> {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn describe(&self) -> String {
        format!(
            "{}(source={}, tag={}, {} elements)",
            Self::NAME,
            self.source,
            self.tag,
            self.data.len()
        )
    }

    fn id(&self) -> OpId {
        self.id
    }

    fn cancel_kind(&self) -> Cancel {
        Cancel::Receive
    }

    fn bytes(&self) -> usize {
        std::mem::size_of_val(self.data.as_slice())
    }

    fn peer(&self) -> Option<(i32, i32)> {
        Some((self.source, self.tag))
    }

    fn start(&mut self, _state: &mut EngineState) -> Start {
        let mut request = null_request();
        let datatype = DatatypeOf::<E>::new();
        // SAFETY: as for sends; MPI writes at most `len` elements.
        let code = unsafe {
            ffi::MPI_Irecv(
                self.data.as_mut_ptr() as *mut c_void,
                self.data.len() as i32,
                datatype.raw(),
                self.source,
                self.tag,
                self.comm.0,
                &mut request,
            )
        };
        started(code, request)
    }

    fn complete(self: Box<Self>, done: Done, state: &mut EngineState) {
        let RecvOp {
            mut data, reply, ..
        } = *self;
        let cancelled = done.cancelled();
        let result = if !done.is_ok() {
            Err(mpi_error(Self::NAME, done.code, Some(data.len())))
        } else if cancelled && state.shutting_down {
            Err(Error::Shutdown { op: Self::NAME })
        } else {
            let received = if cancelled {
                0
            } else {
                crate::raw::get_count::<E>(&done.status).unwrap_or(0)
            };
            data.truncate(received);
            Ok((
                data,
                Status {
                    source: done.status.MPI_SOURCE,
                    tag: done.status.MPI_TAG,
                    count: received,
                    cancelled,
                },
            ))
        };
        reply.complete(result);
    }

    fn fail(self: Box<Self>, error: Error, buffers: Buffers) {
        let RecvOp { data, reply, .. } = *self;
        dispose(data, buffers);
        reply.complete(Err(error));
    }
}

impl Comm {
    fn send_request<E: Equivalence + Send + 'static>(
        &self,
        data: Vec<E>,
        dest: i32,
        tag: i32,
        synchronous: bool,
    ) -> Result<Request<Vec<E>>, Error> {
        let name = if synchronous {
            SendOp::<E>::SYNCHRONOUS
        } else {
            SendOp::<E>::STANDARD
        };
        self.check_rank(name, dest)?;
        self.check_tag(name, tag)?;
        count(name, data.len())?;
        let (reply, request, id) = self.request(name, Cancel::Send);
        self.start(SendOp {
            id,
            data,
            dest,
            tag,
            comm: self.raw(),
            synchronous,
            reply,
        });
        Ok(request)
    }

    /// `HCMPI_Isend` / `MPI_Isend` (MPI 4.0 §3.7.2): sends `data` to `dest`.
    /// The request hands the vector back once it may be reused.
    /// See `examples/fig4_await.rs`.
    ///
    /// # Errors
    /// A bad rank or tag, or an oversized buffer.
    pub fn isend<E: Equivalence + Send + 'static>(
        &self,
        data: Vec<E>,
        dest: i32,
        tag: i32,
    ) -> Result<Request<Vec<E>>, Error> {
        self.send_request(data, dest, tag, false)
    }

    /// `MPI_Issend` (§3.7.2): like [`isend`](Self::isend), completing only
    /// once the matching receive has started.
    ///
    /// # Errors
    /// As [`isend`](Self::isend).
    pub fn issend<E: Equivalence + Send + 'static>(
        &self,
        data: Vec<E>,
        dest: i32,
        tag: i32,
    ) -> Result<Request<Vec<E>>, Error> {
        self.send_request(data, dest, tag, true)
    }

    /// `HCMPI_Send`: [`isend`](Self::isend), then wait (running other tasks
    /// meanwhile when called from a task).
    ///
    /// # Errors
    /// As [`isend`](Self::isend), or an MPI error.
    pub fn send<E: Equivalence + Send + 'static>(
        &self,
        data: Vec<E>,
        dest: i32,
        tag: i32,
    ) -> Result<Vec<E>, Error> {
        Ok(self.isend(data, dest, tag)?.wait()?.0)
    }

    /// `HCMPI_Irecv` / `MPI_Irecv` (§3.7.2): receives into `buffer` (its
    /// length is the capacity) from `source` with `tag`. The request hands
    /// the vector back truncated to the received count.
    ///
    /// # Errors
    /// A bad rank or tag, or an oversized buffer.
    pub fn irecv<E: Equivalence + Send + 'static>(
        &self,
        buffer: Vec<E>,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<Request<Vec<E>>, Error> {
        let name = RecvOp::<E>::NAME;
        let source = self.raw_source(name, source.into())?;
        let tag = self.raw_tag(name, tag.into())?;
        count(name, buffer.len())?;
        let (reply, request, id) = self.request(name, Cancel::Receive);
        self.start(RecvOp {
            id,
            data: buffer,
            source,
            tag,
            comm: self.raw(),
            reply,
        });
        Ok(request)
    }

    /// `HCMPI_Recv`: [`irecv`](Self::irecv), then wait.
    ///
    /// # Errors
    /// As [`irecv`](Self::irecv), or an MPI error.
    pub fn recv<E: Equivalence + Send + 'static>(
        &self,
        buffer: Vec<E>,
        source: impl Into<Source>,
        tag: impl Into<TagMatch>,
    ) -> Result<(Vec<E>, Status), Error> {
        self.irecv(buffer, source, tag)?.wait()
    }
}
