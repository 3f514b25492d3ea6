//! Where an artifact may be linked: workers issue GETs to a linked URL (the coordinator's
//! `/artifacts/<sha256>` redirects them there), so a URL that names, or resolves to, one of
//! the fleet's own internal addresses (loopback, private, link-local where cloud metadata
//! answers, and the like) is refused unless the operator allows its host
//! (`coordinator --allow-link-host`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, ToSocketAddrs};

/// The host of an `http://` or `https://` URL (without user, port or brackets),
/// lowercase; `None` when there is none.
pub(crate) fn host_of(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split_once(']')?.0,
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Why an address is one of the fleet's own, if it is.
fn internal(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => internal_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => internal_v4(v4),
            None => internal_v6(v6),
        },
    }
}

fn internal_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("loopback")
    } else if ip.is_link_local() {
        Some("link-local (where cloud metadata answers)")
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        Some("private")
    } else if ip.is_unspecified() || a == 0 || ip.is_broadcast() || ip.is_multicast() {
        Some("not a host's")
    } else {
        None
    }
}

fn internal_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("loopback")
    } else if first & 0xffc0 == 0xfe80 {
        Some("link-local (where cloud metadata answers)")
    } else if first & 0xfe00 == 0xfc00 {
        Some("private")
    } else if ip.is_unspecified() || ip.is_multicast() {
        Some("not a host's")
    } else {
        None
    }
}

/// Why workers must not be sent to `url`, if they must not: its host is internal, or
/// resolves (here, now) to an internal address. A host in `allowed` passes as it is; a
/// name that does not resolve here passes too (the workers' resolver may know it).
pub(crate) fn refused(url: &str, allowed: &[String]) -> Option<String> {
    let host = host_of(url)?;
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(&host)) {
        return None;
    }
    let says = |what: &str| {
        Some(format!(
            "url {url:?}: its host {host} is {what}; workers are not sent to the fleet's own \
             addresses (the operator may allow it: coordinator --allow-link-host {host})"
        ))
    };
    if let Ok(ip) = host.parse::<IpAddr>() {
        return internal(ip).and_then(says);
    }
    let local_name = ["localhost", ".localhost", ".internal", ".local"]
        .iter()
        .any(|suffix| host == suffix.trim_start_matches('.') || host.ends_with(suffix));
    if local_name {
        return says("a local name");
    }
    let resolved = (host.as_str(), 443).to_socket_addrs().ok()?;
    for address in resolved {
        if let Some(what) = internal(address.ip()) {
            return says(&format!("resolved to {} ({what})", address.ip()));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_is_read_past_users_ports_and_brackets() {
        for (url, host) in [
            ("https://objects.example/nets/a.bin", "objects.example"),
            ("http://user:pw@Objects.Example:8080/x", "objects.example"),
            ("http://[::1]:7070/artifacts", "::1"),
            ("https://10.0.0.5?x=1", "10.0.0.5"),
        ] {
            assert_eq!(host_of(url).as_deref(), Some(host), "{url}");
        }
        assert_eq!(host_of("https:///x"), None);
    }

    #[test]
    fn internal_addresses_and_names_are_refused_unless_allowed() {
        for url in [
            "http://127.0.0.1:7070/artifacts/x",
            "http://169.254.169.254/latest/meta-data/",
            "http://10.1.2.3/net.bin",
            "http://192.168.0.10/net.bin",
            "http://172.16.0.1/net.bin",
            "http://100.64.0.1/net.bin",
            "http://0.0.0.0/net.bin",
            "http://[::1]/net.bin",
            "http://[fe80::1]/net.bin",
            "http://[fd00::1]/net.bin",
            "http://[::ffff:127.0.0.1]/net.bin",
            "http://localhost:9000/net.bin",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://minio.local/net.bin",
        ] {
            let why = refused(url, &[]).unwrap_or_else(|| panic!("{url} passed"));
            assert!(why.contains("--allow-link-host"), "{why}");
        }
        let minio = ["10.1.2.3".to_string()];
        assert_eq!(refused("http://10.1.2.3/net.bin", &minio), None);
        for url in [
            "https://8.8.8.8/net.bin",
            "https://[2001:4860::8888]/net.bin",
        ] {
            assert_eq!(refused(url, &[]), None, "{url}");
        }
    }
}
