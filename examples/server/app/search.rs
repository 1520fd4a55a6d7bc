//! `search reindex`: what the search index lacks, with a progress bar on standard error and
//! a summary on standard output; a non-zero exit when a file could not be read.

use assetlib::Reindex;
use indicatif::{ProgressBar, ProgressStyle};

use super::BoxError;
use super::UserError;
use super::cli::SearchCommand;
use super::data::{describe_data, open_service};

/// Runs a `search` command.
pub(crate) async fn run(command: SearchCommand) -> Result<(), BoxError> {
    let SearchCommand::Reindex { data } = command;
    super::init_logging();
    let service = open_service(&data, super::keys::command_config()).await?;
    eprintln!("search reindex: {}", describe_data(&data));
    let bar = ProgressBar::new(0).with_style(ProgressStyle::with_template(
        "{bar:40} {pos}/{len} assets  {msg}  [{elapsed_precise}, {eta} left]",
    )?);
    let done = service
        .reindex_search(|now: &Reindex| {
            bar.set_length(now.total);
            bar.set_position(now.seen);
            bar.set_message(format!("{} files read", now.read));
        })
        .await;
    bar.finish_and_clear();
    service.store().flush().await?;
    let done = done?;
    println!(
        "{} assets looked at: {} files read for their text, {} could not be read (see the \
         log); the words of {} assets brought in",
        done.seen, done.read, done.failed, done.words
    );
    if done.failed > 0 {
        return Err(UserError(format!(
            "{} files could not be read: run `search reindex` again to retry them",
            done.failed
        ))
        .into());
    }
    Ok(())
}
