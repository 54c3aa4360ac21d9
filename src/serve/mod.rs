//! `convo serve`: a read-only web view of the store (conversations, search, one
//! conversation raw and compacted, usage), HTML made here from the same parts as the HTML
//! export, its stylesheet and one small script embedded in the binary.
//!
//! Threat model. The store holds text from agents, tools and remotes: it is data, and a
//! page showing it must not run it. Every piece is escaped (the export's `escape` and inert
//! Markdown); every response carries a Content-Security-Policy that lets a page load only
//! the server's own stylesheet and script and fetch only from the server, so even markup
//! that slipped through could not run a script, load an image or post a form elsewhere;
//! the script builds search results with `textContent`, never as HTML. The server has no
//! write endpoint: only GET and HEAD are answered, and nothing it does changes the store
//! (apart from the caches every reader keeps under `.git/convo/`) but one thing: in a lazy
//! store (`clone --lazy`), whose list includes the hub's catalog, a conversation's page
//! fetches that conversation first, once, as `show` does (`ops::lazy`). Other pages in the
//! same browser are the attackers a loopback server has: requests they send are refused on
//! `Origin`, `Sec-Fetch-Site` and, against DNS rebinding, `Host` ([`gate`]). Bound to
//! another address, a random token is required as well. Nothing here prints or reads the
//! environment: the CLI hands in the listener, the store's path, prices and the scope of
//! "this repository".

pub mod gate;
mod pages;

use std::io::Read as _;
use std::path::PathBuf;

use crate::ops::project::Scope;
use crate::ops::usage::Prices;
use crate::store::{Store, StoreError};

/// The Content-Security-Policy of every response. `style-src-attr`: the export's token
/// bars size themselves with `style="height:N%"`, numbers this server writes (no stored
/// text reaches an attribute unescaped), and an inline style can neither run nor load.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; \
                       connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Requests answered at once: a search or a long conversation on one does not hold up
/// the list on the other. Each has its own handle on the store (gix's are not `Send`).
const WORKERS: usize = 2;

/// The time now (the CLI's clock, which tests fix).
pub type Now = Box<dyn Fn() -> chrono::DateTime<chrono::Utc> + Send + Sync>;

/// What the server serves and how it checks who asks.
pub struct Site {
    pub root: PathBuf,
    pub prices: Prices,
    /// "This repository": where `convo serve` was started, for the list's filter.
    pub here: Option<Scope>,
    pub gate: gate::Gate,
    /// Now, for date filters given as a time ago (`7d`).
    pub now: Now,
    /// Who took part in each conversation, by id and the `updated` it was read at: filled
    /// as rows are shown, so a list names them without reading every conversation again.
    who: std::sync::Mutex<std::collections::HashMap<String, (String, crate::event::who::Who)>>,
    /// Held while a lazy store fetches a conversation a page opens: two workers asked for
    /// the same one fetch it once.
    fetching: std::sync::Mutex<()>,
}

impl Site {
    pub fn new(root: PathBuf, prices: Prices, here: Option<Scope>, gate: gate::Gate, now: Now) -> Site {
        Site { root, prices, here, gate, now, who: Default::default(), fetching: Default::default() }
    }
}

/// A page or a refusal.
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    /// Where a redirect goes.
    pub location: Option<String>,
    pub set_cookie: Option<String>,
}

impl Response {
    fn html(body: String) -> Response {
        Response::of(200, "text/html; charset=utf-8", body.into_bytes())
    }

    fn of(status: u16, content_type: &'static str, body: Vec<u8>) -> Response {
        Response { status, content_type, body, location: None, set_cookie: None }
    }

    fn text(status: u16, text: &str) -> Response {
        Response::of(status, "text/plain; charset=utf-8", format!("{text}\n").into_bytes())
    }

    fn redirect(to: String) -> Response {
        Response { location: Some(to), ..Response::of(303, "text/plain; charset=utf-8", Vec::new()) }
    }
}

/// Answer requests from `server` until it is closed; each worker opens the store itself.
pub fn serve(server: &tiny_http::Server, site: &Site) -> Result<(), StoreError> {
    // Fail before the first request, not in every worker.
    drop(Store::open(&site.root)?);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|_| {
                scope.spawn(move || -> Result<(), StoreError> {
                    let store = Store::open(&site.root)?;
                    while let Ok(request) = server.recv() {
                        answer(&store, site, request);
                    }
                    Ok(())
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| w.join().unwrap_or(Ok(())))
    })
}

fn header<'r>(request: &'r tiny_http::Request, name: &'static str) -> Option<&'r str> {
    request.headers().iter().find(|h| h.field.equiv(name)).map(|h| h.value.as_str())
}

fn answer(store: &Store, site: &Site, mut request: tiny_http::Request) {
    // A GET has no body; one that sends some is not read past this.
    let _ = request.as_reader().take(0).read_to_end(&mut Vec::new());
    let url = request.url().to_owned();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let params = pages::Params::parse(query);
    let cookie = header(&request, "Cookie").and_then(|c| {
        c.split(';').filter_map(|kv| kv.trim().split_once('=')).find(|(k, _)| *k == gate::COOKIE).map(|(_, v)| v)
    });
    let asked = gate::Asked {
        method: request.method().as_str(),
        host: header(&request, "Host"),
        origin: header(&request, "Origin"),
        fetch_site: header(&request, "Sec-Fetch-Site"),
        query_token: params.get("token"),
        cookie_token: cookie,
    };
    let response = match site.gate.admit(&asked) {
        Err(refusal) => {
            let (status, why) = refusal.status();
            Response::text(status, why)
        }
        Ok(set) => {
            let mut response = pages::route(store, site, path, &params);
            if set && let Some(token) = &site.gate.token {
                response.set_cookie = Some(format!("{}={token}; Path=/; HttpOnly; SameSite=Strict", gate::COOKIE));
            }
            response
        }
    };
    let head = request.method() == &tiny_http::Method::Head;
    let _ = request.respond(to_http(response, head));
}

fn to_http(response: Response, head: bool) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    let mut headers = vec![
        ("Content-Type", response.content_type.to_owned()),
        ("Content-Security-Policy", CSP.to_owned()),
        ("X-Content-Type-Options", "nosniff".to_owned()),
        ("Referrer-Policy", "no-referrer".to_owned()),
        ("Cross-Origin-Resource-Policy", "same-origin".to_owned()),
        ("Cross-Origin-Opener-Policy", "same-origin".to_owned()),
        ("X-Frame-Options", "DENY".to_owned()),
        ("Cache-Control", "no-store".to_owned()),
    ];
    headers.extend(response.location.map(|l| ("Location", l)));
    headers.extend(response.set_cookie.map(|c| ("Set-Cookie", c)));
    let body = if head { Vec::new() } else { response.body };
    let mut http = tiny_http::Response::from_data(body).with_status_code(response.status);
    for (name, value) in headers {
        if let Ok(h) = tiny_http::Header::from_bytes(name.as_bytes(), value.as_bytes()) {
            http.add_header(h);
        }
    }
    http
}
