//! TLS under the HTTP/2 connections that watch a fleet: rustls' unbuffered client, with the bytes
//! in flight held here — and only while they are.
//!
//! rustls' buffered connection keeps a read buffer of at least 4 KiB for each connection's whole
//! life (39 MiB for 10,000 watched clusters, the largest single thing a watching fleet held
//! after its objects). A watch connection is idle nearly always: here a record's bytes are
//! kept only until the record is whole and decrypted, its plaintext until the HTTP/2 client has
//! read it, and what is encrypted until the socket took it; between records the stream holds no
//! allocation. The handshake, and every check on what the server sends during it, are rustls'
//! own; this is the buffering around them, bounded: a record or handshake message is at most
//! what TLS allows ([`MAX_INCOMING`]), and a read takes only what rustls asks for. After a TLS
//! 1.3 handshake the records are sealed and opened here with the keys rustls agreed, and the
//! rest of its state is let go (`records.rs`).
//! Measured: docs/performance.md, "TLS that holds nothing between records" and "The fifth
//! pass".

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use rustls::client::UnbufferedClientConnection;
use rustls::pki_types::ServerName;
use rustls::unbuffered::{ConnectionState, UnbufferedStatus};
use rustls::{ContentType, ProtocolVersion};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The most a peer may make us hold of undecrypted bytes: a handshake message may be 64 KiB
/// (rustls' own limit) spread over records, each at most 16 KiB and 2 KiB of overhead.
pub const MAX_INCOMING: usize = 0xffff + 2 * (5 + 16_384 + 2_048);
/// The most read from the socket at once: one whole record of the largest size.
const READ: usize = 5 + 16_384 + 256;
const _: () = assert!(READ < MAX_INCOMING);
/// The most plaintext encrypted per write: one record's worth.
const WRITE: usize = 16_384;

mod encode;
mod records;

use encode::{Short, queue};
use records::{Content, Records};

/// A TLS client stream over `IO` that holds no buffer between records.
pub struct Lean<IO> {
    io: IO,
    session: Session,
    /// The protocol ALPN settled on, once rustls is gone.
    alpn: Option<&'static [u8]>,
    /// TLS bytes read, not yet processed: the start of a record waiting for its end.
    incoming: Vec<u8>,
    /// Decrypted, not yet read.
    plain: Vec<u8>,
    plain_at: usize,
    /// Encrypted (records and alerts), not yet written.
    outgoing: Vec<u8>,
    out_at: usize,
    /// The peer closed (close_notify, or the end of its stream): once `plain` is read, reads
    /// end.
    peer_closed: bool,
    /// Our close_notify is queued.
    closing: bool,
}

/// Who protects the records.
enum Session {
    /// rustls: during the handshake, and after it for TLS 1.2 or a configuration that keeps its
    /// secrets in (`enable_secret_extraction` off, as where sessions are resumed).
    Rustls(Box<UnbufferedClientConnection>),
    /// TLS 1.3 after the handshake: its two traffic keys, and nothing else of rustls' state.
    Own(Box<Records>),
    /// Between the two, for the instant of the hand-over.
    Gone,
}

/// The protocols an HTTP/2 connection offers (`h2`, and `http/1.1` so that a refusal is
/// visible and not a TLS error); the one chosen outlives rustls' state.
pub const OFFERED: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// What to give rustls where it may send application data.
#[derive(Clone, Copy)]
enum Give<'a> {
    Nothing,
    /// At most one record of these bytes.
    Data(&'a [u8]),
    CloseNotify,
}

/// One state of rustls' state machine, as this stream acts on it.
enum Step {
    /// Something was queued to send; ask again.
    Again,
    Data,
    /// The handshake needs more from the peer.
    Blocked,
    /// Application data may be sent (nothing was given).
    Writable,
    /// So much of what was given was encrypted and queued (0 for close_notify).
    Wrote(usize),
    PeerClosed,
    Closed,
}

fn invalid(e: rustls::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

impl<IO: AsyncRead + AsyncWrite + Unpin> Lean<IO> {
    /// Connects: the whole handshake, over `io`, as `config` says, to the server `name`.
    pub async fn connect(
        config: Arc<rustls::ClientConfig>,
        name: ServerName<'static>,
        io: IO,
    ) -> io::Result<Lean<IO>> {
        let own = config.enable_secret_extraction;
        let conn = UnbufferedClientConnection::new(config, name).map_err(invalid)?;
        let mut lean = Lean {
            io,
            session: Session::Rustls(Box::new(conn)),
            alpn: None,
            incoming: Vec::new(),
            plain: Vec::new(),
            plain_at: 0,
            outgoing: Vec::new(),
            out_at: 0,
            peer_closed: false,
            closing: false,
        };
        std::future::poll_fn(|cx| lean.poll_handshake(cx)).await?;
        if own {
            lean.own_records()?;
        }
        Ok(lean)
    }

    /// The protocol ALPN settled on.
    pub fn alpn_protocol(&self) -> Option<&[u8]> {
        match &self.session {
            Session::Rustls(conn) => conn.alpn_protocol(),
            Session::Own(_) | Session::Gone => self.alpn,
        }
    }

    /// Whether the records are ours now, rustls' state let go (tests).
    #[cfg(test)]
    pub fn own(&self) -> bool {
        matches!(self.session, Session::Own(_))
    }

    /// After a TLS 1.3 handshake with one of ring's AEADs: takes the traffic keys from rustls
    /// and lets the rest of its state go (`records.rs` says why). Anything else stays rustls'.
    fn own_records(&mut self) -> io::Result<()> {
        let Session::Rustls(conn) = &self.session else {
            return Ok(());
        };
        let alpn = match conn.alpn_protocol() {
            None => None,
            Some(chosen) => match OFFERED.iter().find(|o| **o == chosen) {
                Some(offered) => Some(*offered),
                None => return Ok(()),
            },
        };
        if conn.protocol_version() != Some(ProtocolVersion::TLSv1_3) {
            return Ok(());
        }
        let Session::Rustls(conn) = std::mem::replace(&mut self.session, Session::Gone) else {
            return Ok(());
        };
        // What rustls would keep to follow tickets and key updates goes: `records.rs` does
        // without it.
        let (secrets, _) = conn.dangerous_into_kernel_connection().map_err(invalid)?;
        self.session = Session::Own(Box::new(Records::new(secrets).map_err(invalid)?));
        self.alpn = alpn;
        Ok(())
    }

    /// Bytes this stream holds now, in its own buffers (tests).
    #[cfg(test)]
    pub fn held(&self) -> usize {
        let records = match &self.session {
            Session::Own(records) => records.held(),
            Session::Rustls(_) | Session::Gone => 0,
        };
        self.incoming.capacity() + self.plain.capacity() + self.outgoing.capacity() + records
    }

    fn poll_handshake(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            let step = self.process()?;
            // What the handshake queued goes before anything is awaited from the server.
            ready!(self.poll_send(cx))?;
            match step {
                Step::Writable => return Poll::Ready(Ok(())),
                Step::PeerClosed | Step::Closed => {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the server closed the TLS connection during its handshake",
                    )));
                }
                Step::Data => {}
                Step::Again | Step::Blocked | Step::Wrote(_) => {
                    if ready!(self.poll_fill(cx))? == 0 {
                        return Poll::Ready(Err(io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            "the server closed the connection during the TLS handshake",
                        )));
                    }
                }
            }
        }
    }

    /// Processes what was read until rustls needs more from the peer, has plaintext, the
    /// peer closed, or application data may be sent.
    fn process(&mut self) -> io::Result<Step> {
        loop {
            match self.step(Give::Nothing)? {
                Step::Again => {}
                step => return Ok(step),
            }
        }
    }

    /// One state of rustls' over what was read. Plaintext goes to `plain`; what rustls has to
    /// send (handshake messages, alerts, a key update's answer) is queued in `outgoing`, and so
    /// is what `give` says, encrypted, when application data may be sent.
    fn step(&mut self, give: Give<'_>) -> io::Result<Step> {
        let conn = match &mut self.session {
            Session::Rustls(conn) => conn,
            Session::Own(_) => return self.step_own(give),
            Session::Gone => return Err(io::Error::other("TLS was lost in its hand-over")),
        };
        let UnbufferedStatus { mut discard, state } = conn.process_tls_records(&mut self.incoming);
        let step = match state.map_err(invalid)? {
            ConnectionState::ReadTraffic(mut traffic) => {
                while let Some(record) = traffic.next_record() {
                    let record = record.map_err(invalid)?;
                    discard += record.discard;
                    self.plain.extend_from_slice(record.payload);
                }
                Step::Data
            }
            ConnectionState::EncodeTlsData(mut encode) => {
                queue(&mut self.outgoing, 1024, |out| {
                    encode.encode(out).map_err(Short::from)
                })?;
                Step::Again
            }
            // Queued in `outgoing`, which is written before anything queued after it.
            ConnectionState::TransmitTlsData(transmit) => {
                transmit.done();
                Step::Again
            }
            ConnectionState::BlockedHandshake => Step::Blocked,
            ConnectionState::WriteTraffic(mut traffic) => match give {
                Give::Nothing => Step::Writable,
                Give::Data(data) => {
                    let data = &data[..data.len().min(WRITE)];
                    queue(&mut self.outgoing, data.len() + 64, |out| {
                        traffic.encrypt(data, out).map_err(Short::from)
                    })?;
                    Step::Wrote(data.len())
                }
                Give::CloseNotify => {
                    queue(&mut self.outgoing, 64, |out| {
                        traffic.queue_close_notify(out).map_err(Short::from)
                    })?;
                    Step::Wrote(0)
                }
            },
            ConnectionState::PeerClosed => Step::PeerClosed,
            ConnectionState::Closed => Step::Closed,
            _ => return Err(io::Error::other("a TLS state a client never reaches")),
        };
        self.discard(discard);
        if matches!(step, Step::PeerClosed | Step::Closed) {
            self.peer_closed = true;
        }
        Ok(step)
    }

    /// [`Lean::step`] with the records ours: the next whole record read is opened, else what
    /// `give` says is sealed.
    fn step_own(&mut self, give: Give<'_>) -> io::Result<Step> {
        let Session::Own(records) = &mut self.session else {
            return Err(io::Error::other("TLS was lost in its hand-over"));
        };
        let step = match give {
            Give::Nothing => match Records::whole(&self.incoming)? {
                None => Step::Writable,
                Some(length) => {
                    let opened = records.open(&mut self.incoming[..length], &mut self.plain)?;
                    self.discard(length);
                    match opened {
                        Content::Data => Step::Data,
                        Content::Nothing => Step::Again,
                        Content::Closed => {
                            self.peer_closed = true;
                            Step::PeerClosed
                        }
                    }
                }
            },
            Give::Data(_) if self.closing => return Err(io::ErrorKind::BrokenPipe.into()),
            Give::Data(data) => {
                let data = &data[..data.len().min(WRITE)];
                records.seal(ContentType::ApplicationData, data, &mut self.outgoing)?;
                Step::Wrote(data.len())
            }
            Give::CloseNotify => {
                // A warning-level close_notify.
                records.seal(ContentType::Alert, &[1, 0], &mut self.outgoing)?;
                Step::Wrote(0)
            }
        };
        Ok(step)
    }

    /// Drops `n` processed bytes from the front of `incoming`; its allocation goes with its
    /// last byte.
    fn discard(&mut self, n: usize) {
        if n >= self.incoming.len() {
            self.incoming = Vec::new();
        } else if n > 0 {
            self.incoming.drain(..n);
        }
    }

    /// Reads what the socket has (at most one record's worth) after what waits in `incoming`;
    /// Ready(0) at the end of the stream.
    fn poll_fill(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        if self.incoming.len() >= MAX_INCOMING {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("more than {MAX_INCOMING} bytes of TLS without a whole record"),
            )));
        }
        // Read on the stack: a connection waiting for its peer holds nothing.
        let mut room = [std::mem::MaybeUninit::<u8>::uninit(); READ];
        let want = READ.min(MAX_INCOMING - self.incoming.len());
        let mut buf = ReadBuf::uninit(&mut room[..want]);
        ready!(Pin::new(&mut self.io).poll_read(cx, &mut buf))?;
        let read = buf.filled();
        self.incoming.extend_from_slice(read);
        Poll::Ready(Ok(read.len()))
    }

    /// Writes what is queued; Ready once all of it is written.
    fn poll_send(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.out_at < self.outgoing.len() {
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &self.outgoing[self.out_at..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.out_at += n;
        }
        self.outgoing = Vec::new();
        self.out_at = 0;
        Poll::Ready(Ok(()))
    }

    /// Hands out decrypted bytes waiting in `plain`, if any.
    fn take_plain(&mut self, buf: &mut ReadBuf<'_>) -> bool {
        let waiting = &self.plain[self.plain_at..];
        if waiting.is_empty() {
            return false;
        }
        let n = waiting.len().min(buf.remaining());
        buf.put_slice(&waiting[..n]);
        self.plain_at += n;
        if self.plain_at == self.plain.len() {
            self.plain = Vec::new();
            self.plain_at = 0;
        }
        true
    }

    /// Encrypts up to one record of `data` into `outgoing`: how much it took.
    fn encrypt(&mut self, cx: &mut Context<'_>, data: &[u8]) -> io::Result<usize> {
        loop {
            match self.step(Give::Data(data))? {
                Step::Wrote(n) => return Ok(n),
                Step::Again => {}
                // Records read but not yet asked for, or the peer's close: kept for the next
                // read, which is told.
                Step::Data | Step::PeerClosed => cx.waker().wake_by_ref(),
                Step::Closed => return Err(io::ErrorKind::BrokenPipe.into()),
                Step::Blocked | Step::Writable => {
                    return Err(io::Error::other(
                        "TLS is not ready to send application data",
                    ));
                }
            }
        }
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncRead for Lean<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.take_plain(buf) || this.peer_closed {
                return Poll::Ready(Ok(()));
            }
            let step = this.process()?;
            // What rustls answers on its own (a key update) goes out when the socket takes it.
            if let Poll::Ready(Err(e)) = this.poll_send(cx) {
                return Poll::Ready(Err(e));
            }
            match step {
                Step::Data | Step::PeerClosed | Step::Closed => {}
                Step::Again | Step::Blocked | Step::Writable | Step::Wrote(_) => {
                    if ready!(this.poll_fill(cx))? == 0 {
                        // The end without close_notify: HTTP/2 frames say themselves whether
                        // they were cut, as for hyper-rustls.
                        this.peer_closed = true;
                    }
                }
            }
        }
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> AsyncWrite for Lean<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        // What is queued goes first: at most one record waits here.
        ready!(this.poll_send(cx))?;
        if data.is_empty() {
            return Poll::Ready(Ok(0));
        }
        let taken = this.encrypt(cx, data)?;
        // Written now if the socket takes it, else by the next write or flush.
        if let Poll::Ready(Err(e)) = this.poll_send(cx) {
            return Poll::Ready(Err(e));
        }
        Poll::Ready(Ok(taken))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_send(cx))?;
        Pin::new(&mut this.io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !this.closing {
            this.closing = true;
            // Records still unread are taken on the way (and given up, as a closed socket
            // gives them up); a connection that cannot send one closes without it.
            while let Ok(Step::Again | Step::Data | Step::PeerClosed) = this.step(Give::CloseNotify)
            {
            }
        }
        ready!(this.poll_send(cx))?;
        Pin::new(&mut this.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests;
