//! `thumbnails backfill`: previews for assets stored before their type had them, with a
//! progress bar on standard error and a summary on standard output.

use assetlib::Backfill;
use indicatif::{ProgressBar, ProgressStyle};

use super::BoxError;
use super::cli::ThumbnailsCommand;
use super::data::{describe_data, open_service};

/// Runs a `thumbnails` command.
pub(crate) async fn run(command: ThumbnailsCommand) -> Result<(), BoxError> {
    let ThumbnailsCommand::Backfill { data, ffmpeg } = command;
    super::init_logging();
    let mut config = super::drawing_pdfs(super::keys::command_config());
    config.ffmpeg = ffmpeg.path;
    let service = open_service(&data, config).await?;
    eprintln!("thumbnails backfill: {}", describe_data(&data));
    let bar = ProgressBar::new(0).with_style(ProgressStyle::with_template(
        "{bar:40} {pos}/{len} assets  {msg}  [{elapsed_precise}, {eta} left]",
    )?);
    let done = service
        .backfill_previews(|now: &Backfill| {
            bar.set_length(now.total);
            bar.set_position(now.seen);
            bar.set_message(format!("{} thumbnails made", now.thumbnails));
        })
        .await;
    bar.finish_and_clear();
    service.store().flush().await?;
    let done = done?;
    println!(
        "{} assets looked at: {} read again now have a thumbnail, {} have none to give, {} \
         could not be read (see the log); {} read for their checksum alone",
        done.seen, done.thumbnails, done.without, done.failed, done.checksums
    );
    Ok(())
}
