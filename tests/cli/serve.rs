//! `convo serve` in a real browser: the binary serves a sealed store on a free port and
//! headless Chromium (as the HTML export's tests run it) loads its pages, runs their one
//! script and dumps the DOM. Refusals are plain HTTP requests, written by hand so each
//! header is the test's own.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::common::TestEnv;
use crate::common::chromium::{self, dom};
use crate::html::{tags, text};

/// A running `convo serve`, stopped when dropped.
pub(crate) struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT/` (with `?token=` on `--bind`).
    url: String,
    port: u16,
}

impl Server {
    pub(crate) fn start(env: &TestEnv, flags: &[&str]) -> Server {
        Server::start_with(env, flags, &[])
    }

    /// `start`, with `vars` added to the sealed environment.
    fn start_with(env: &TestEnv, flags: &[&str], vars: &[(&str, &str)]) -> Server {
        let mut args = vec!["serve", "--port", "0"];
        args.extend(flags);
        let mut child = env
            .command(&args)
            .envs(vars.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("convo serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim().to_owned();
        assert!(url.starts_with("http://"), "the URL first: {url:?}");
        let port = url.rsplit(':').next().unwrap().split('/').next().unwrap().parse().unwrap();
        Server { child, url, port }
    }

    fn at(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request with exactly `headers`: the status, the response's head and body.
fn request(port: u16, method: &str, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        head += &format!("{k}: {v}\r\n");
    }
    head += "Content-Length: 0\r\n\r\n";
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

pub(crate) fn get(server: &Server, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    let host = format!("127.0.0.1:{}", server.port);
    let mut all = vec![("Host", host.as_str())];
    all.extend_from_slice(headers);
    request(server.port, "GET", path, &all)
}

/// The `<body>` of a DOM, as text.
fn body_text(dom: &str) -> String {
    text(&dom[dom.find("<body").expect("a <body>")..])
}

/// Light and dark screenshots of `url`, kept under `target/tmp/serve-screenshots/`.
fn screenshots(env: &TestEnv, url: &str, name: &str) {
    chromium::screenshots(env, url, name, "serve-screenshots", "1200,900");
}

/// The `href`s of the links of `dom` whose opening tag holds `marker`.
fn links(dom: &str, marker: &str) -> Vec<String> {
    tags(dom, "a")
        .into_iter()
        .filter(|a| a.contains(marker))
        .filter_map(|a| a.split("href=\"").nth(1)?.split('"').next().map(|h| h.replace("&amp;", "&")))
        .collect()
}

/// A store with an agent's session (its usage recorded), a fork of it, and another
/// conversation with a compaction: what the pages are tried on.
fn store() -> (TestEnv, String, String) {
    let env = TestEnv::new();
    let codex = env.new_conversation("Fix the flaky parser test");
    let lines = [
        r#"{"type":"user","content":"the parser test fails one run in ten","agent":"codex"}"#,
        r#"{"type":"reasoning","content":"Probably a race in the tokenizer","agent":"codex"}"#,
        r#"{"type":"tool_call","call_id":"c1","name":"bash","arguments":{"command":"cargo test parser"},"agent":"codex"}"#,
        r#"{"type":"tool_result","call_id":"c1","content":"thread 'parser' panicked: needle mismatch","is_error":true,"agent":"codex"}"#,
        r#"{"type":"assistant","content":"Found it: the **needle** table is shared.","agent":"codex","model":"gpt-5","usage":{"input_tokens":1200,"output_tokens":300}}"#,
    ];
    env.run_stdin(&["append"], &(lines.join("\n") + "\n")).ok();
    env.run(&["fork"]).ok();
    let other = env.new_conversation("Release notes");
    env.run(&["append", "--user", "write the release notes"]).ok();
    env.run(&["append", "--tool-call", "read", "--args", r#"{"path":"CHANGELOG.md"}"#, "--call-id", "r1"]).ok();
    env.run(&["append", "--tool-result", "r1", "--content", "## 1.2\n- faster list\n- serve"]).ok();
    env.run(&["append", "--assistant", "Draft ready."]).ok();
    env.run(&["append", "--user", "ship it"]).ok();
    env.run(&["append", "--assistant", "Shipped."]).ok();
    env.run(&["compact", "--to", "0", "--summary", "Drafted the notes from CHANGELOG.md."]).ok();
    (env, codex, other)
}

/// List, filter, search as you type, open a conversation, its compacted view, a
/// placeholder's event and the usage page, each as Chromium shows it.
#[test]
fn serve_browses_lists_filters_searches_and_opens_conversations_in_chromium() {
    let (env, codex, other) = store();
    let server = Server::start(&env, &[]);

    let list = dom(&env, &server.url);
    let shown = body_text(&list);
    for text in ["Fix the flaky parser test", "Release notes", "3 of 3 conversations", &codex[..8], &other[..8]] {
        assert!(shown.contains(text), "{text:?} in the list:\n{shown}");
    }
    // The fork follows its parent, marked.
    let parent = list.find(&format!("/c/{codex}\"")).unwrap();
    let fork = list.find("class=\"sub fork\"").expect("the fork is marked");
    let release = list.find(&format!("/c/{other}\"")).unwrap();
    assert!(parent < fork, "the fork is under its parent");
    assert!(release < parent, "the newest first");
    assert!(shown.contains("codex"), "the agent column: {shown}");

    let filtered = body_text(&dom(&env, &server.at("/?agent=codex")));
    assert!(filtered.contains("2 of 3 conversations") && !filtered.contains("Release notes"), "{filtered}");
    let titled = body_text(&dom(&env, &server.at("/?q=release")));
    assert!(titled.contains("1 of 3 conversations") && titled.contains("Release notes"), "{titled}");

    // Search: the page's script asks /api/search and builds the hits (data-live says it did).
    let search = dom(&env, &server.at("/search?q=needle"));
    assert!(search.contains("data-live=\"needle\""), "the script searched: {search}");
    assert!(search.contains("<mark>needle</mark>"), "{search}");
    let hit = links(&search, "?at=").into_iter().next().expect("a hit links to its event");
    let at = dom(&env, &server.at(&hit));
    assert!(at.contains("data-view=\"raw\"") && body_text(&at).contains("needle mismatch"), "{at}");
    assert!(tags(&at, "span").iter().any(|s| s.contains("id=\"e")), "events are anchored");

    // A conversation: raw events, the tool call folded with its error marked, reasoning folded.
    let raw = dom(&env, &server.at(&format!("/c/{}", &codex[..8])));
    assert!(raw.contains("<details class=\"fold reasoning"), "reasoning folded");
    assert!(raw.contains("<span class=\"status error\">error</span>"), "the failed call marked");
    assert!(body_text(&raw).contains("Where it went") && body_text(&raw).contains("forked into"), "{raw}");

    // Compacted: the summary card and its placeholder, linking to the raw event it stands for.
    let page = dom(&env, &server.at(&format!("/c/{other}?view=compacted")));
    let shown = body_text(&page);
    assert!(shown.contains("Compaction #1") && shown.contains("Drafted the notes from CHANGELOG.md."), "{shown}");
    assert!(!shown.contains("faster list"), "the summarised tool result is raw only: {shown}");
    let goto = links(&page, "class=\"goto\"").into_iter().next().expect("a placeholder links to its event");
    let event = dom(&env, &server.at(&goto));
    assert!(body_text(&event).contains("faster list"), "the raw event opens: {event}");
    assert!(event.contains("aria-selected=\"true\">Raw events"), "on the raw view");

    let diff = body_text(&dom(&env, &server.at(&format!("/c/{other}/diff"))));
    assert!(diff.contains("diff --compacted") && diff.contains("faster list"), "{diff}");

    let usage = dom(&env, &server.at("/usage"));
    assert!(usage.contains("<svg") && usage.contains("<rect class=\"bar\""), "the chart: {usage}");
    let shown = body_text(&usage);
    for text in ["By model", "gpt-5", "1,200", "By agent", "codex", "By person", "By project"] {
        assert!(shown.contains(text), "{text:?} in the usage page:\n{shown}");
    }

    screenshots(&env, &server.url, "list");
    screenshots(&env, &server.at(&format!("/c/{other}?view=compacted")), "conversation");
}

/// A conversation written to attack its reader: script tags, handlers, `javascript:`
/// links, a frame, a meta refresh, CSS imports, terminal escapes and a 1 MB line. Each
/// would reach a loopback port the test watches, or change the page's title; none does,
/// on any page that shows it (list, raw, compacted, search as you type).
#[test]
fn a_hostile_conversation_executes_nothing_in_serve() {
    let canary = TcpListener::bind("127.0.0.1:0").unwrap();
    canary.set_nonblocking(true).unwrap();
    let c = format!("http://127.0.0.1:{}", canary.local_addr().unwrap().port());
    let env = TestEnv::new();
    let id = env.new_conversation("<script>document.title='pwned'</script><img src=x onerror=alert(1)>");
    let hostile = format!(
        "zebra <script>fetch('{c}/script');document.title='pwned'</script>\n\n<img src={c}/img onerror=\"fetch('{c}/onerror')\">\n\n\
         [click](javascript:fetch('{c}/js')) <a href=\"javascript:fetch('{c}/a')\">a</a> ![i]({c}/md-image)\n\n\
         <iframe src=\"{c}/frame\"></iframe>\n\n<meta http-equiv=\"refresh\" content=\"0;url={c}/refresh\">\n\n\
         <style>@import url({c}/css); body{{background:url({c}/bg)}}</style>\n\n\
         \u{1b}]8;;{c}/osc8\u{7}terminal link\u{1b}]8;;\u{7} \u{1b}[31mred\u{1b}[0m \u{1b}]0;title\u{7}"
    );
    env.run(&["append", "--user", &hostile]).ok();
    env.run(&[
        "append",
        "--tool-call",
        "bash",
        "--args",
        &format!(r#"{{"command":"curl {c}/args <script>x</script>"}}"#),
        "--call-id",
        "h1",
    ])
    .ok();
    let huge = format!("zebra {}", "x".repeat(1 << 20));
    let result = serde_json::json!({"type": "tool_result", "call_id": "h1", "content": huge});
    env.run_stdin(&["append"], &format!("{result}\n")).ok();
    env.run(&["append", "--assistant", &format!("<svg onload=\"fetch('{c}/svg')\"></svg> zebra")]).ok();
    env.run(&["compact", "--to", "0", "--summary", &format!("<script>fetch('{c}/summary')</script> zebra")]).ok();
    let server = Server::start(&env, &[]);

    for path in [
        "/".to_owned(),
        format!("/c/{id}"),
        format!("/c/{id}?view=compacted"),
        "/search?q=zebra".to_owned(),
        format!("/c/{id}/diff"),
    ] {
        let page = dom(&env, &server.at(&path));
        let title: String = page.split("<title>").nth(1).unwrap().split("</title>").next().unwrap().to_owned();
        assert!(title != "pwned" && title.ends_with("· convo"), "{path}: the title is the page's: {title:?}");
        let scripts = tags(&page, "script");
        assert_eq!(scripts, vec!["<script src=\"/assets/app.js\" defer=\"\""], "{path}: only the page's own script");
        for name in ["img", "iframe", "style", "meta http-equiv", "svg onload", "link rel=\"icon\""] {
            assert_eq!(tags(&page, name), Vec::<&str>::new(), "{path}: no <{name}> from the content");
        }
        let handlers: Vec<&str> = tags(&page, "")
            .into_iter()
            .filter(|tag| tag.split_ascii_whitespace().skip(1).any(|a| a.to_ascii_lowercase().starts_with("on")))
            .collect();
        assert_eq!(handlers, Vec::<&str>::new(), "{path}: no handler attribute");
        assert!(links(&page, "").iter().all(|h| !h.to_ascii_lowercase().contains("javascript")), "{path}");
        assert!(!page.contains('\u{1b}'), "{path}: no terminal escape reaches the page");
    }
    let search = dom(&env, &server.at("/search?q=zebra"));
    assert!(search.contains("data-live=\"zebra\""), "the hostile hits went through the script: {search}");
    assert!(search.contains("&lt;script&gt;fetch("), "shown as text: {search}");
    match canary.accept() {
        Ok((_, from)) => panic!("the page reached the watched port (from {from})"),
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock, "{e}"),
    }
}

/// Another site's page, a rebound name, a write and (with `--bind`) a request without the
/// token are refused, and the store is as before; the token in the URL admits, and its
/// cookie after that.
#[test]
fn requests_from_another_origin_or_without_the_token_are_refused() {
    let (env, _, _) = store();
    // Readers keep caches under .git/convo/ (the catalogue, the usage tally): not the store.
    let committed = || {
        let mut files = env.snapshot();
        files.retain(|path, _| !path.starts_with(".git/convo"));
        files
    };
    let before = committed();
    let server = Server::start(&env, &[]);
    assert_eq!(get(&server, "/", &[]).0, 200);
    let (status, head, _) = get(&server, "/", &[]);
    assert_eq!(status, 200);
    assert!(head.contains("Content-Security-Policy: default-src 'none'; script-src 'self'"), "{head}");
    assert_eq!(get(&server, "/api/search?q=needle", &[("Origin", "http://evil.example")]).0, 403);
    assert_eq!(get(&server, "/", &[("Sec-Fetch-Site", "cross-site")]).0, 403);
    let rebound = request(server.port, "GET", "/", &[("Host", "evil.example:80")]);
    assert_eq!(rebound.0, 421, "DNS rebinding: another name in Host");
    assert_eq!(request(server.port, "GET", "/", &[]).0, 421, "no Host");
    let host = format!("127.0.0.1:{}", server.port);
    for method in ["POST", "PUT", "DELETE"] {
        assert_eq!(request(server.port, method, "/", &[("Host", &host)]).0, 405, "{method}");
    }
    drop(server);

    let bound = Server::start(&env, &["--bind", "0.0.0.0"]);
    let token = bound.url.split("token=").nth(1).expect("the URL holds the token").to_owned();
    assert_eq!(token.len(), 32, "{}", bound.url);
    let (status, _, body) = get(&bound, "/", &[]);
    assert_eq!(
        (status, body.trim()),
        (401, "refused: this server needs the token it printed when it started (?token=...)")
    );
    assert_eq!(get(&bound, "/?token=wrong", &[]).0, 401);
    let (status, head, _) = get(&bound, &format!("/?token={token}"), &[]);
    assert_eq!(status, 200);
    assert!(head.contains(&format!("Set-Cookie: convo_token={token}; Path=/; HttpOnly; SameSite=Strict")), "{head}");
    assert_eq!(get(&bound, "/usage", &[("Cookie", &format!("convo_token={token}"))]).0, 200);
    assert_eq!(get(&bound, "/usage", &[("Cookie", "convo_token=nope")]).0, 401);
    drop(bound);
    assert_eq!(committed(), before, "serving changed nothing in the store");
}

/// A port already taken: one line saying so, a hint, a non-zero exit.
#[test]
fn serve_on_a_taken_port_says_so() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let env = TestEnv::new();
    let run = env.run(&["serve", "--port", &port]);
    let stderr = run.fails_with(3);
    assert!(stderr.starts_with(&format!("error: cannot listen on 127.0.0.1:{port}: ")), "{stderr}");
    assert!(stderr.contains("hint: choose another port with --port N"), "{stderr}");
}

/// `--open` hands the page's URL, the one printed, to the desktop's opener (`xdg-open`),
/// here a script on PATH that writes down what it was given (the browser itself is not
/// what is tested: it is whatever the desktop runs).
#[test]
fn serve_open_hands_the_printed_url_to_the_browser_opener() {
    let (env, _, _) = store();
    let bin = env.root.join("opener");
    std::fs::create_dir_all(&bin).unwrap();
    let seen = env.root.join("opened");
    let script = bin.join("xdg-open");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}.tmp' && mv '{0}.tmp' '{0}'\n", seen.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let server = Server::start_with(&env, &["--open"], &[("PATH", &path)]);
    let mut opened = None;
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(&seen) {
            opened = Some(text);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(opened.as_deref(), Some(server.url.as_str()), "the opener was given the printed URL");
}
