//! PDF pages drawn in a child process, so that no file can take more than a bounded time and
//! memory of the process that serves the API.
//!
//! A PDF's page is a program: forms that draw forms, millions of saved graphics states, a dash
//! a ten-thousandth of a point long. The renderer (`hayro`) has no budget of its own and a
//! render cannot be cancelled from outside its thread, so a hostile page would keep a core
//! and gigabytes for as long as it likes. With [`PdfRenderer::Child`] each page is drawn by a
//! child process that:
//! - limits itself before reading the file: its address space to
//!   [`Limits::max_pdf_render_memory`] plus the file's size (`RLIMIT_AS`; an allocation past
//!   it ends the child), and its CPU time to the deadline and a second (`RLIMIT_CPU`: the
//!   kernel ends it even if this process is gone);
//! - is killed (and reaped) once [`Limits::pdf_render_timeout`] has passed;
//! - reads the PDF on its standard input and writes `width` and `height` (little-endian
//!   `u32`s) and the RGBA pixels on its standard output, nothing else.
//!
//! The caller's turn on its worker pool is held by the thread that waits for the child, so it
//! ends with the work, within the deadline, whether or not the request that asked is still
//! there. A child is a program whose `main` calls [`pdf_render_child`] first: the ready
//! servers are their own renderer ([`PdfRenderer::this_program`]), and the `assetlib`
//! crate's `assetlib-pdf-render` binary does nothing else.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use image::RgbaImage;

use super::{Limits, pdf_page};

/// The first argument of a render child: what tells its `main` to draw a page and end.
pub const PDF_RENDER_ARG: &str = "--assetlib-render-pdf";

/// How PDF pages are drawn, for thumbnails and image variants ([`Limits::pdf_renderer`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PdfRenderer {
    /// Not drawn: PDFs get no thumbnail and no image variant (the default, since drawing
    /// safely needs a program to run; see [`PdfRenderer::this_program`]).
    #[default]
    Off,
    /// In a child process running `program` with [`PDF_RENDER_ARG`] and the page's
    /// parameters: a program whose `main` calls [`pdf_render_child`] first. Bounded in time
    /// and memory by [`Limits::pdf_render_timeout`] and [`Limits::max_pdf_render_memory`].
    Child {
        /// The program to run.
        program: PathBuf,
    },
    /// In the calling thread, with no bound on its time or memory: only for files that are
    /// trusted (tests, tools run over one's own files), never for files a client sends.
    InProcess,
}

impl PdfRenderer {
    /// The running program as its own renderer: for a binary whose `main` starts with
    /// [`pdf_render_child`].
    ///
    /// ```no_run
    /// use assetlib_core::extract::{PdfRenderer, pdf_render_child};
    ///
    /// fn main() -> std::process::ExitCode {
    ///     if let Some(code) = pdf_render_child() {
    ///         return code; // this run was a render child
    ///     }
    ///     let mut config = assetlib_core::Config::default();
    ///     config.extract_limits.pdf_renderer = PdfRenderer::this_program().expect("own path");
    ///     // ... build the service with `config` and serve it
    ///     std::process::ExitCode::SUCCESS
    /// }
    /// ```
    ///
    /// # Errors
    /// When the operating system cannot say where the running program is.
    pub fn this_program() -> std::io::Result<Self> {
        Ok(PdfRenderer::Child {
            program: std::env::current_exe()?,
        })
    }
}

/// Why a child gave no page.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RenderFailed {
    /// The child could not be started.
    #[error("the PDF renderer {program} could not be started: {source}")]
    Start {
        program: String,
        source: std::io::Error,
    },
    /// The child did not finish in time, and was killed.
    #[error("the page was not drawn within {0:?}; the renderer was killed")]
    Deadline(Duration),
    /// The child ended without a page: past its memory or CPU limit, or the file broke it.
    #[error("the renderer gave no page ({0})")]
    NoPage(String),
    /// Renders were stopped ([`stop_pdf_renders`]): the process is shutting down.
    #[error("PDF renders are stopped: the server is shutting down")]
    Stopped,
}

/// Page 1 of `bytes` (a PDF the pre-scan found renderable) as `renderer` draws it, its long
/// side what `long_side` says of the page's width and height in points. `Ok(None)` when the
/// page cannot be drawn at all (no pages, no size, or drawing is off); an error when a child
/// was stopped or failed.
pub(super) fn draw(
    bytes: &Bytes,
    limits: &Limits,
    long_side: impl FnOnce(f64, f64) -> u32,
) -> Result<Option<RgbaImage>, RenderFailed> {
    match &limits.pdf_renderer {
        PdfRenderer::Off => Ok(None),
        PdfRenderer::InProcess => Ok(pdf_page::first_page_sized(bytes, long_side)),
        PdfRenderer::Child { .. } if STOPPED.load(Ordering::Acquire) => Err(RenderFailed::Stopped),
        PdfRenderer::Child { program } => {
            let Some((w, h)) = pdf_page::page_size(bytes) else {
                return Ok(None);
            };
            in_child(program, bytes, pdf_page::max_side(long_side(w, h)), limits).map(Some)
        }
    }
}

/// Draws page 1 at `max_side` in a child running `program`, within the limits.
fn in_child(
    program: &std::path::Path,
    bytes: &Bytes,
    max_side: u16,
    limits: &Limits,
) -> Result<RgbaImage, RenderFailed> {
    let deadline = limits.pdf_render_timeout;
    let memory = limits
        .max_pdf_render_memory
        .saturating_add(bytes.len() as u64);
    let cpu_seconds = deadline.as_secs().saturating_add(1);
    let mut child = Command::new(program)
        .arg(PDF_RENDER_ARG)
        .arg(max_side.to_string())
        .arg(memory.to_string())
        .arg(cpu_seconds.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|source| RenderFailed::Start {
            program: program.display().to_string(),
            source,
        })?;
    let outcome = feed_and_read(&mut child, bytes, max_side, deadline);
    // Ended either way: a child that wrote its page is about to exit, and one that did not
    // is past its deadline, stopped, or broken. Reaped, so no zombie is left.
    let _ = child.kill();
    let status = child.wait();
    outcome.map_err(|failed| match (failed, status) {
        (RenderFailed::NoPage(why), Ok(status)) if !status.success() => {
            RenderFailed::NoPage(format!("{status}; {why}"))
        }
        (failed, _) => failed,
    })
}

/// Writes the file to the child and reads its page, on threads of their own, waiting at most
/// `deadline` for the page, and no longer once [`stop_pdf_renders`] was called.
fn feed_and_read(
    child: &mut Child,
    bytes: &Bytes,
    max_side: u16,
    deadline: Duration,
) -> Result<RgbaImage, RenderFailed> {
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(RenderFailed::NoPage("no pipes".into()));
    };
    let input = bytes.clone();
    // A child that stops reading (it died, or hangs) fails or blocks this write, never the
    // waiting below; the thread ends when the child is killed and the pipe breaks.
    std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let (sender, receiver) = mpsc::sync_channel(1);
    std::thread::spawn(move || {
        let _ = sender.send(read_page(stdout, max_side));
    });
    let started = Instant::now();
    loop {
        let left = deadline.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(RenderFailed::Deadline(deadline));
        }
        if STOPPED.load(Ordering::Acquire) {
            return Err(RenderFailed::Stopped);
        }
        match receiver.recv_timeout(left.min(STOP_CHECK)) {
            Ok(page) => return page.map_err(RenderFailed::NoPage),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(RenderFailed::NoPage("the reader ended".into()));
            }
        }
    }
}

/// How often a wait for a child looks whether renders were stopped.
const STOP_CHECK: Duration = Duration::from_millis(50);

/// Set once by [`stop_pdf_renders`].
static STOPPED: AtomicBool = AtomicBool::new(false);

/// Stops every PDF render child of this process within moments, and starts no new one: the
/// files being read get no thumbnail, and variants of PDFs are refused. For a server that is
/// shutting down, so that pages being drawn do not hold up its answers (the ready servers call
/// it when SIGTERM or Ctrl-C arrives). There is no undoing it.
pub fn stop_pdf_renders() {
    STOPPED.store(true, Ordering::Release);
}

/// The page a child wrote: its size, then exactly that many RGBA pixels, no side larger than
/// `max_side` asked.
fn read_page(mut out: impl Read, max_side: u16) -> Result<RgbaImage, String> {
    let mut header = [0u8; 8];
    out.read_exact(&mut header)
        .map_err(|e| format!("no page header: {e}"))?;
    let [w0, w1, w2, w3, h0, h1, h2, h3] = header;
    let (w, h) = (
        u32::from_le_bytes([w0, w1, w2, w3]),
        u32::from_le_bytes([h0, h1, h2, h3]),
    );
    let max = u32::from(max_side);
    if w == 0 || h == 0 || w > max || h > max {
        return Err(format!(
            "a page of {w} x {h} pixels, asked for {max} at most"
        ));
    }
    let len = usize::try_from(u64::from(w) * u64::from(h) * 4).map_err(|e| e.to_string())?;
    let mut pixels = vec![0u8; len];
    out.read_exact(&mut pixels)
        .map_err(|e| format!("page cut short: {e}"))?;
    RgbaImage::from_raw(w, h, pixels).ok_or_else(|| "pixels do not fill the page".into())
}

/// Runs this process as a PDF render child when its first argument is [`PDF_RENDER_ARG`]:
/// draws page 1 of the PDF on standard input and writes it to standard output, within the
/// limits its arguments give, and returns the exit code to end with. Any other first
/// argument: `None`, and the program goes on as itself.
///
/// Call it first in `main` of a program named by [`PdfRenderer::Child`] (see
/// [`PdfRenderer::this_program`]).
#[must_use]
pub fn pdf_render_child() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(OsStr::new(PDF_RENDER_ARG)) {
        return None;
    }
    let numbers: Vec<u64> = args
        .map(|a| a.to_str().and_then(|s| s.parse().ok()).unwrap_or(0))
        .collect();
    let &[max_side, memory, cpu_seconds] = numbers.as_slice() else {
        eprintln!("{PDF_RENDER_ARG} takes MAX_SIDE MEMORY_BYTES CPU_SECONDS");
        return Some(ExitCode::from(2));
    };
    Some(match render_child(max_side, memory, cpu_seconds) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{PDF_RENDER_ARG}: {e}");
            ExitCode::FAILURE
        }
    })
}

/// The child's work: limits, then the PDF in, the page out.
fn render_child(max_side: u64, memory: u64, cpu_seconds: u64) -> Result<(), String> {
    let max_side = u16::try_from(max_side)
        .ok()
        .filter(|&s| s > 0)
        .ok_or("MAX_SIDE is 1 to 65535")?;
    limit_self(memory, cpu_seconds)?;
    let mut input = Vec::new();
    std::io::stdin()
        .take(memory)
        .read_to_end(&mut input)
        .map_err(|e| format!("reading the PDF: {e}"))?;
    let page = pdf_page::first_page(&Bytes::from(input), u32::from(max_side))
        .ok_or("the page cannot be drawn")?;
    let mut out = std::io::stdout().lock();
    out.write_all(&page.width().to_le_bytes())
        .and_then(|()| out.write_all(&page.height().to_le_bytes()))
        .and_then(|()| out.write_all(page.as_raw()))
        .and_then(|()| out.flush())
        .map_err(|e| format!("writing the page: {e}"))
}

/// Caps this process's address space and CPU time.
#[cfg(unix)]
fn limit_self(memory: u64, cpu_seconds: u64) -> Result<(), String> {
    use rlimit::Resource;
    Resource::AS
        .set(memory, memory)
        .and_then(|()| Resource::CPU.set(cpu_seconds, cpu_seconds))
        .map_err(|e| format!("setting the render limits: {e}"))
}

/// Elsewhere the deadline alone bounds a render: the child is killed when it passes.
#[cfg(not(unix))]
fn limit_self(_memory: u64, _cpu_seconds: u64) -> Result<(), String> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::read_page;

    fn page(w: u32, h: u32, pixels: usize) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&w.to_le_bytes());
        out.extend_from_slice(&h.to_le_bytes());
        out.resize(8 + pixels, 255);
        out
    }

    #[test]
    fn a_page_is_read_only_when_whole_and_no_larger_than_asked() {
        let got = read_page(&page(3, 2, 24)[..], 4).expect("a whole page");
        assert_eq!((got.width(), got.height()), (3, 2));
        assert!(read_page(&page(3, 2, 23)[..], 4).is_err(), "cut short");
        assert!(
            read_page(&page(5, 2, 40)[..], 4).is_err(),
            "wider than asked"
        );
        assert!(read_page(&page(0, 2, 0)[..], 4).is_err(), "empty");
        assert!(read_page(&[1u8, 0, 0][..], 4).is_err(), "no header");
    }
}
