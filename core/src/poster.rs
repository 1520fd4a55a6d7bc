//! A video's poster frame, drawn by an ffmpeg binary the configuration names
//! ([`crate::Config::ffmpeg`]).
//!
//! ffmpeg runs as a child process that reads one local file and writes one JPEG frame, scaled
//! to fit the thumbnail, to its standard output:
//! - no network: `-protocol_whitelist file`, so neither the input nor anything it refers to
//!   (a playlist, a reference movie) is read from anywhere but a file; `-nostdin`, so it reads
//!   no commands;
//! - a deadline: past it the child is killed (and reaped), and the asset gets no poster;
//! - bounded output: more than [`MAX_FRAME_BYTES`] on its standard output is no poster.
//!
//! The frame is taken one second in (half-way through a shorter video), with rotation applied
//! (ffmpeg turns the picture as the container says).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::Command;

/// Most bytes of a frame read from ffmpeg: a JPEG of at most 320 pixels a side is far smaller.
const MAX_FRAME_BYTES: u64 = 8 * 1024 * 1024;

/// Why there is no poster frame.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PosterError {
    /// ffmpeg could not be started.
    #[error("ffmpeg {path} could not be started: {source}")]
    Start {
        path: String,
        source: std::io::Error,
    },
    /// ffmpeg did not finish in time, and was killed.
    #[error("ffmpeg did not finish within {0:?} and was killed")]
    Deadline(Duration),
    /// ffmpeg failed, or wrote nothing (or too much).
    #[error("ffmpeg gave no frame: {0}")]
    NoFrame(String),
}

/// The JPEG bytes of the frame of the video at `input` (a local file), at most `max_side`
/// pixels on its long side, drawn by the ffmpeg at `ffmpeg` within `deadline`.
pub(crate) async fn frame(
    ffmpeg: &Path,
    input: &Path,
    duration_ms: Option<u64>,
    max_side: u32,
    deadline: Duration,
) -> Result<Vec<u8>, PosterError> {
    let at_ms = duration_ms.map_or(0, |d| (d / 2).min(1000));
    // Never enlarged: at most `max_side`, and at most the picture's own size.
    let scale = format!(
        "scale=w='min({max_side},iw)':h='min({max_side},ih)':force_original_aspect_ratio=decrease"
    );
    let mut child = Command::new(ffmpeg)
        .args(["-nostdin", "-hide_banner", "-loglevel", "error"])
        .args(["-protocol_whitelist", "file"])
        .args(["-ss", &format!("{}.{:03}", at_ms / 1000, at_ms % 1000)])
        .arg("-i")
        .arg(input)
        .args(["-map", "0:v:0", "-frames:v", "1", "-an", "-sn", "-dn"])
        .args(["-vf", &scale])
        .args(["-pix_fmt", "yuvj420p", "-q:v", "2"])
        .args(["-f", "image2pipe", "-c:v", "mjpeg", "pipe:1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| PosterError::Start {
            path: ffmpeg.display().to_string(),
            source,
        })?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(PosterError::NoFrame("no pipes".into()));
    };
    let run = async {
        let mut frame = Vec::new();
        let mut errors = Vec::new();
        let mut stdout = stdout.take(MAX_FRAME_BYTES + 1);
        let read_frame = stdout.read_to_end(&mut frame);
        // The first lines it writes are kept for the log; the rest is read and dropped, so
        // a file that makes it write many (a damaged stream) never blocks it on a full pipe.
        let mut stderr = stderr;
        let read_errors = async {
            (&mut stderr).take(4096).read_to_end(&mut errors).await?;
            tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await
        };
        let (a, b) = tokio::join!(read_frame, read_errors);
        a.map(drop)
            .and(b.map(drop))
            .map_err(|e| PosterError::NoFrame(e.to_string()))?;
        let status = child
            .wait()
            .await
            .map_err(|e| PosterError::NoFrame(e.to_string()))?;
        Ok::<_, PosterError>((status, frame, errors))
    };
    let outcome = tokio::time::timeout(deadline, run).await;
    let Ok(done) = outcome else {
        // `run` is dropped with its borrow; the child is killed and reaped here.
        let _ = child.kill().await;
        return Err(PosterError::Deadline(deadline));
    };
    let (status, frame, errors) = done?;
    if !status.success() || frame.is_empty() || frame.len() as u64 > MAX_FRAME_BYTES {
        let said = String::from_utf8_lossy(&errors);
        return Err(PosterError::NoFrame(format!(
            "{status}, {} bytes: {}",
            frame.len(),
            said.trim()
        )));
    }
    Ok(frame)
}
