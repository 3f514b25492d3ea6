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
    let mut stream = TcpStream::connect(host_port)?;
    let body = body.unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {host_port}\r\nConnection: close\r\n\
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
    Ok((code, String::from_utf8_lossy(&body).into_owned()))
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
