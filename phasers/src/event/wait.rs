//! The two faces of a queued consumer: [`EventWait`], the future of
//! [`Event::wait`](super::Event::wait), and [`EventTrigger`], the awaitable
//! of [`Event::when`](super::Event::when).

use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hc_runtime::{Awaitable, DdfValue, Readiness};

use super::{Consumer, EventError, Inner, ARMED, FIRED};

/// A trigger armed by [`Event::when`](super::Event::when): awaitable, ready
/// once it has taken its count (or failed, see [`result`](Self::result)).
#[derive(Debug)]
pub struct EventTrigger {
    consumer: Arc<Consumer>,
}

impl EventTrigger {
    pub(super) fn new(consumer: Arc<Consumer>) -> EventTrigger {
        EventTrigger { consumer }
    }

    /// The count this trigger takes.
    ///
    /// ```
    /// assert_eq!(hcmpi_phasers::Event::new().when(3).unwrap().count(), 3);
    /// ```
    pub fn count(&self) -> u64 {
        self.consumer.n
    }

    /// `None` while armed; `Some(Ok(()))` once it took its count;
    /// `Some(Err(_))` if the event was poisoned or dropped first.
    ///
    /// ```
    /// use hcmpi_phasers::{Event, EventError};
    ///
    /// let ev = Event::new();
    /// let trigger = ev.when(1).unwrap();
    /// assert_eq!(trigger.result(), None);
    /// drop(ev);
    /// assert_eq!(trigger.result(), Some(Err(EventError::Dropped)));
    /// ```
    pub fn result(&self) -> Option<Result<(), EventError>> {
        self.consumer.result()
    }

    /// Whether the trigger took its count.
    ///
    /// ```
    /// let ev = hcmpi_phasers::Event::new();
    /// ev.post().unwrap();
    /// assert!(ev.when(1).unwrap().has_fired());
    /// ```
    pub fn has_fired(&self) -> bool {
        self.consumer.state() == FIRED
    }
}

impl Awaitable for EventTrigger {
    fn readiness(&self) -> Readiness<'_> {
        self.consumer.released.readiness()
    }
}

/// The future of [`Event::wait`](super::Event::wait) (and of `DistEvents`'
/// `wait`): completes once the wait has taken its count, or failed.
/// Dropped before that, it withdraws from the event's queue.
#[must_use = "futures do nothing unless awaited; a dropped wait withdraws"]
pub struct EventWait {
    state: WaitState,
}

enum WaitState {
    /// Refused at registration; the error is handed out once.
    Refused(Option<EventError>),
    /// Queued (or already fired) on `event`.
    Queued {
        event: Arc<Inner>,
        consumer: Arc<Consumer>,
        released: DdfValue<()>,
    },
}

impl std::fmt::Debug for EventWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.state {
            WaitState::Refused(error) => f.debug_tuple("EventWait").field(error).finish(),
            WaitState::Queued { consumer, .. } => {
                f.debug_tuple("EventWait").field(consumer).finish()
            }
        }
    }
}

impl EventWait {
    pub(super) fn queued(event: Arc<Inner>, consumer: Arc<Consumer>) -> EventWait {
        let released = consumer.released.clone().into_future();
        EventWait {
            state: WaitState::Queued {
                event,
                consumer,
                released,
            },
        }
    }

    pub(crate) fn refused(error: EventError) -> EventWait {
        EventWait {
            state: WaitState::Refused(Some(error)),
        }
    }
}

impl Future for EventWait {
    type Output = Result<(), EventError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match &mut self.state {
            WaitState::Refused(error) => Poll::Ready(Err(error
                .take()
                .expect("EventWait polled after it completed"))),
            WaitState::Queued {
                consumer, released, ..
            } => match Pin::new(released).poll(cx) {
                Poll::Ready(()) => {
                    Poll::Ready(consumer.result().expect("a released consumer has a result"))
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

impl Drop for EventWait {
    fn drop(&mut self) {
        if let WaitState::Queued {
            event, consumer, ..
        } = &self.state
        {
            if consumer.state() == ARMED {
                event.withdraw(consumer);
            }
        }
    }
}
