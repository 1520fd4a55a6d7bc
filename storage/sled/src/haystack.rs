//! The asset list's `search=` without a walk of the records (feature `search`): every asset's
//! title and description, folded as [`rules::fold_case`] folds them, kept in memory, so a
//! search reads the records of its matches only.
//!
//! `search=` asks for a substring, which no word index answers; a trigram index would write a
//! hundred keys or more with every create. A sled database is open in one process at a time,
//! so the store keeps the texts beside it instead: read from the records by the first list
//! search after the database opens, then moved by every asset write after it commits
//! ([`Haystack::changed`], where the content versions move too). The memory is about the
//! titles and descriptions themselves plus some 80 bytes an asset; a database on which no
//! list is searched never holds them.

use std::collections::HashMap;
use std::sync::RwLock;

use assetlib_core::store::rules;
use uuid::Uuid;

use crate::Inner;
use crate::error::Error;
use crate::record::{AssetRec, decode, decode_id};

/// An asset's title and description, folded.
type Texts = (Box<str>, Option<Box<str>>);

/// The folded titles and descriptions of every asset, once a list search has asked.
#[derive(Default)]
pub(crate) struct Haystack {
    texts: RwLock<Option<HashMap<Uuid, Texts>>>,
}

/// The texts `rec` keeps.
fn texts_of(rec: &AssetRec) -> Texts {
    (
        rules::fold_case(&rec.title).into_boxed_str(),
        rec.description
            .as_deref()
            .map(|d| rules::fold_case(d).into_boxed_str()),
    )
}

/// The ids of `texts` whose title or description holds `needle` (folded).
fn matching(texts: &HashMap<Uuid, Texts>, needle: &str) -> Vec<Uuid> {
    texts
        .iter()
        .filter(|(_, (title, description))| {
            title.contains(needle) || description.as_deref().is_some_and(|d| d.contains(needle))
        })
        .map(|(id, _)| *id)
        .collect()
}

impl Haystack {
    /// The assets whose title or description holds `needle`, already folded
    /// ([`rules::fold_case`]), in no order; read from the records the first time.
    pub(crate) fn matching(&self, inner: &Inner, needle: &str) -> Result<Vec<Uuid>, Error> {
        if let Some(texts) = self.texts.read().map_err(|_| poisoned())?.as_ref() {
            return Ok(matching(texts, needle));
        }
        // Loaded under the write lock: a write that commits meanwhile waits in `changed`,
        // then reads its record again.
        let mut slot = self.texts.write().map_err(|_| poisoned())?;
        if slot.is_none() {
            let mut texts = HashMap::new();
            for kv in inner.assets.iter() {
                let (k, v) = kv?;
                let rec: AssetRec = decode(AssetRec::WHAT, &v)?;
                texts.insert(decode_id("asset key", &k)?, texts_of(&rec));
            }
            *slot = Some(texts);
        }
        Ok(slot
            .as_ref()
            .map(|t| matching(t, needle))
            .unwrap_or_default())
    }

    /// Reads the records of `ids` again after a write to them committed (a deleted one
    /// leaves). A read that fails drops the texts, which the next search reads again.
    pub(crate) fn changed(&self, inner: &Inner, ids: impl IntoIterator<Item = Uuid>) {
        let Ok(mut slot) = self.texts.write() else {
            return;
        };
        let Some(texts) = slot.as_mut() else {
            return;
        };
        for id in ids {
            match inner.asset_rec(id) {
                Ok(Some(rec)) => {
                    texts.insert(id, texts_of(&rec));
                }
                Ok(None) => {
                    texts.remove(&id);
                }
                Err(_) => {
                    *slot = None;
                    return;
                }
            }
        }
    }
}

fn poisoned() -> Error {
    Error::invalid("list search texts", "a thread panicked while holding them")
}
