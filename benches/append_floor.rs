//! The floor under an append: a process that makes only the file-system changes git's
//! format and lock protocol require of a one-turn commit, and nothing else. `benches/store.py`
//! runs it in the same rounds as `convo append` and `git add` + `git commit`, so the
//! convo/git goal can be read against what no implementation that starts a process and
//! writes loose objects can go under on the machine at hand.
//!
//! Build: `cargo build --release --example append_floor`. Run: `append_floor DIR`, with DIR
//! a scratch folder it lays out on first use (`objects/`, `refs/heads/`, `logs/`, a work
//! tree file, an index). Each run then does what an append's commit does to the disk:
//! - eight loose objects (the segment's blob, five trees, the commit, and the fan tree of
//!   a fanned-out store), each written to a new temporary file and renamed into its
//!   `objects/xx/` folder, at the sizes one ~2 KB turn gives;
//! - the branch: `refs/heads/main.lock` created, written and renamed over the ref, and one
//!   line appended to each of its two reflogs;
//! - the working tree: the turn appended to the open segment file;
//! - the index: `index.lock` created, written whole and renamed over `index`.
//!
//! It hashes, compresses and parses nothing, reads no config and takes no lock of its own:
//! what it measures is process start plus those file operations. Only std is used, so its
//! start is that of a small Rust binary, not of convo's.

use std::fs::{self, File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

/// Compressed sizes of the objects one ~2 KB turn adds (measured on a store's appends).
const OBJECT_SIZES: [usize; 8] = [1_100, 320, 290, 250, 70, 860, 60, 240];
/// A store's index with a few dozen entries, written whole each time (as git does).
const INDEX_BYTES: usize = 4_800;
const TURN_BYTES: usize = 2_100;

fn main() {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: append_floor DIR");
        std::process::exit(2);
    };
    if let Err(e) = append(Path::new(&dir)) {
        eprintln!("append_floor: {e}");
        std::process::exit(1);
    }
}

fn append(dir: &Path) -> std::io::Result<()> {
    let objects = dir.join("objects");
    if !objects.exists() {
        lay_out(dir)?;
    }
    // Names no run repeats: the process id and the clock's nanoseconds.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let seed = (u64::from(std::process::id()) << 32) ^ now.as_nanos() as u64;
    let payload = vec![b'x'; INDEX_BYTES.max(TURN_BYTES)];
    for (i, size) in OBJECT_SIZES.iter().enumerate() {
        // Spread over the 256 folders as object ids are.
        let (a, b) = (mix(seed ^ i as u64), mix(!seed ^ i as u64));
        let name = format!("{a:016x}{b:016x}{:08x}", a as u32 ^ (b >> 32) as u32);
        let tmp = objects.join(format!("tmp_obj_{}_{i}", std::process::id()));
        write_new(&tmp, &payload[..*size])?;
        fs::rename(&tmp, objects.join(&name[..2]).join(&name[2..]))?;
    }
    let head = dir.join("refs/heads/main");
    let lock = dir.join("refs/heads/main.lock");
    write_new(&lock, format!("{:040x}\n", seed).as_bytes())?;
    let line = format!("{:040x} {:040x} convo <convo@localhost> 1764000000 +0000\tappend\n", seed, seed + 1);
    for log in ["logs/refs/heads/main", "logs/HEAD"] {
        OpenOptions::new().append(true).create(true).open(dir.join(log))?.write_all(line.as_bytes())?;
    }
    fs::rename(&lock, &head)?;
    OpenOptions::new().append(true).open(dir.join("segment.jsonl"))?.write_all(&payload[..TURN_BYTES])?;
    let index_lock = dir.join("index.lock");
    write_new(&index_lock, &payload[..INDEX_BYTES])?;
    fs::rename(&index_lock, dir.join("index"))
}

/// splitmix64's finaliser: a well-spread 64-bit value from a counter.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A new file, as git creates its temporary and lock files (`O_EXCL`).
fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    file.write_all(bytes)
}

fn lay_out(dir: &Path) -> std::io::Result<()> {
    for fan in 0..=255u8 {
        fs::create_dir_all(dir.join("objects").join(format!("{fan:02x}")))?;
    }
    fs::create_dir_all(dir.join("refs/heads"))?;
    fs::create_dir_all(dir.join("logs/refs/heads"))?;
    File::create(dir.join("segment.jsonl"))?;
    fs::write(dir.join("index"), vec![0u8; INDEX_BYTES])?;
    fs::write(dir.join("refs/heads/main"), format!("{:040x}\n", 0))
}
