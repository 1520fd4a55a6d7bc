//! Pages of the kept lists: the ids of one page of an index, read from its nearer end.

use uuid::Uuid;

use crate::error::Error;
use crate::{Inner, tree_keys};

impl Inner {
    /// The ids of one page of an index under `prefix`, reading from whichever end is nearer:
    /// O(min(offset, total - offset) + size) keys.
    pub(crate) fn page_ids(
        &self,
        tree: &sled::Tree,
        prefix: &[u8],
        reverse: bool,
        offset: u64,
        size: u32,
        total: u64,
    ) -> Result<Vec<Uuid>, Error> {
        if offset >= total {
            return Ok(Vec::new());
        }
        let end = offset.saturating_add(u64::from(size)).min(total);
        let want = to_usize(end - offset);
        let from_near_end = offset > total - end;
        let (skip, reverse) = if from_near_end {
            (total - end, !reverse)
        } else {
            (offset, reverse)
        };
        let mut ids = self
            .scan(tree, prefix, reverse)
            .skip(to_usize(skip))
            .take(want)
            .map(|kv| kv.and_then(|(k, _)| tree_keys::trailing_id(&k)))
            .collect::<Result<Vec<_>, _>>()?;
        if from_near_end {
            ids.reverse();
        }
        Ok(ids)
    }
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}
