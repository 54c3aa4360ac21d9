use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use convo::ops::project::Scope;
use convo::ops::usage::Prices;
use convo::serve::{Site, gate::Gate};

use crate::cli::Ctx;
use crate::cli::command_error::CommandError;

/// Browse the store in a web browser: conversations, search, compactions, usage
///
/// A read-only local web view: the conversations (filter by project, agent, person, date;
/// forks and subagents under their parent), search as you type, a conversation raw or
/// compacted with each compaction as a card and its history, and usage by day, model,
/// project, person and agent. It listens on 127.0.0.1 and refuses requests from other
/// origins; nothing it serves loads anything from the network, and it has no way to change
/// the store. Stop it with Ctrl-C. Prices come from the `prices` config table, as `usage`'s.
///
/// `--bind ADDR` listens on another address (another machine may then reach it): every
/// request must then carry the random token the URL it prints holds.
#[derive(clap::Args)]
pub struct Args {
    /// Port to listen on (0: any free port)
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// Open the page in the default browser (`xdg-open`)
    #[arg(long)]
    open: bool,
    /// Address to listen on instead of 127.0.0.1; a random token is then required
    #[arg(long, value_name = "ADDR")]
    bind: Option<IpAddr>,
}

pub fn run(ctx: &Ctx, args: Args) -> Result<(), CommandError> {
    // One malloc arena for the whole server, set before any of its threads starts: glibc
    // gives each thread (the workers, tiny_http's readers) an arena of its own, and what a
    // page read and freed stayed in that thread's, which took the server's peak at 10,000
    // conversations from 54 to 81 MiB (benches/serve.py). Two workers barely contend.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt(3) only sets a tunable of the allocator; no thread of ours runs yet.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    let store = ctx.open_store()?;
    let config = ctx.config(&store, &[])?;
    let prices = Prices::shipped()
        .map_err(|e| CommandError::internal(format!("the shipped price table: {e}")))?
        .with(&config.config.prices);
    let ip = args.bind.unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    let server = tiny_http::Server::http(SocketAddr::new(ip, args.port)).map_err(|e| {
        CommandError::input(format!("cannot listen on {}: {e}", SocketAddr::new(ip, args.port)))
            .hint("choose another port with --port N (0 picks a free one)")
    })?;
    let port = server.server_addr().to_ip().map_or(args.port, |a| a.port());
    let loopback = ip.is_loopback();
    let token = (!loopback).then(token).transpose()?;
    let host = match ip {
        IpAddr::V6(v6) => format!("[{v6}]"),
        IpAddr::V4(v4) => v4.to_string(),
    };
    // On the loopback the Host must be one of its names (DNS rebinding); elsewhere any
    // name may reach it, and the token guards it.
    let hosts = if loopback { vec![format!("{host}:{port}"), format!("localhost:{port}")] } else { Vec::new() };
    let here = std::env::current_dir().ok().and_then(|dir| Scope::of(&dir).ok());
    let offset = ctx.clock.now() - chrono::Utc::now();
    let site = Site::new(
        store.root().to_path_buf(),
        prices,
        here,
        Gate { hosts, token: token.clone() },
        Box::new(move || chrono::Utc::now() + offset),
    );
    drop(store);
    let url = match &token {
        Some(token) => format!("http://{host}:{port}/?token={token}"),
        None => format!("http://{host}:{port}/"),
    };
    // The URL on stdout (a script reads it), the rest for people.
    println!("{url}");
    std::io::stdout().flush()?;
    ctx.ui.status("serving the store read-only; Ctrl-C stops");
    if args.open
        && let Err(e) = std::process::Command::new("xdg-open")
            .arg(&url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
    {
        ctx.ui.warning(&format!("cannot open a browser (xdg-open: {e}): open {url}"));
    }
    convo::serve::serve(&server, &site)?;
    Ok(())
}

/// 128 random bits, hex.
fn token() -> Result<String, CommandError> {
    let mut bytes = [0u8; 16];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
