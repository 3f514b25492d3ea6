//! Plain HTTP on loopback for tests: free ports and one-shot requests.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};

/// A free loopback port (released for the caller to bind).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a loopback port")
}

/// One HTTP/1.1 request, sending `body` as JSON when given; the status code and the body.
/// The body is read by its `Content-Length` (some servers, chromedriver among them, keep the
/// connection open), or to the end of the stream; it must not be chunked.
///
/// # Errors
/// The connection failed, or the response is not HTTP.
pub fn request(
    method: &str,
    host_port: &str,
    path: &str,
    body: Option<&str>,
) -> std::io::Result<(u16, String)> {
    request_with(method, host_port, path, &[], body).map(|(code, _, body)| (code, body))
}

/// [`request`] with more `headers`; the status code, the response's head (status line and
/// headers) and its body.
///
/// # Errors
/// The connection failed, or the response is not HTTP.
pub fn request_with(
    method: &str,
    host_port: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> std::io::Result<(u16, String, String)> {
    let mut stream = TcpStream::connect(host_port)?;
    let body = body.unwrap_or_default();
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host_port}\r\nConnection: close\r\n{extra}\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut response = Vec::new();
    let mut buf = [0u8; 16 << 10];
    let head_end = loop {
        if let Some(at) = response.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = stream.read(&mut buf)?;
        if n == 0 {
            return Err(std::io::Error::other(
                "the connection closed before the headers ended",
            ));
        }
        response.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&response[..head_end]).into_owned();
    let code = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP response: {head}")))?;
    let length = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<usize>().ok())?
    });
    let mut body = response.split_off(head_end + 4);
    match length {
        Some(length) => {
            while body.len() < length {
                let n = stream.read(&mut buf)?;
                if n == 0 {
                    return Err(std::io::Error::other("the connection closed mid-body"));
                }
                body.extend_from_slice(&buf[..n]);
            }
            body.truncate(length);
        }
        None => {
            stream.read_to_end(&mut body)?;
        }
    }
    Ok((code, head, String::from_utf8_lossy(&body).into_owned()))
}

/// `GET path` over HTTP/1.0 (so the body is never chunked): the status line and the body.
///
/// # Errors
/// The connection failed.
pub fn get(host_port: &str, path: &str) -> std::io::Result<(String, String)> {
    let mut stream = TcpStream::connect(host_port)?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {host_port}\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.lines().next().unwrap_or_default().to_string();
    Ok((status, body.to_string()))
}

/// One request a [`Receiver`] took: its request line and headers, and its body.
#[derive(Clone, PartialEq, Eq)]
pub struct Received {
    /// The request line and the headers, as sent.
    pub head: String,
    /// The body.
    pub body: Vec<u8>,
}

impl std::fmt::Debug for Received {
    /// Its head and its body as text: what a failing test shows.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}\n\n{}",
            self.head,
            String::from_utf8_lossy(&self.body)
        )
    }
}

impl Received {
    /// The value of header `name` (any case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim().eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }
}

/// An HTTP receiver on a loopback port (webhooks' far end): it answers each request with
/// the next of its statuses (the last one from then on) and keeps what it took.
pub struct Receiver {
    /// Its port.
    pub port: u16,
    taken: std::sync::Arc<std::sync::Mutex<Vec<Received>>>,
}

impl Receiver {
    /// A receiver on `listener` (bind it to port 0, or to a port that was down).
    pub fn start(listener: TcpListener, statuses: &[u16]) -> Receiver {
        let port = listener.local_addr().expect("bound").port();
        let taken: std::sync::Arc<std::sync::Mutex<Vec<Received>>> = std::sync::Arc::default();
        let (kept, statuses) = (std::sync::Arc::clone(&taken), statuses.to_vec());
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(mut stream) = stream else {
                    return;
                };
                let Some(received) = read_request(&mut stream) else {
                    continue;
                };
                kept.lock().unwrap().push(received);
                let status = statuses[n.min(statuses.len() - 1)];
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
            }
        });
        Receiver { port, taken }
    }

    /// What it took so far.
    pub fn taken(&self) -> Vec<Received> {
        self.taken.lock().unwrap().clone()
    }
}

/// One request read by its `Content-Length`.
fn read_request(stream: &mut TcpStream) -> Option<Received> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
        let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&data[..end]).into_owned();
        let length: usize = head
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case("content-length")
                    .then(|| v.trim().parse().ok())?
            })
            .unwrap_or(0);
        if data.len() >= end + 4 + length {
            let body = data[end + 4..end + 4 + length].to_vec();
            return Some(Received { head, body });
        }
    }
}
