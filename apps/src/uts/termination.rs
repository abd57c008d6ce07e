//! Distributed termination detection: the token ring of the reference MPI
//! work-stealing code (`mpi_workstealing.c`), a variant of Dijkstra's
//! colored-token algorithm with message counting.
//!
//! [`TokenRing`] is the state machine of one rank, independent of how
//! messages travel: `mpi_ws` drives it with rsmpi, `hybrid` from its MPI
//! thread, `hcmpi` through hc-mpi requests.
//!
//! # Protocol
//!
//! Ranks form a ring `0 → 1 → … → size-1 → 0`; the token only moves to the
//! right and is only handled by a rank that is *passive* (it has no local
//! work at all; the reference calls this `localWork == 0`). Every rank
//! counts the messages it sends and receives: work chunks
//! (`chunks_sent`/`chunks_recvd`), and control messages — steal requests and
//! "no work" answers (`ctrl_sent`/`ctrl_recvd`).
//!
//! 1. Initially every rank is WHITE and rank 0 holds a BLACK token.
//! 2. A rank that sends a chunk to a thief on its left (`thief < rank`),
//!    which the token may already have passed, turns BLACK.
//! 3. A passive rank holding the token forwards it:
//!    * WHITE token: rank 0 (always WHITE: nobody is on its left) restarts
//!      the count; if the token came back with `send == recv` chunks — no
//!      chunk in flight, and no rank turned BLACK on the way — the search is
//!      over and rank 0 turns PINK and sends a PINK token; otherwise it sends
//!      a new WHITE token. Other ranks forward WHITE if they are WHITE, or
//!      turn WHITE and forward BLACK.
//!    * BLACK token: rank 0 sends a new WHITE token; other ranks turn WHITE
//!      and forward BLACK.
//!    * PINK token (the clean-up wave): a PINK rank no longer sends steal
//!      requests, but still answers them ("no work"). The PINK token counts
//!      control messages; rank 0 recirculates it until `send == recv`, i.e.
//!      every steal request and every answer has been received, then turns
//!      RED and sends a RED token.
//!    * RED token: the rank turns RED and forwards RED unless it is the last
//!      rank. A RED rank stops: no message is left in flight anywhere.
//! 4. Token counts: rank 0 writes its own counts into the token it sends
//!    (control counts for PINK, chunk counts otherwise); every other rank
//!    adds its counts to the token it forwards.
//! 5. After forwarding a token a rank waits for the next one from its left
//!    neighbour (unless it is RED).
//!
//! With one rank there is no ring: the rank is done as soon as it is
//! passive.

/// Color of a rank or of the token (the reference's `enum colors`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// Possibly sent work behind the token.
    Black = 0,
    /// Nothing to report.
    White = 1,
    /// Termination detected; cleaning up control messages.
    Pink = 2,
    /// Terminated.
    Red = 3,
}

impl Color {
    fn from_code(code: u64) -> Option<Color> {
        match code {
            0 => Some(Color::Black),
            1 => Some(Color::White),
            2 => Some(Color::Pink),
            3 => Some(Color::Red),
            _ => None,
        }
    }
}

/// The termination-detection token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// Its color.
    pub color: Color,
    /// Messages sent, summed along the ring.
    pub send_count: u64,
    /// Messages received, summed along the ring.
    pub recv_count: u64,
}

/// Number of `u64` words of an encoded token.
pub const TOKEN_WORDS: usize = 3;

impl Token {
    /// Wire form: color, send count, receive count.
    pub fn encode(&self) -> Vec<u64> {
        vec![self.color as u64, self.send_count, self.recv_count]
    }

    /// From the wire form; `None` if malformed.
    pub fn decode(words: &[u64]) -> Option<Token> {
        match *words {
            [color, send_count, recv_count] => Some(Token {
                color: Color::from_code(color)?,
                send_count,
                recv_count,
            }),
            _ => None,
        }
    }
}

/// Message counters of one rank (see the protocol).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MessageCounts {
    /// Work chunks sent.
    pub chunks_sent: u64,
    /// Work chunks received.
    pub chunks_recvd: u64,
    /// Steal requests and "no work" answers sent.
    pub ctrl_sent: u64,
    /// Steal requests and "no work" answers received.
    pub ctrl_recvd: u64,
}

/// One rank's side of the token ring.
#[derive(Debug, Clone)]
pub struct TokenRing {
    rank: i32,
    size: i32,
    color: Color,
    held: Option<Token>,
    counts: MessageCounts,
}

impl TokenRing {
    /// Rank `rank` of `size` (protocol step 1).
    pub fn new(rank: i32, size: i32) -> Self {
        assert!(
            size >= 1 && (0..size).contains(&rank),
            "bad rank {rank} of {size}"
        );
        TokenRing {
            rank,
            size,
            color: Color::White,
            held: (rank == 0).then_some(Token {
                color: Color::Black,
                send_count: 0,
                recv_count: 0,
            }),
            counts: MessageCounts::default(),
        }
    }

    /// This rank's color.
    pub fn color(&self) -> Color {
        self.color
    }

    /// Termination has been detected: send no more steal requests.
    pub fn stop_stealing(&self) -> bool {
        matches!(self.color, Color::Pink | Color::Red)
    }

    /// The search is over on this rank.
    pub fn is_terminated(&self) -> bool {
        self.color == Color::Red
    }

    /// The rank tokens come from.
    pub fn left(&self) -> i32 {
        (self.rank + self.size - 1) % self.size
    }

    /// The rank tokens go to.
    pub fn right(&self) -> i32 {
        (self.rank + 1) % self.size
    }

    /// Whether a receive for the next token should be pending (step 5).
    pub fn wants_token(&self) -> bool {
        self.size > 1 && self.held.is_none() && self.color != Color::Red
    }

    /// Whether this rank holds the token.
    pub fn holds_token(&self) -> bool {
        self.held.is_some()
    }

    /// The message counters.
    pub fn counts(&self) -> MessageCounts {
        self.counts
    }

    /// A steal request or a "no work" answer was sent.
    pub fn ctrl_sent(&mut self) {
        self.counts.ctrl_sent += 1;
    }

    /// A steal request or a "no work" answer was received.
    pub fn ctrl_received(&mut self) {
        self.counts.ctrl_recvd += 1;
    }

    /// A chunk was sent to `thief` (step 2).
    pub fn chunk_sent(&mut self, thief: i32) {
        self.counts.chunks_sent += 1;
        if thief < self.rank {
            self.color = Color::Black;
        }
    }

    /// A chunk was received.
    pub fn chunk_received(&mut self) {
        self.counts.chunks_recvd += 1;
    }

    /// The token arrived from the left neighbour.
    pub fn token_arrived(&mut self, token: Token) {
        debug_assert!(self.held.is_none(), "two tokens on one rank");
        self.held = Some(token);
    }

    /// The rank is passive: handle the held token, if any (step 3). Returns
    /// the token to send to [`right`](Self::right), if one must be sent.
    pub fn passive(&mut self) -> Option<Token> {
        if self.size == 1 {
            self.color = Color::Red;
            self.held = None;
            return None;
        }
        let token = self.held.take()?;
        let root = self.rank == 0;
        let mut forward = true;
        let next = match token.color {
            Color::White => {
                if root && self.color == Color::White {
                    if token.recv_count != token.send_count {
                        Color::White
                    } else {
                        self.color = Color::Pink;
                        Color::Pink
                    }
                } else if self.color == Color::White {
                    Color::White
                } else {
                    self.color = Color::White;
                    Color::Black
                }
            }
            Color::Pink => {
                if root && token.recv_count == token.send_count {
                    self.color = Color::Red;
                    Color::Red
                } else {
                    self.color = Color::Pink;
                    Color::Pink
                }
            }
            Color::Black => {
                if root {
                    Color::White
                } else {
                    self.color = Color::White;
                    Color::Black
                }
            }
            Color::Red => {
                self.color = Color::Red;
                forward = self.rank != self.size - 1;
                Color::Red
            }
        };
        if !forward {
            return None;
        }
        let (sent, recvd) = if next == Color::Pink {
            (self.counts.ctrl_sent, self.counts.ctrl_recvd)
        } else {
            (self.counts.chunks_sent, self.counts.chunks_recvd)
        };
        Some(if root {
            Token {
                color: next,
                send_count: sent,
                recv_count: recvd,
            }
        } else {
            Token {
                color: next,
                send_count: token.send_count + sent,
                recv_count: token.recv_count + recvd,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn token_wire_round_trip() {
        let t = Token {
            color: Color::Pink,
            send_count: 7,
            recv_count: 9,
        };
        assert_eq!(Token::decode(&t.encode()), Some(t));
        assert_eq!(Token::decode(&[9, 0, 0]), None);
        assert_eq!(Token::decode(&[1, 0]), None);
    }

    #[test]
    fn single_rank_terminates_when_passive() {
        let mut r = TokenRing::new(0, 1);
        assert!(!r.wants_token());
        assert_eq!(r.passive(), None);
        assert!(r.is_terminated());
    }

    /// Tiny deterministic generator for the simulation.
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }
    }

    enum Msg {
        Chunk(u64),
        Request,
        NoWork,
        Token(Token),
    }

    /// A simulated work-stealing run: ranks hold units of work, split it
    /// with thieves, and messages are delivered in random order (FIFO per
    /// channel). Termination must be detected exactly once everything is
    /// done, with no message left in flight.
    #[test]
    fn simulated_runs_terminate_correctly() {
        for seed in 0..300u64 {
            let mut rng = Lcg(seed);
            let size = 1 + (seed % 5) as usize;
            let mut rings: Vec<TokenRing> = (0..size)
                .map(|r| TokenRing::new(r as i32, size as i32))
                .collect();
            let mut work = vec![0u64; size];
            work[0] = 50 + rng.next(200);
            let mut asking = vec![false; size];
            // channels[from][to]
            let mut channels: Vec<Vec<VecDeque<Msg>>> = (0..size)
                .map(|_| (0..size).map(|_| VecDeque::new()).collect())
                .collect();
            let mut steps = 0u64;
            while !rings.iter().all(TokenRing::is_terminated) {
                steps += 1;
                assert!(steps < 1_000_000, "seed {seed}: no termination");
                let r = rng.next(size as u64) as usize;
                if rings[r].is_terminated() {
                    continue;
                }
                // deliver one message to r, if any
                let from = rng.next(size as u64) as usize;
                if let Some(msg) = channels[from][r].pop_front() {
                    match msg {
                        Msg::Chunk(units) => {
                            rings[r].chunk_received();
                            work[r] += units;
                            asking[r] = false;
                        }
                        Msg::NoWork => {
                            rings[r].ctrl_received();
                            asking[r] = false;
                        }
                        Msg::Request => {
                            rings[r].ctrl_received();
                            if work[r] > 2 {
                                let half = work[r] / 2;
                                work[r] -= half;
                                rings[r].chunk_sent(from as i32);
                                channels[r][from].push_back(Msg::Chunk(half));
                            } else {
                                rings[r].ctrl_sent();
                                channels[r][from].push_back(Msg::NoWork);
                            }
                        }
                        Msg::Token(t) => rings[r].token_arrived(t),
                    }
                }
                if work[r] > 0 {
                    work[r] -= 1;
                    continue;
                }
                // passive
                if size > 1 && !asking[r] && !rings[r].stop_stealing() {
                    let mut victim = rng.next(size as u64) as usize;
                    if victim == r {
                        victim = (victim + 1) % size;
                    }
                    rings[r].ctrl_sent();
                    channels[r][victim].push_back(Msg::Request);
                    asking[r] = true;
                }
                if let Some(t) = rings[r].passive() {
                    let right = rings[r].right() as usize;
                    channels[r][right].push_back(Msg::Token(t));
                }
                if rings[r].is_terminated() {
                    assert!(work.iter().all(|&w| w == 0), "seed {seed}: work left");
                    assert!(
                        channels
                            .iter()
                            .flatten()
                            .all(|c| c.iter().all(|m| matches!(m, Msg::Token(_)))),
                        "seed {seed}: work or control message in flight at termination"
                    );
                }
            }
            assert!(
                channels.iter().flatten().all(VecDeque::is_empty),
                "seed {seed}: message left at the end"
            );
        }
    }
}
