//! Programs and data files fetched over HTTP by their sha256: from the coordinator's
//! `GET /artifacts/{sha256}` (or a cache or CDN in front of it), following its redirect
//! to an external URL (an object store) where the artifact was linked rather than
//! uploaded. Whatever answers, the content is bounded and checked against its sha256: a
//! tampered artifact is refused. It is streamed to a file and hashed on the way, never
//! whole in memory, and a file left part-way by an earlier attempt is resumed (`Range`).

use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// Redirects followed at most.
const MAX_REDIRECTS: usize = 5;
/// The longest a whole download may take.
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(600);

/// Why a download failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DownloadError {
    /// It could not be fetched (what went wrong, with the URL).
    #[error("{0}")]
    Fetch(String),
    /// What came is not the artifact named: its sha256 differs.
    #[error("{url} sent content whose sha256 is {got}, not {want}")]
    Mismatch {
        /// Where it came from.
        url: String,
        /// The hash wanted.
        want: String,
        /// The hash of what came.
        got: String,
    },
}

/// An HTTP(S) client for artifacts (reqwest: HTTP/1.1, TLS by rustls, at most
/// [`MAX_REDIRECTS`] redirects followed, a connection within 10 s).
#[derive(Clone)]
pub(crate) struct Downloader {
    client: reqwest::Client,
}

impl Downloader {
    /// A client trusting the web's roots and, when given, the CA certificates (PEM) of a
    /// TLS coordinator (one that cannot be read is left out, with a warning: the gRPC
    /// connection, which reads it too, says what is wrong).
    pub(crate) fn new(ca: Option<&[u8]>) -> Self {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        if let Some(pem) = ca {
            for cert in CertificateDer::pem_slice_iter(pem) {
                if let Err(e) = cert
                    .map_err(|e| e.to_string())
                    .and_then(|c| roots.add(c).map_err(|e| e.to_string()))
                {
                    tracing::warn!(error = %e, "a CA certificate left out of artifact downloads");
                }
            }
        }
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        let client = reqwest::Client::builder()
            .use_preconfigured_tls(tls)
            .redirect(reqwest::redirect::Policy::limited(MAX_REDIRECTS))
            .connect_timeout(Duration::from_secs(10))
            .build()
            .expect("a client of these settings builds");
        Downloader { client }
    }

    /// The artifact of sha256 `sha` from `url` into the file `into`, at most `most` bytes,
    /// checked. What `into` holds already (an attempt broken off) is kept and the rest
    /// asked for with `Range` (a server that answers the whole content starts it afresh);
    /// a file that is not the artifact is removed.
    ///
    /// # Errors
    /// It could not be fetched or written, was too big, or is not the artifact named.
    pub(crate) async fn fetch(
        &self,
        url: &str,
        sha: &str,
        most: u64,
        into: &Path,
    ) -> Result<(), DownloadError> {
        match tokio::time::timeout(DOWNLOAD_TIMEOUT, self.follow(url, most, into)).await {
            Ok(Ok((got, from))) if got != sha => {
                let _ = std::fs::remove_file(into);
                Err(DownloadError::Mismatch {
                    url: from,
                    want: sha.to_string(),
                    got,
                })
            }
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(DownloadError::Fetch(e)),
            Err(_) => Err(DownloadError::Fetch(format!(
                "{url}: no whole answer within {} s",
                DOWNLOAD_TIMEOUT.as_secs()
            ))),
        }
    }

    /// Fetches the body at `url`, after its redirects, onto what `into` holds; the sha256 of
    /// the whole file and the URL it came from.
    async fn follow(&self, url: &str, most: u64, into: &Path) -> Result<(String, String), String> {
        use sha2::Digest;
        let file_error = |e: std::io::Error| format!("{}: {e}", into.display());
        let (mut hasher, have) = hash_of(into).map_err(file_error)?;
        let mut request = self.client.get(url);
        if have > 0 {
            request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
        }
        let mut response = (request.send().await)
            .map_err(|e| format!("{url}: {}", tourney_model::error_chain(&e)))?;
        let from = response.url().to_string();
        let status = response.status();
        // Nothing after what is there: it is whole (a fetch stopped before its rename).
        if status == reqwest::StatusCode::RANGE_NOT_SATISFIABLE && have > 0 {
            return Ok((tourney_model::hex(&hasher.finalize()), from));
        }
        if !status.is_success() {
            return Err(format!("{from}: {status}"));
        }
        // The rest after what is there, or (a server without ranges) all of it.
        let resumed = status == reqwest::StatusCode::PARTIAL_CONTENT && have > 0;
        let mut done = if resumed { have } else { 0 };
        if !resumed {
            hasher = sha2::Sha256::new();
        }
        if let Some(n) = response.content_length()
            && done + n > most
        {
            return Err(format!("{from}: {} bytes, more than {most}", done + n));
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(resumed)
            .write(true)
            .truncate(!resumed)
            .open(into)
            .map_err(file_error)?;
        while let Some(data) = (response.chunk().await).map_err(|e| format!("{from}: {e}"))? {
            done += data.len() as u64;
            if done > most {
                drop(file);
                let _ = std::fs::remove_file(into);
                return Err(format!("{from}: more than {most} bytes"));
            }
            hasher.update(&data);
            file.write_all(&data).map_err(file_error)?;
        }
        file.flush().map_err(file_error)?;
        Ok((tourney_model::hex(&hasher.finalize()), from))
    }
}

/// The sha256 of the file at `path`, read in pieces (never whole in memory).
///
/// # Errors
/// It cannot be read.
pub(crate) fn sha256_of_file(path: &Path) -> std::io::Result<String> {
    tourney_model::sha256_of_reader(std::fs::File::open(path)?)
}

/// The sha256 state and length of what `path` holds (nothing when it is missing), read in
/// pieces.
fn hash_of(path: &Path) -> std::io::Result<(sha2::Sha256, u64)> {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    let length = match std::fs::File::open(path) {
        Ok(file) => tourney_model::hash_reader(&mut hasher, file)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(e) => return Err(e),
    };
    Ok((hasher, length))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A loopback HTTP server answering `GET /good` with `good`, `/bad` with other bytes,
    /// `/moved` with a redirect to `/good`, `/big` with a large Content-Length; its
    /// address and the count of requests it served.
    pub(crate) fn server(
        good: &'static [u8],
    ) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::{BufRead, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let served = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = std::sync::Arc::clone(&served);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                while reader.read_line(&mut String::new()).is_ok_and(|n| n > 2) {}
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                let (status, extra, body): (&str, String, &[u8]) = match path.as_str() {
                    p if p.ends_with("/good") || p.len() > 60 => ("200 OK", String::new(), good),
                    "/bad" => ("200 OK", String::new(), b"tampered!"),
                    "/moved" => ("302 Found", "Location: /good\r\n".into(), b""),
                    "/big" => ("200 OK", String::new(), b""),
                    "/done" => ("416 Range Not Satisfiable", String::new(), b""),
                    _ => ("404 Not Found", String::new(), b""),
                };
                let length = if path == "/big" { 1 << 30 } else { body.len() };
                let mut stream = stream;
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\n{extra}Content-Length: {length}\r\nConnection: close\r\n\r\n"
                );
                let _ = stream.write_all(body);
            }
        });
        (addr, served)
    }

    #[tokio::test]
    async fn what_comes_is_streamed_to_a_file_checked_by_its_hash_and_bounded() {
        let good: &'static [u8] = b"the real engine";
        let sha = tourney_model::sha256_hex(good);
        let (addr, _) = server(good);
        let downloader = Downloader::new(None);
        let url = |p: &str| format!("http://{addr}{p}");
        let dir = tempfile::tempdir().unwrap();
        let into = dir.path().join("artifact.part");
        downloader
            .fetch(&url("/good"), &sha, 1 << 20, &into)
            .await
            .unwrap();
        assert_eq!(std::fs::read(&into).unwrap(), good);
        assert_eq!(sha256_of_file(&into).unwrap(), sha);
        // A redirect (as from the coordinator to an object store) is followed.
        std::fs::remove_file(&into).unwrap();
        downloader
            .fetch(&url("/moved"), &sha, 1 << 20, &into)
            .await
            .unwrap();
        assert_eq!(std::fs::read(&into).unwrap(), good);
        // A part left by a broken download, from a server that sends the whole content
        // again: started afresh, not appended to.
        std::fs::write(&into, b"the real").unwrap();
        downloader
            .fetch(&url("/good"), &sha, 1 << 20, &into)
            .await
            .unwrap();
        assert_eq!(std::fs::read(&into).unwrap(), good);
        // A part that is the whole (a fetch stopped before its rename): nothing comes
        // after it, and it is kept as it is the artifact.
        downloader
            .fetch(&url("/done"), &sha, 1 << 20, &into)
            .await
            .unwrap();
        assert_eq!(std::fs::read(&into).unwrap(), good);
        // A tampered artifact is refused, naming where it came from, and not kept.
        match downloader.fetch(&url("/bad"), &sha, 1 << 20, &into).await {
            Err(DownloadError::Mismatch { url: from, .. }) => assert!(from.ends_with("/bad")),
            other => panic!("{other:?}"),
        }
        assert!(!into.exists());
        let e = downloader
            .fetch(&url("/big"), &sha, 1 << 20, &into)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("more than 1048576"), "{e}");
        let e = downloader
            .fetch(&url("/gone"), &sha, 1 << 20, &into)
            .await
            .unwrap_err();
        assert!(e.to_string().contains("404"), "{e}");
    }
}
