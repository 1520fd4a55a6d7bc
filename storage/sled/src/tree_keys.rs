//! Key encodings. Every index key is built so that byte order (sled's order) is the sort
//! order of the list it serves; the crate docs have the table.

use assetlib_core::store::rules;
use assetlib_core::{Asset, AssetSort, AssetStatus, AssetType, Scope};
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::error::Error;

/// First scope byte of the lists of published assets.
pub(crate) const PUBLISHED: u8 = 0x00;

/// First scope byte of the lists of drafts.
pub(crate) const DRAFTS: u8 = 0x10;

/// First scope byte of the lists of every asset, published or not.
pub(crate) const ANY: u8 = 0x20;

/// The first scope byte of the lists of `status`.
pub(crate) fn family(status: AssetStatus) -> u8 {
    match status {
        AssetStatus::Published => PUBLISHED,
        AssetStatus::Draft => DRAFTS,
        AssetStatus::Any => ANY,
    }
}

/// The scope byte of a list: the family's first byte for every type, plus `1 + type code`
/// for one type (type codes are below 15, so the families never overlap).
pub(crate) fn scope(family: u8, asset_type: Option<AssetType>) -> u8 {
    family + asset_type.map_or(0, |t| 1 + type_code(t))
}

/// The scopes an asset is listed in: all and its type, in its own family (published or
/// drafts) and in the family of every asset.
pub(crate) fn scopes_of(published: bool, asset_type: AssetType) -> [u8; 4] {
    let own = if published { PUBLISHED } else { DRAFTS };
    [
        scope(own, None),
        scope(own, Some(asset_type)),
        scope(ANY, None),
        scope(ANY, Some(asset_type)),
    ]
}

/// The three sorts, in the order of the index trees (created, updated, title).
pub(crate) const SORTS: [AssetSort; 3] =
    [AssetSort::CreatedAt, AssetSort::UpdatedAt, AssetSort::Title];

/// Every index key of an asset, per index tree in the order of [`SORTS`]: one per scope of
/// [`scopes_of`].
pub(crate) fn asset_index_keys(asset: &Asset) -> [[Vec<u8>; 4]; 3] {
    SORTS.map(|sort| {
        scopes_of(asset.published, asset.asset_type).map(|scope| {
            asset_index(
                scope,
                sort,
                asset.id,
                &asset.created_at,
                &asset.updated_at,
                &asset.title,
            )
        })
    })
}

/// The code of a sort in the tag index, in the order of [`SORTS`].
fn sort_code(sort: AssetSort) -> u8 {
    match sort {
        AssetSort::CreatedAt => 0,
        AssetSort::UpdatedAt => 1,
        AssetSort::Title => 2,
    }
}

/// A list of the `asset_idx_tags` tree: the assets with a tag, or the assets of a workspace.
#[derive(Debug, Clone, Copy)]
pub(crate) enum List<'a> {
    /// The assets with this tag (its key, [`rules::tag_keys`]).
    Tag(&'a str),
    /// The assets of this workspace.
    Workspace(&'a str),
}

/// The first byte of a workspace's name in the `asset_idx_tags` tree and in its counts: no
/// tag key starts with it (tags hold no control character).
const WORKSPACE_LIST: u8 = 0x01;

impl List<'_> {
    /// Its name in keys: `text(tag key)`, or `0x01` + `text(workspace)`.
    fn push_name(self, k: &mut Vec<u8>) {
        match self {
            List::Tag(tag) => push_text(k, tag),
            List::Workspace(w) => {
                k.push(WORKSPACE_LIST);
                push_text(k, w);
            }
        }
    }
}

/// The prefix of the keys of one list of `scope` sorted by `sort` in the `asset_idx_tags`
/// tree: the list's name ([`List`]) + sort code + scope.
pub(crate) fn list_prefix(list: List<'_>, sort: AssetSort, scope: u8) -> Vec<u8> {
    let mut k = Vec::with_capacity(8);
    list.push_name(&mut k);
    k.push(sort_code(sort));
    k.push(scope);
    k
}

/// Every key of an asset in the `asset_idx_tags` tree: for each of its lists (its tags and
/// its workspace), each sort and each scope of [`scopes_of`], the list's prefix, then the
/// sort key and the id as in [`asset_index`].
pub(crate) fn asset_list_keys(asset: &Asset) -> Vec<Vec<u8>> {
    let tags = rules::tag_keys(&asset.tags);
    let lists = lists_of(asset, &tags);
    let mut out = Vec::with_capacity(lists.len() * 12);
    for &list in &lists {
        for sort in SORTS {
            for scope in scopes_of(asset.published, asset.asset_type) {
                let index = asset_index(
                    scope,
                    sort,
                    asset.id,
                    &asset.created_at,
                    &asset.updated_at,
                    &asset.title,
                );
                let mut k = list_prefix(list, sort, scope);
                k.extend_from_slice(&index[1..]);
                out.push(k);
            }
        }
    }
    out
}

/// The lists an asset is in: each of its tags (`tags`: their keys, each once) and its
/// workspace.
fn lists_of<'a>(asset: &'a Asset, tags: &'a [String]) -> Vec<List<'a>> {
    let mut lists: Vec<List<'a>> = tags.iter().map(|t| List::Tag(t)).collect();
    if let Some(w) = &asset.workspace_id {
        lists.push(List::Workspace(w));
    }
    lists
}

/// The first byte of the list counts in the `counts` tree.
const LIST_COUNT: u8 = 9;

/// Key of the number of assets in a list of `scope`, in the `counts` tree: `9`, the scope,
/// then the tag's key, or `0x01` and the workspace.
pub(crate) fn count_list(scope: u8, list: List<'_>) -> Vec<u8> {
    let mut k = vec![LIST_COUNT, scope];
    match list {
        List::Tag(tag) => k.extend_from_slice(tag.as_bytes()),
        List::Workspace(w) => {
            k.push(WORKSPACE_LIST);
            k.extend_from_slice(w.as_bytes());
        }
    }
    k
}

/// The prefix of the list counts of a scope (the lists of published assets: `PUBLISHED`);
/// [`tag_of_count`] tells the tags' among them.
pub(crate) fn list_counts_prefix(scope: u8) -> [u8; 2] {
    [LIST_COUNT, scope]
}

/// The tag key of a count key under [`list_counts_prefix`]; `None` for a workspace's count.
pub(crate) fn tag_of_count(key: &[u8]) -> Option<&[u8]> {
    key.get(2..)
        .filter(|name| name.first() != Some(&WORKSPACE_LIST))
}

/// The list counts an asset is counted in: each of its lists in each of its scopes.
pub(crate) fn list_counts_of(asset: &Asset) -> Vec<Vec<u8>> {
    let tags = rules::tag_keys(&asset.tags);
    let mut out = Vec::new();
    for list in lists_of(asset, &tags) {
        for scope in scopes_of(asset.published, asset.asset_type) {
            out.push(count_list(scope, list));
        }
    }
    out
}

/// Key of an asset in the `asset_idx_checksum` tree: the file's SHA-256, then the id.
pub(crate) fn checksum_index(checksum: &[u8; 32], id: Uuid) -> [u8; 48] {
    let mut k = [0; 48];
    k[..32].copy_from_slice(checksum);
    k[32..].copy_from_slice(id.as_bytes());
    k
}

/// The stored code of an asset type. Fixed forever: never reorder.
pub(crate) fn type_code(t: AssetType) -> u8 {
    match t {
        AssetType::Pdf => 0,
        AssetType::Document => 1,
        AssetType::Image => 2,
        AssetType::Video => 3,
        AssetType::ExternalVideo => 4,
        AssetType::Audio => 5,
        AssetType::Link => 6,
        AssetType::Collection => 7,
        AssetType::Git => 8,
    }
}

/// The asset type of a stored code.
pub(crate) fn type_from_code(code: u8) -> Result<AssetType, Error> {
    AssetType::ALL
        .into_iter()
        .find(|t| type_code(*t) == code)
        .ok_or_else(|| Error::invalid("asset type", format!("unknown code {code}")))
}

/// The stored code of a scope. Fixed forever: never reorder.
pub(crate) fn scope_code(s: Scope) -> u8 {
    match s {
        Scope::ReadAssets => 1,
        Scope::WriteAssets => 2,
        Scope::ReadLibraries => 3,
        Scope::WriteLibraries => 4,
        Scope::ReadPaid => 5,
        Scope::WritePasses => 6,
        Scope::ReadEvents => 7,
        Scope::AdminWebhooks => 8,
        Scope::AdminKeys => 9,
    }
}

/// The scope of a stored code.
pub(crate) fn scope_from_code(code: u8) -> Result<Scope, Error> {
    Scope::ALL
        .into_iter()
        .find(|s| scope_code(*s) == code)
        .ok_or_else(|| Error::invalid("key scope", format!("unknown code {code}")))
}

/// A timestamp as 12 bytes that sort like the time: seconds since the epoch as a big-endian
/// `i64` with the sign bit flipped, then the nanoseconds as a big-endian `u32`.
pub(crate) fn ts(t: &DateTime<Utc>) -> [u8; 12] {
    let secs = (t.timestamp() as u64) ^ (1 << 63);
    let mut out = [0; 12];
    out[..8].copy_from_slice(&secs.to_be_bytes());
    out[8..].copy_from_slice(&t.timestamp_subsec_nanos().to_be_bytes());
    out
}

/// Appends `s` so that the bytes sort like the string and nothing appended after it can change
/// that: each `0x00` byte becomes `0x00 0xFF`, and `0x00 0x00` ends the string.
pub(crate) fn push_text(out: &mut Vec<u8>, s: &str) {
    for &b in s.as_bytes() {
        out.push(b);
        if b == 0 {
            out.push(0xFF);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

/// The key of an asset in the index of `sort`, in the list of `scope`.
pub(crate) fn asset_index(
    scope: u8,
    sort: AssetSort,
    id: Uuid,
    created_at: &DateTime<Utc>,
    updated_at: &DateTime<Utc>,
    title: &str,
) -> Vec<u8> {
    let mut k = Vec::with_capacity(1 + 12 + 16);
    k.push(scope);
    match sort {
        AssetSort::CreatedAt => k.extend_from_slice(&ts(created_at)),
        AssetSort::UpdatedAt => k.extend_from_slice(&ts(updated_at)),
        AssetSort::Title => push_text(&mut k, &rules::fold_case(title)),
    }
    k.extend_from_slice(id.as_bytes());
    k
}

/// The id that ends an index key.
pub(crate) fn trailing_id(key: &[u8]) -> Result<Uuid, Error> {
    key.len()
        .checked_sub(16)
        .and_then(|start| key.get(start..))
        .and_then(|tail| <[u8; 16]>::try_from(tail).ok())
        .map(Uuid::from_bytes)
        .ok_or_else(|| Error::invalid("index key", format!("{} bytes", key.len())))
}

/// Key of a download counter in the `counters` tree.
pub(crate) fn downloads(id: Uuid) -> [u8; 17] {
    prefixed(b'd', id)
}

/// Key of a view counter in the `counters` tree.
pub(crate) fn views(id: Uuid) -> [u8; 17] {
    prefixed(b'v', id)
}

fn prefixed(tag: u8, id: Uuid) -> [u8; 17] {
    let mut k = [0; 17];
    k[0] = tag;
    k[1..].copy_from_slice(id.as_bytes());
    k
}

/// Key of the number of published assets (`0`), or of drafts (`4`), in the `counts` tree;
/// with a type, of those of the type (`1` or `5`, then the type code).
pub(crate) fn count_assets(published: bool, asset_type: Option<AssetType>) -> Vec<u8> {
    let (all, of_type) = if published { (0, 1) } else { (4, 5) };
    match asset_type {
        None => vec![all],
        Some(t) => vec![of_type, type_code(t)],
    }
}

/// The counts an asset is counted in: all and its type, published or drafts.
pub(crate) fn counts_of(published: bool, asset_type: AssetType) -> [Vec<u8>; 2] {
    [
        count_assets(published, None),
        count_assets(published, Some(asset_type)),
    ]
}

/// Whether a key of the `counts` tree counts assets (published or drafts).
pub(crate) fn is_asset_count(key: &[u8]) -> bool {
    matches!(key.first(), Some(0 | 1 | 4 | 5))
}

/// Key of the number of published libraries in the `counts` tree.
pub(crate) const COUNT_LIBRARIES: &[u8] = &[2];

/// Key of the number of published libraries of a workspace in the `counts` tree.
pub(crate) fn count_workspace(workspace: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(1 + workspace.len());
    k.push(3);
    k.extend_from_slice(workspace.as_bytes());
    k
}

/// `first` + the slug for assets of no workspace; `other` + `text(workspace)` + the slug for
/// those of a workspace (slugs are unique per workspace).
fn slug_key(first: u8, other: u8, workspace: Option<&str>, slug: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(4 + slug.len() + workspace.map_or(0, str::len));
    match workspace {
        None => k.push(first),
        Some(w) => {
            k.push(other);
            push_text(&mut k, w);
        }
    }
    k.extend_from_slice(slug.as_bytes());
    k
}

/// Key of a claimed slug in the `asset_slugs` tree: `s` + slug in no workspace, `w` +
/// `text(workspace)` + slug in one.
pub(crate) fn asset_slug(workspace: Option<&str>, slug: &str) -> Vec<u8> {
    slug_key(b's', b'w', workspace, slug)
}

/// Key of the next suffix to try for a wanted slug in the `asset_slugs` tree: `n` + slug in
/// no workspace, `m` + `text(workspace)` + slug in one.
pub(crate) fn asset_slug_hint(workspace: Option<&str>, slug: &str) -> Vec<u8> {
    slug_key(b'n', b'm', workspace, slug)
}

/// Key of a library's slug claim in the `library_slugs` tree: the slug in no workspace, the
/// slug + `0x00` + the workspace in one (slugs hold no `0x00`, so a slug's claims are the
/// slug itself and the keys under slug + `0x00`, in workspace order).
pub(crate) fn library_slug(workspace: Option<&str>, slug: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(1 + slug.len() + workspace.map_or(0, str::len));
    k.extend_from_slice(slug.as_bytes());
    if let Some(w) = workspace {
        k.push(0);
        k.extend_from_slice(w.as_bytes());
    }
    k
}

/// The workspace of a `library_slugs` key under `slug` + `0x00` ([`library_slug`]).
pub(crate) fn library_slug_workspace(slug: &str, key: &[u8]) -> Result<String, Error> {
    key.get(slug.len() + 1..)
        .and_then(|w| std::str::from_utf8(w).ok())
        .map(str::to_owned)
        .ok_or_else(|| Error::invalid("library slug key", "no workspace after the slug"))
}

/// The position that ends a `library_items` key.
pub(crate) fn item_position(key: &[u8]) -> Result<u32, Error> {
    key.len()
        .checked_sub(4)
        .and_then(|start| key.get(start..))
        .and_then(|tail| <[u8; 4]>::try_from(tail).ok())
        .map(u32::from_be_bytes)
        .ok_or_else(|| Error::invalid("library item key", format!("{} bytes", key.len())))
}

/// Prefix of the items of one generation of a library in the `library_items` tree.
pub(crate) fn items_prefix(library: Uuid, generation: u64) -> [u8; 24] {
    let mut k = [0; 24];
    k[..16].copy_from_slice(library.as_bytes());
    k[16..].copy_from_slice(&generation.to_be_bytes());
    k
}

/// Key of the item at `position` of one generation of a library.
pub(crate) fn item(library: Uuid, generation: u64, position: u32) -> [u8; 28] {
    let mut k = [0; 28];
    k[..24].copy_from_slice(&items_prefix(library, generation));
    k[24..].copy_from_slice(&position.to_be_bytes());
    k
}

/// Key of a published library in the `library_idx_published` tree.
pub(crate) fn library_published(published_at: &DateTime<Utc>, id: Uuid) -> [u8; 28] {
    let mut k = [0; 28];
    k[..12].copy_from_slice(&ts(published_at));
    k[12..].copy_from_slice(id.as_bytes());
    k
}

/// Prefix of a workspace's libraries in the `library_idx_workspace` tree.
pub(crate) fn workspace_prefix(workspace: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(workspace.len() + 2 + 28);
    push_text(&mut k, workspace);
    k
}

/// Key of a published library in the `library_idx_workspace` tree.
pub(crate) fn library_workspace(
    workspace: &str,
    published_at: &DateTime<Utc>,
    id: Uuid,
) -> Vec<u8> {
    let mut k = workspace_prefix(workspace);
    k.extend_from_slice(&library_published(published_at, id));
    k
}

/// Key of an API key in the `key_idx_created` tree.
pub(crate) fn key_created(created_at: &DateTime<Utc>, id: Uuid) -> [u8; 28] {
    library_published(created_at, id)
}

/// A pass's place in its library's list (`library_passes`): `ts(created_at)` + id, so the
/// list, kept in descending byte order, runs newest first and then by id descending.
pub(crate) fn pass_place(created_at: &DateTime<Utc>, id: Uuid) -> [u8; 28] {
    library_published(created_at, id)
}

/// A big-endian `u64` (counts and counters).
pub(crate) fn decode_u64(what: &'static str, bytes: &[u8]) -> Result<u64, Error> {
    <[u8; 8]>::try_from(bytes)
        .map(u64::from_be_bytes)
        .map_err(|_| Error::invalid(what, format!("{} bytes, expected 8", bytes.len())))
}

/// A big-endian `u32` (the format version).
pub(crate) fn decode_u32(what: &'static str, bytes: &[u8]) -> Result<u32, Error> {
    <[u8; 4]>::try_from(bytes)
        .map(u32::from_be_bytes)
        .map_err(|_| Error::invalid(what, format!("{} bytes, expected 4", bytes.len())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(secs: i64, nanos: u32) -> DateTime<Utc> {
        Utc.timestamp_opt(secs, nanos).single().expect("valid time")
    }

    #[test]
    fn timestamps_sort_like_time() {
        let times = [
            at(-100_000_000_000, 0),
            at(-1, 999_999_999),
            at(0, 0),
            at(0, 1),
            at(1, 0),
            at(1_800_000_000, 5),
            at(100_000_000_000, 0),
        ];
        for w in times.windows(2) {
            assert!(w[0] < w[1]);
            assert!(ts(&w[0]) < ts(&w[1]), "{} vs {}", w[0], w[1]);
        }
    }

    #[test]
    fn text_keys_sort_like_strings_then_id() {
        let words = [
            "", "\0", "\0\0", "\0a", "a", "a\0", "a\0b", "ab", "b", "é", "中",
        ];
        let low = Uuid::from_bytes([0; 16]);
        let high = Uuid::from_bytes([0xFF; 16]);
        let t = at(0, 0);
        let mut keys = Vec::new();
        for w in words {
            for id in [low, high] {
                keys.push(((w, id), asset_index(0, AssetSort::Title, id, &t, &t, w)));
            }
        }
        let mut by_value = keys.clone();
        by_value.sort_by(|a, b| a.0.cmp(&b.0));
        let mut by_bytes = keys;
        by_bytes.sort_by(|a, b| a.1.cmp(&b.1));
        assert_eq!(
            by_value.iter().map(|k| k.0).collect::<Vec<_>>(),
            by_bytes.iter().map(|k| k.0).collect::<Vec<_>>()
        );
    }

    #[test]
    fn codes_round_trip() {
        for t in AssetType::ALL {
            assert_eq!(type_from_code(type_code(t)).ok(), Some(t));
        }
        for s in Scope::ALL {
            assert_eq!(scope_from_code(scope_code(s)).ok(), Some(s));
        }
        assert!(type_from_code(200).is_err());
    }

    #[test]
    fn scope_codes_are_fixed() {
        let codes = Scope::ALL.map(|s| (s.as_str(), scope_code(s)));
        assert_eq!(
            codes,
            [
                ("read:assets", 1),
                ("write:assets", 2),
                ("read:libraries", 3),
                ("write:libraries", 4),
                ("read:paid", 5),
                ("write:passes", 6),
                ("read:events", 7),
                ("admin:webhooks", 8),
                ("admin:keys", 9),
            ]
        );
    }

    #[test]
    fn scopes_and_asset_counts_never_collide() {
        let mut scopes = Vec::new();
        let mut counts = Vec::new();
        for status in [AssetStatus::Published, AssetStatus::Draft, AssetStatus::Any] {
            scopes.push(scope(family(status), None));
            for t in AssetType::ALL {
                scopes.push(scope(family(status), Some(t)));
            }
        }
        for published in [true, false] {
            counts.push(count_assets(published, None));
            for t in AssetType::ALL {
                counts.push(count_assets(published, Some(t)));
            }
        }
        let (n_scopes, n_counts) = (scopes.len(), counts.len());
        scopes.sort_unstable();
        scopes.dedup();
        counts.sort_unstable();
        counts.dedup();
        assert_eq!((scopes.len(), counts.len()), (n_scopes, n_counts));
        assert!(counts.iter().all(|k| is_asset_count(k)));
        for other in [
            COUNT_LIBRARIES.to_vec(),
            count_workspace("ws"),
            count_workspace(""),
        ] {
            assert!(!is_asset_count(&other));
        }
        let draft = scopes_of(false, AssetType::Image);
        assert_eq!(draft, [DRAFTS, DRAFTS + 3, ANY, ANY + 3]);
    }

    #[test]
    fn trailing_id_reads_the_last_16_bytes() {
        let id = Uuid::from_bytes([7; 16]);
        let t = at(5, 5);
        let key = asset_index(3, AssetSort::CreatedAt, id, &t, &t, "x");
        assert_eq!(trailing_id(&key).ok(), Some(id));
        assert!(trailing_id(&[1, 2, 3]).is_err());
    }
}
