//! Who may ask the server anything: a pure decision on a request's headers and token, so
//! it is tested without a socket.
//!
//! On the loopback (the default) the browser on this machine is the only client, but any
//! page it opens can aim requests at `127.0.0.1:PORT`: a request from another origin says
//! so in `Origin` or `Sec-Fetch-Site` and is refused, and a page that rebinds its own name
//! to 127.0.0.1 (DNS rebinding) still sends its own name as `Host`, which must be one of the
//! loopback's. Bound to another address (`--bind`), anyone who reaches it may ask: then a
//! random token is required too, in the URL (`?token=`) once and in a cookie after that.

/// The server's own names and what a request must carry.
#[derive(Debug, Clone)]
pub struct Gate {
    /// `host:port` spellings a request's `Host` may use; empty: any (a token guards it).
    pub hosts: Vec<String>,
    /// Required with every request when set.
    pub token: Option<String>,
}

/// Why a request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `Host` is missing or not one of the server's names (DNS rebinding).
    Host,
    /// `Origin` or `Sec-Fetch-Site` says another site sent it.
    Origin,
    /// The token is missing or wrong.
    Token,
    /// Anything but GET or HEAD: the server writes nothing.
    Method,
}

impl Refusal {
    /// The HTTP status and the one line a refused client is told.
    pub fn status(self) -> (u16, &'static str) {
        match self {
            Refusal::Host => (421, "refused: the Host header names another server"),
            Refusal::Origin => (403, "refused: the request comes from another origin"),
            Refusal::Token => (401, "refused: this server needs the token it printed when it started (?token=...)"),
            Refusal::Method => (405, "refused: this server is read-only"),
        }
    }
}

/// What the gate reads of a request.
#[derive(Debug, Default, Clone, Copy)]
pub struct Asked<'a> {
    pub method: &'a str,
    pub host: Option<&'a str>,
    pub origin: Option<&'a str>,
    pub fetch_site: Option<&'a str>,
    /// The `token` of the query string.
    pub query_token: Option<&'a str>,
    /// The `convo_token` cookie.
    pub cookie_token: Option<&'a str>,
}

/// The cookie that carries the token after the first request.
pub const COOKIE: &str = "convo_token";

impl Gate {
    /// `Ok(true)`: admitted on the URL's token, which the response should set as a cookie.
    pub fn admit(&self, asked: &Asked) -> Result<bool, Refusal> {
        if asked.method != "GET" && asked.method != "HEAD" {
            return Err(Refusal::Method);
        }
        let host = asked.host.map(str::trim).filter(|h| !h.is_empty()).ok_or(Refusal::Host)?;
        if !self.hosts.is_empty() && !self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
            return Err(Refusal::Host);
        }
        // A browser names the origin of a cross-origin request (and of same-origin ones
        // but GET); it must be this server as the client addressed it.
        if let Some(origin) = asked.origin
            && !origin.eq_ignore_ascii_case(&format!("http://{host}"))
        {
            return Err(Refusal::Origin);
        }
        if let Some(site) = asked.fetch_site
            && site != "same-origin"
            && site != "none"
        {
            return Err(Refusal::Origin);
        }
        let Some(token) = &self.token else { return Ok(false) };
        if asked.query_token.is_some_and(|t| same(t, token)) {
            return Ok(true);
        }
        match asked.cookie_token {
            Some(t) if same(t, token) => Ok(false),
            _ => Err(Refusal::Token),
        }
    }
}

/// Equal, in a time that does not say where they first differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback() -> Gate {
        Gate { hosts: vec!["127.0.0.1:8080".into(), "localhost:8080".into()], token: None }
    }

    fn get(host: &str) -> Asked<'_> {
        Asked { method: "GET", host: Some(host), ..Asked::default() }
    }

    #[test]
    fn the_loopback_admits_its_own_names_and_origin() {
        let gate = loopback();
        assert_eq!(gate.admit(&get("127.0.0.1:8080")), Ok(false));
        assert_eq!(gate.admit(&get("LOCALHOST:8080")), Ok(false));
        let fetch =
            Asked { origin: Some("http://127.0.0.1:8080"), fetch_site: Some("same-origin"), ..get("127.0.0.1:8080") };
        assert_eq!(gate.admit(&fetch), Ok(false));
    }

    #[test]
    fn another_origin_a_rebound_name_and_a_write_are_refused() {
        let gate = loopback();
        assert_eq!(gate.admit(&get("evil.example:8080")), Err(Refusal::Host));
        assert_eq!(gate.admit(&Asked { host: None, ..get("") }), Err(Refusal::Host));
        let cross = Asked { origin: Some("http://evil.example"), ..get("127.0.0.1:8080") };
        assert_eq!(gate.admit(&cross), Err(Refusal::Origin));
        let null = Asked { origin: Some("null"), ..get("127.0.0.1:8080") };
        assert_eq!(gate.admit(&null), Err(Refusal::Origin));
        let site = Asked { fetch_site: Some("cross-site"), ..get("127.0.0.1:8080") };
        assert_eq!(gate.admit(&site), Err(Refusal::Origin));
        let post = Asked { method: "POST", ..get("127.0.0.1:8080") };
        assert_eq!(gate.admit(&post), Err(Refusal::Method));
    }

    #[test]
    fn a_bound_server_wants_its_token_in_the_url_or_the_cookie() {
        let gate = Gate { hosts: Vec::new(), token: Some("s3cret".into()) };
        assert_eq!(gate.admit(&get("10.0.0.5:8080")), Err(Refusal::Token));
        assert_eq!(gate.admit(&Asked { query_token: Some("s3creT"), ..get("10.0.0.5:8080") }), Err(Refusal::Token));
        assert_eq!(gate.admit(&Asked { query_token: Some("s3cret"), ..get("10.0.0.5:8080") }), Ok(true));
        assert_eq!(gate.admit(&Asked { cookie_token: Some("s3cret"), ..get("10.0.0.5:8080") }), Ok(false));
    }
}
