//! Git servers on loopback for sharing tests: `git daemon`, and smart HTTP through
//! `git http-backend` run as CGI by a small server written here.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// `git daemon` serving every repository under `root`, pushes allowed; killed on drop.
pub struct Daemon {
    pub url: String,
    child: Child,
}

impl Daemon {
    pub fn start(root: &Path) -> Daemon {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new("git")
            .args(["daemon", "--reuseaddr", "--export-all", "--enable=receive-pack", "--listen=127.0.0.1"])
            .arg(format!("--port={port}"))
            .arg(format!("--base-path={}", root.display()))
            .arg(root)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            // `git daemon` runs `git-daemon` as a child: a group of its own lets the drop
            // end both, not orphan the server.
            .process_group(0)
            .spawn()
            .expect("git daemon starts");
        // Until it listens; one that never does (no git-daemon installed) fails here, not as
        // a confusing fetch error later.
        let listening = (0..600).any(|_| {
            TcpStream::connect(("127.0.0.1", port)).is_ok() || {
                std::thread::sleep(std::time::Duration::from_millis(50));
                false
            }
        });
        let mut daemon = Daemon { url: format!("git://127.0.0.1:{port}"), child };
        if !listening {
            let exited = daemon.child.try_wait().ok().flatten();
            panic!("git daemon did not listen within 30 s (exited: {exited:?}; .ci/test installs git with its daemon)");
        }
        daemon
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the process group this daemon leads; no memory is touched.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// Smart HTTP: each request runs `git http-backend` as CGI over repositories under `root`.
/// With `cut_after`, responses to fetches are cut off after that many bytes, as if the
/// server vanished mid-transfer.
pub struct Http {
    pub url: String,
}

impl Http {
    pub fn start(root: &Path, cut_after: Option<usize>) -> Http {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let root = root.to_owned();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let root = root.clone();
                std::thread::spawn(move || serve(stream, &root, cut_after));
            }
        });
        Http { url }
    }
}

fn serve(mut stream: TcpStream, root: &PathBuf, cut_after: Option<usize>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let mut parts = request_line.split_whitespace();
    let method = parts.next().unwrap_or("GET").to_owned();
    let target = parts.next().unwrap_or("/").to_owned();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let mut headers: Vec<(String, String)> = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.trim_end().split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let body = match header("content-length").and_then(|l| l.parse::<usize>().ok()) {
        Some(length) => {
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            body
        }
        None if header("transfer-encoding").is_some_and(|t| t.contains("chunked")) => read_chunked(&mut reader),
        None => Vec::new(),
    };
    let mut cgi = Command::new("git");
    cgi.arg("http-backend")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_PROJECT_ROOT", root)
        .env("GIT_HTTP_EXPORT_ALL", "1")
        .env("REMOTE_USER", "tester")
        .env("REMOTE_ADDR", "127.0.0.1")
        .env("REQUEST_METHOD", &method)
        .env("PATH_INFO", path)
        .env("QUERY_STRING", query)
        .env("CONTENT_LENGTH", body.len().to_string())
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(t) = header("content-type") {
        cgi.env("CONTENT_TYPE", t);
    }
    if let Some(e) = header("content-encoding") {
        cgi.env("HTTP_CONTENT_ENCODING", e);
    }
    if let Some(p) = header("git-protocol") {
        cgi.env("GIT_PROTOCOL", p);
    }
    let mut child = cgi.spawn().unwrap();
    {
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(&body);
    }
    let output = child.wait_with_output().unwrap();
    let split = output
        .stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, 4))
        .or_else(|| output.stdout.windows(2).position(|w| w == b"\n\n").map(|i| (i, 2)));
    let (head, rest) = match split {
        Some((i, n)) => (String::from_utf8_lossy(&output.stdout[..i]).into_owned(), &output.stdout[i + n..]),
        None => (String::new(), &output.stdout[..]),
    };
    let mut status = "200 OK".to_owned();
    let mut response_headers = String::new();
    for line in head.lines() {
        match line.split_once(':') {
            Some((k, v)) if k.eq_ignore_ascii_case("status") => status = v.trim().to_owned(),
            Some(_) => response_headers += &format!("{line}\r\n"),
            None => {}
        }
    }
    let cut = cut_after.filter(|_| method == "POST" && path.ends_with("git-upload-pack"));
    let body = match cut {
        Some(n) => &rest[..n.min(rest.len())],
        None => rest,
    };
    let length = if cut.is_some() { rest.len() } else { body.len() };
    let _ = stream.write_all(
        format!("HTTP/1.1 {status}\r\n{response_headers}Content-Length: {length}\r\nConnection: close\r\n\r\n")
            .as_bytes(),
    );
    let _ = stream.write_all(body);
}

fn read_chunked(reader: &mut BufReader<TcpStream>) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        if reader.read_line(&mut size).unwrap_or(0) == 0 {
            break;
        }
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 {
            let _ = reader.read_line(&mut String::new());
            break;
        }
        let mut chunk = vec![0; n];
        let _ = reader.read_exact(&mut chunk);
        body.extend(chunk);
        let _ = reader.read_line(&mut String::new());
    }
    body
}
