//! Programs and data files fetched over HTTP by their sha256: from the coordinator's
//! `GET /artifacts/{sha256}` (or a cache or CDN in front of it), following its redirect
//! to an external URL (an object store) where the artifact was linked rather than
//! uploaded. Whatever answers, the content is bounded and checked against its sha256: a
//! tampered artifact is refused. It is streamed to a file and hashed on the way, never
//! whole in memory, and a file left part-way by an earlier attempt is resumed (`Range`).

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;

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

/// An HTTP(S) client for artifacts.
#[derive(Clone)]
pub(crate) struct Downloader {
    client: Client<HttpsConnector<HttpConnector>, Empty<Bytes>>,
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
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(Duration::from_secs(10)));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        Downloader {
            client: Client::builder(TokioExecutor::new()).build(https),
        }
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
        let mut url = url.to_string();
        let file_error = |e: std::io::Error| format!("{}: {e}", into.display());
        for _ in 0..=MAX_REDIRECTS {
            let (mut hasher, have) = hash_of(into).map_err(file_error)?;
            let uri: hyper::Uri = url.parse().map_err(|e| format!("{url}: {e}"))?;
            let mut request = hyper::Request::get(uri.clone());
            if have > 0 {
                request = request.header(hyper::header::RANGE, format!("bytes={have}-"));
            }
            let request = request
                .body(Empty::new())
                .map_err(|e| format!("{url}: {e}"))?;
            let response =
                (self.client.request(request).await).map_err(|e| format!("{url}: {e}"))?;
            let status = response.status();
            if status.is_redirection() {
                let location = (response.headers().get(hyper::header::LOCATION))
                    .and_then(|l| l.to_str().ok())
                    .ok_or_else(|| format!("{url}: {status} without a Location"))?;
                url = absolute(&uri, location);
                continue;
            }
            // Nothing after what is there: it is whole (a fetch stopped before its rename).
            if status == hyper::StatusCode::RANGE_NOT_SATISFIABLE && have > 0 {
                return Ok((tourney_model::hex(&hasher.finalize()), url));
            }
            // The rest after what is there, or (a server without ranges) all of it.
            let resumed = status == hyper::StatusCode::PARTIAL_CONTENT && have > 0;
            if !status.is_success() {
                return Err(format!("{url}: {status}"));
            }
            let mut done = if resumed { have } else { 0 };
            if !resumed {
                hasher = sha2::Sha256::new();
            }
            let declared = (response.headers().get(hyper::header::CONTENT_LENGTH))
                .and_then(|l| l.to_str().ok()?.parse::<u64>().ok());
            if declared.is_some_and(|n| done + n > most) {
                return Err(format!(
                    "{url}: {} bytes, more than {most}",
                    done + declared.unwrap_or(0)
                ));
            }
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(resumed)
                .write(true)
                .truncate(!resumed)
                .open(into)
                .map_err(file_error)?;
            let mut body = response.into_body();
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| format!("{url}: {e}"))?;
                if let Some(data) = frame.data_ref() {
                    done += data.len() as u64;
                    if done > most {
                        drop(file);
                        let _ = std::fs::remove_file(into);
                        return Err(format!("{url}: more than {most} bytes"));
                    }
                    hasher.update(data);
                    file.write_all(data).map_err(file_error)?;
                }
            }
            file.flush().map_err(file_error)?;
            return Ok((tourney_model::hex(&hasher.finalize()), url));
        }
        Err(format!("{url}: more than {MAX_REDIRECTS} redirects"))
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

/// `location` (absolute, or a path on `base`'s server) as an absolute URL.
fn absolute(base: &hyper::Uri, location: &str) -> String {
    if location.contains("://") {
        return location.to_string();
    }
    let scheme = base.scheme_str().unwrap_or("http");
    let authority = base.authority().map_or("", |a| a.as_str());
    format!("{scheme}://{authority}{location}")
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

    #[test]
    fn a_relative_location_is_on_the_same_server() {
        let base: hyper::Uri = "http://10.0.0.1:7070/artifacts/ab".parse().unwrap();
        assert_eq!(absolute(&base, "/x/y"), "http://10.0.0.1:7070/x/y");
        assert_eq!(
            absolute(&base, "https://cdn.example/z"),
            "https://cdn.example/z"
        );
    }
}
