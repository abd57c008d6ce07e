//! Distributed termination detection: Safra's algorithm (Dijkstra,
//! EWD998: message counting with colouring on *receipt*) on the token ring
//! of the reference MPI work-stealing code (`mpi_workstealing.c`), run
//! twice — once over work chunks to decide that the search is over, once
//! over control messages so that no message is left in flight at the end.
//!
//! [`TokenRing`] is the state machine of one rank, independent of how
//! messages travel: `mpi_ws` drives it with rsmpi, `hybrid` from its MPI
//! thread, `hcmpi` through hc-mpi requests. It makes no assumption about
//! the order of messages of different tags: MPI orders messages of one tag
//! between two ranks only, so the token may overtake a chunk sent before
//! it.
//!
//! # Protocol
//!
//! Ranks form a ring `0 → 1 → … → size-1 → 0`; the token only moves to the
//! right and is only handled by a rank that is *passive* (it has no local
//! work at all; the reference calls this `localWork == 0`). Every rank
//! counts, from the start, the messages it sends and receives: work chunks
//! (`chunks_sent`/`chunks_recvd`), and control messages — steal requests and
//! "no work" answers (`ctrl_sent`/`ctrl_recvd`).
//!
//! 1. Rank 0 starts with a BLACK token (a round that proves nothing).
//! 2. A rank that *receives* a chunk is tainted for chunks; one that
//!    receives a control message is tainted for control messages. Every
//!    forward of a token clears both taints: a taint means "received since
//!    this rank last passed the token on".
//! 3. A passive rank holding the token forwards it:
//!    * Search round (WHITE or BLACK token): other ranks add their chunk
//!      counts and forward BLACK if the token is BLACK or they are tainted
//!      for chunks, WHITE otherwise. Rank 0 decides when it comes back: if
//!      it is WHITE, rank 0 is not tainted for chunks and the counts balance
//!      (`send == recv`), the search is over: rank 0 turns PINK and starts a
//!      drain round; otherwise it starts a new WHITE round with its own
//!      counts.
//!    * Drain round (PINK token): the same over control messages, the taint
//!      carried as the token's `tainted` flag. A rank that has seen a PINK
//!      token sends no more steal requests but still answers them ("no
//!      work"). When a drain round comes back clean and balanced, rank 0
//!      turns RED and sends a RED token; otherwise it starts a new drain
//!      round.
//!    * RED token: the rank turns RED and forwards RED unless it is the last
//!      rank. A RED rank stops: no message is left in flight anywhere.
//! 4. After forwarding a token a rank waits for the next one from its left
//!    neighbour (unless it is RED).
//!
//! # Why it is safe
//!
//! A round's counts are taken from each rank when the token visits it. A
//! chunk counted as sent but not as received makes `send > recv`. The
//! counts can balance with a chunk in flight only if some *other* chunk is
//! counted as received but not as sent: sent after its sender's visit and
//! received before its receiver's visit. That receiver then got it after
//! the round began at its left, that is, since it last passed the token on,
//! so it is tainted when the token reaches it and the round comes back
//! BLACK (rank 0's own receipts show up as rank 0's taint). The counts are
//! monotone, so a balanced, clean round means no chunk was in flight and
//! every rank was passive at its visit with nothing arriving. A passive
//! rank with no chunk in flight to it stays passive, so the search is over.
//! The drain round is the same argument over control messages, which the
//! now permanently passive ranks can only answer. The unit tests check it
//! against a simulation that delivers messages of different tags out of
//! order and against the overtaking scenario that a sender-only colouring
//! gets wrong.
//!
//! With one rank there is no ring: the rank is done as soon as it is
//! passive.

/// Color of a rank or of the token (the reference's `enum colors`). A
/// rank is WHITE (searching), PINK (draining) or RED (done); a search-round
/// token is WHITE or BLACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// A search round that cannot decide (a rank received a chunk since it
    /// last passed the token on).
    Black = 0,
    /// Searching; a search-round token with nothing to report.
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
    /// Drain round: a rank received a control message since it last
    /// passed the token on.
    pub tainted: bool,
}

/// Number of `u64` words of an encoded token.
pub const TOKEN_WORDS: usize = 4;

impl Token {
    /// Wire form: color, send count, receive count, taint.
    pub fn encode(&self) -> Vec<u64> {
        vec![
            self.color as u64,
            self.send_count,
            self.recv_count,
            u64::from(self.tainted),
        ]
    }

    /// From the wire form; `None` if malformed.
    pub fn decode(words: &[u64]) -> Option<Token> {
        match *words {
            [color, send_count, recv_count, tainted @ (0 | 1)] => Some(Token {
                color: Color::from_code(color)?,
                send_count,
                recv_count,
                tainted: tainted == 1,
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
    /// Received a chunk since it last passed the token on (step 2).
    chunk_taint: bool,
    /// Received a control message since it last passed the token on.
    ctrl_taint: bool,
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
                tainted: false,
            }),
            counts: MessageCounts::default(),
            chunk_taint: false,
            ctrl_taint: false,
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

    /// A steal request or a "no work" answer was received (step 2).
    pub fn ctrl_received(&mut self) {
        self.counts.ctrl_recvd += 1;
        self.ctrl_taint = true;
    }

    /// A chunk was sent to a thief.
    pub fn chunk_sent(&mut self) {
        self.counts.chunks_sent += 1;
    }

    /// A chunk was received (step 2).
    pub fn chunk_received(&mut self) {
        self.counts.chunks_recvd += 1;
        self.chunk_taint = true;
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
        let chunk_taint = std::mem::take(&mut self.chunk_taint);
        let ctrl_taint = std::mem::take(&mut self.ctrl_taint);
        let (chunks, ctrl) = (
            (self.counts.chunks_sent, self.counts.chunks_recvd),
            (self.counts.ctrl_sent, self.counts.ctrl_recvd),
        );
        if self.rank == 0 {
            return Some(self.next_round(token, chunk_taint, ctrl_taint));
        }
        let forward = |color, (sent, recvd): (u64, u64), tainted| Token {
            color,
            send_count: token.send_count + sent,
            recv_count: token.recv_count + recvd,
            tainted,
        };
        match token.color {
            Color::White | Color::Black => {
                let black = token.color == Color::Black || chunk_taint;
                let color = if black { Color::Black } else { Color::White };
                Some(forward(color, chunks, false))
            }
            Color::Pink => {
                self.color = Color::Pink;
                Some(forward(Color::Pink, ctrl, token.tainted || ctrl_taint))
            }
            Color::Red => {
                self.color = Color::Red;
                (self.rank != self.size - 1).then_some(token)
            }
        }
    }

    /// Rank 0: a round came back; decide, and start the next one.
    fn next_round(&mut self, token: Token, chunk_taint: bool, ctrl_taint: bool) -> Token {
        let balanced = token.send_count == token.recv_count;
        let color = match token.color {
            Color::White if !chunk_taint && balanced => Color::Pink,
            Color::White | Color::Black => Color::White,
            Color::Pink if !token.tainted && !ctrl_taint && balanced => Color::Red,
            Color::Pink | Color::Red => Color::Pink,
        };
        if color != Color::White {
            self.color = color;
        }
        let (send_count, recv_count) = if color == Color::White {
            (self.counts.chunks_sent, self.counts.chunks_recvd)
        } else {
            (self.counts.ctrl_sent, self.counts.ctrl_recvd)
        };
        Token {
            color,
            send_count,
            recv_count,
            tainted: false,
        }
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
            tainted: true,
        };
        assert_eq!(Token::decode(&t.encode()), Some(t));
        assert_eq!(Token::decode(&[9, 0, 0, 0]), None);
        assert_eq!(Token::decode(&[1, 0, 0, 2]), None);
        assert_eq!(Token::decode(&[1, 0, 0]), None);
    }

    /// The token overtakes a chunk (different tags): rank 1 passes the
    /// token on before rank 0's chunk reaches it, then hands half of the
    /// chunk to rank 2 before the token gets there. The chunk counts
    /// balance (rank 0 sent one, rank 2 received one) with rank 1 still
    /// working: only colouring on receipt sees it.
    #[test]
    fn token_overtaking_a_chunk_does_not_end_the_search() {
        let mut ring: Vec<TokenRing> = (0..3).map(|r| TokenRing::new(r, 3)).collect();
        // Rank 1 asks rank 0, which sends a chunk, then runs out of work
        // and starts a round.
        ring[1].ctrl_sent();
        ring[0].ctrl_received();
        ring[0].chunk_sent();
        let round = ring[0].passive().expect("rank 0 starts a round");
        assert_eq!(round.color, Color::White);
        // The token reaches rank 1 first: it is passive (waiting for the
        // chunk) and passes it on.
        ring[1].token_arrived(round);
        let at_2 = ring[1].passive().expect("rank 1 forwards");
        // The chunk arrives; rank 2 steals half of it.
        ring[1].chunk_received();
        ring[2].ctrl_sent();
        ring[1].ctrl_received();
        ring[1].chunk_sent();
        ring[2].chunk_received();
        // Rank 2 finishes its half and passes the token on.
        ring[2].token_arrived(at_2);
        let back = ring[2].passive().expect("rank 2 forwards");
        assert_eq!(
            (back.send_count, back.recv_count),
            (1, 1),
            "the counts balance"
        );
        ring[0].token_arrived(back);
        let next = ring[0].passive().expect("rank 0 goes on");
        assert!(
            !ring[0].stop_stealing(),
            "termination decided while rank 1 still works"
        );
        assert_eq!(next.color, Color::White, "a new search round");
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

    /// The channel (MPI tag) a message travels on: MPI orders messages of
    /// one tag between two ranks, but not messages of different tags.
    fn lane(msg: &Msg) -> usize {
        match msg {
            Msg::Chunk(_) => 0,
            Msg::Request | Msg::NoWork => 1,
            Msg::Token(_) => 2,
        }
    }

    /// A simulated work-stealing run: ranks hold units of work, split it
    /// with thieves, and messages are delivered in random order — FIFO per
    /// (sender, receiver, tag) only, so a token may overtake a chunk sent
    /// before it. Termination must be detected exactly once everything is
    /// done, with no message left in flight.
    #[test]
    fn simulated_runs_terminate_correctly() {
        let failures: Vec<u64> = (0..400_000u64)
            .filter(|&seed| std::panic::catch_unwind(|| simulate(seed)).is_err())
            .collect();
        assert!(
            failures.is_empty(),
            "{} failing seeds: {:?}",
            failures.len(),
            &failures[..failures.len().min(10)]
        );
    }

    fn simulate(seed: u64) {
        let mut rng = Lcg(seed);
        let size = 2 + (seed % 3) as usize;
        let mut rings: Vec<TokenRing> = (0..size)
            .map(|r| TokenRing::new(r as i32, size as i32))
            .collect();
        let mut work = vec![0u64; size];
        work[0] = 10 + rng.next(40);
        let mut asking = vec![false; size];
        // channels[from][to][lane]
        let mut channels: Vec<Vec<[VecDeque<Msg>; 3]>> = (0..size)
            .map(|_| (0..size).map(|_| Default::default()).collect())
            .collect();
        let send =
            |channels: &mut Vec<Vec<[VecDeque<Msg>; 3]>>, from: usize, to: usize, msg: Msg| {
                let l = lane(&msg);
                channels[from][to][l].push_back(msg);
            };
        let mut steps = 0u64;
        while !rings.iter().all(TokenRing::is_terminated) {
            steps += 1;
            assert!(steps < 1_000_000, "seed {seed}: no termination");
            let r = rng.next(size as u64) as usize;
            if rings[r].is_terminated() {
                continue;
            }
            // Deliver one message to r, if any, from a random sender and
            // tag; tokens are picked most often, so that they overtake
            // chunks and control messages sent before them.
            let from = rng.next(size as u64) as usize;
            let l = [0, 1, 2, 2, 2, 2][rng.next(6) as usize];
            if let Some(msg) = channels[from][r][l].pop_front() {
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
                            rings[r].chunk_sent();
                            send(&mut channels, r, from, Msg::Chunk(half));
                        } else {
                            rings[r].ctrl_sent();
                            send(&mut channels, r, from, Msg::NoWork);
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
            if !asking[r] && !rings[r].stop_stealing() {
                let mut victim = rng.next(size as u64) as usize;
                if victim == r {
                    victim = (victim + 1) % size;
                }
                rings[r].ctrl_sent();
                send(&mut channels, r, victim, Msg::Request);
                asking[r] = true;
            }
            if let Some(t) = rings[r].passive() {
                let right = rings[r].right() as usize;
                send(&mut channels, r, right, Msg::Token(t));
            }
            if rings[r].stop_stealing() {
                // Termination was decided: no work anywhere, no chunk in
                // flight.
                assert!(
                    work.iter().all(|&w| w == 0),
                    "seed {seed}: {size} ranks: termination decided with work left {work:?}"
                );
                assert!(
                    channels.iter().flatten().all(|lanes| lanes[0].is_empty()),
                    "seed {seed}: {size} ranks: termination decided with a chunk in flight"
                );
            }
            if rings[r].is_terminated() {
                assert!(
                    channels
                        .iter()
                        .flatten()
                        .all(|lanes| lanes[0].is_empty() && lanes[1].is_empty()),
                    "seed {seed}: {size} ranks: a rank stopped with a message in flight"
                );
            }
        }
        assert!(
            channels.iter().flatten().flatten().all(VecDeque::is_empty),
            "seed {seed}: message left at the end"
        );
    }
}
