//! A TCP relay in front of a server that can stop answering: frozen, it keeps every connection
//! open and forwards nothing more either way, and holds new connections open without a word —
//! a server that went quiet mid-conversation (a NATS node partitioned away, an Alertmanager
//! that hangs), as opposed to one that refuses. Cut, it closes every connection and every new
//! one at once (a node restarted, a network gone) until it is restored.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub struct Freezer {
    pub addr: SocketAddr,
    frozen: Arc<AtomicBool>,
    /// Cut: each time it is, the count grows, and the connections made before end.
    cut: Arc<tokio::sync::watch::Sender<(bool, u64)>>,
    accepting: tokio::task::JoinHandle<()>,
}

impl Freezer {
    /// Relays to `target` (`host:port`, or a URL with one) until frozen.
    pub async fn start(target: &str) -> Freezer {
        let target = target
            .rsplit("://")
            .next()
            .unwrap_or(target)
            .trim_end_matches('/')
            .to_string();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let frozen = Arc::new(AtomicBool::new(false));
        let cut = Arc::new(tokio::sync::watch::Sender::new((false, 0)));
        let (held, cutting) = (frozen.clone(), cut.clone());
        let accepting = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let mut cut = cutting.subscribe();
                if cut.borrow_and_update().0 {
                    continue; // closed at once
                }
                let (target, frozen) = (target.clone(), held.clone());
                tokio::spawn(async move {
                    tokio::select! {
                        _ = relay(client, &target, frozen) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Freezer {
            addr,
            frozen,
            cut,
            accepting,
        }
    }

    /// A URL of the relay with `scheme`.
    pub fn url(&self, scheme: &str) -> String {
        format!("{scheme}://{}", self.addr)
    }

    /// From now on nothing more is forwarded, and nothing is closed.
    pub fn freeze(&self) {
        self.frozen.store(true, Ordering::SeqCst);
    }

    /// Every connection closed, and every new one until [`Freezer::restore`].
    #[allow(dead_code)] // not every test binary cuts
    pub fn cut(&self) {
        self.cut.send_modify(|(cut, times)| {
            *cut = true;
            *times += 1;
        });
    }

    /// Relaying again, to new connections.
    #[allow(dead_code)]
    pub fn restore(&self) {
        self.cut.send_modify(|(cut, _)| *cut = false);
    }
}

impl Drop for Freezer {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

async fn relay(client: TcpStream, target: &str, frozen: Arc<AtomicBool>) {
    if frozen.load(Ordering::SeqCst) {
        // Held open, never answered.
        let _held = client;
        return std::future::pending::<()>().await;
    }
    let Ok(server) = TcpStream::connect(target).await else {
        return;
    };
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    // Not spawned: a relay dropped (cut) drops both connections with it.
    let up = pump(client_read, server_write, frozen.clone());
    let down = pump(server_read, client_write, frozen);
    tokio::join!(up, down);
}

/// Copies `from` to `to` until either ends; frozen, it stops forwarding and holds both open.
async fn pump(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    frozen: Arc<AtomicBool>,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if frozen.load(Ordering::SeqCst) {
            std::future::pending::<()>().await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
