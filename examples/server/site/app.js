// The example library page: renders one library of the assetlib API, as a company website
// would, from `?library=<slug>` and an API key with read:libraries and read:assets.
//
// - The key comes from the address (`&key=...` or `#key=...`) or from the form this page shows
//   when it is missing. It is kept in sessionStorage for this tab and removed from the address
//   at once, so it ends up in no bookmark, link or shared URL; the page sends no referrer.
// - Instead of a key, the page takes a browser token (`#token=alt_...`): a short-lived,
//   read-only credential that the site's server mints for it (`POST /api/v1/tokens`) so that
//   no long-lived key reaches the browser. It goes in the fragment, which a browser never
//   sends to a server, and is handled as a key is (sent as `Bearer`, kept for this tab).
// - Everything the API returns is inserted as text (`textContent`, `createElement`), never
//   as markup.
// - Downloads go through signed links: each asset's link is signed when the page renders and
//   signed again on click once it is about to expire; the signed address needs no key.
// - A row of tag buttons, made from the `tags` of the library's assets, filters the cards in
//   the page (no further request): one tag at a time, "All" to show every card again. The
//   tag pressed is kept in the address (`&tag=...`), and an address with one opens filtered.
// - A search box finds the library's assets by their title, tags, description and the text
//   inside their files (`GET /api/v1/search`, scoped to the library), as you type. Each hit
//   shows where it matched; the API's snippets are HTML-escaped with `<mark>` around matches,
//   and are taken apart into text and `<mark>` elements here, never inserted as markup. The
//   words searched are kept in the address (`&q=...`). A pass does not open search, so a
//   buyer's page has no box.

const API = '/api/v1';
const KEY_STORAGE = 'assetlib-site-key';
/** Lifetime asked for each signed download link, in seconds. */
const SIGN_SECONDS = 3600;
/** A signed link this close to its expiry is signed again before use, in milliseconds. */
const RESIGN_MARGIN_MS = 60 * 1000;

const app = document.getElementById('app');

// ---------------------------------------------------------------------------------------------
// DOM helpers: every string goes in as text.

/**
 * Creates an element. `props`: `className`, `text`, `dataset`, `attrs` (fixed attribute
 * names), and any other property set directly (`href`, `src`, `type`, `open`...).
 */
function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null) continue;
    if (name === 'text') node.textContent = String(value);
    else if (name === 'dataset') Object.assign(node.dataset, value);
    else if (name === 'attrs') {
      for (const [attr, v] of Object.entries(value)) node.setAttribute(attr, String(v));
    } else node[name] = value;
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  }
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Stroke icons on a 24-unit grid: each is a list of path data. */
const ICONS = {
  file: ['M14 3H6a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V9z', 'M14 3v6h6', 'M8 13h8', 'M8 17h5'],
  image: [
    'M5 4h14a1 1 0 0 1 1 1v14a1 1 0 0 1-1 1H5a1 1 0 0 1-1-1V5a1 1 0 0 1 1-1z',
    'M9 11a2 2 0 1 0 0-4 2 2 0 0 0 0 4z',
    'M20 15l-5-5L5 20',
  ],
  video: ['M4 6h10a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2V8a2 2 0 0 1 2-2z', 'M16 10.5l6-3.5v10l-6-3.5z'],
  audio: ['M9 18V5l11-2v13', 'M6 21a3 3 0 1 0 0-6 3 3 0 0 0 0 6z', 'M17 19a3 3 0 1 0 0-6 3 3 0 0 0 0 6z'],
  link: [
    'M10 14a4 4 0 0 0 5.66 0l3-3a4 4 0 0 0-5.66-5.66l-1 1',
    'M14 10a4 4 0 0 0-5.66 0l-3 3a4 4 0 0 0 5.66 5.66l1-1',
  ],
  folder: ['M3 7a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v8a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z'],
  download: ['M12 4v11', 'M7 10l5 5 5-5', 'M5 20h14'],
  chevron: ['M9 6l6 6-6 6'],
  lock: ['M6 11h12a1 1 0 0 1 1 1v8a1 1 0 0 1-1 1H6a1 1 0 0 1-1-1v-8a1 1 0 0 1 1-1z', 'M8 11V7a4 4 0 0 1 8 0v4'],
  alert: ['M12 21a9 9 0 1 0 0-18 9 9 0 0 0 0 18z', 'M12 8v5', 'M12 16.5v.01'],
  tag: ['M20.6 13.4l-7.2 7.2a2 2 0 0 1-2.8 0L3 13V3h10l7.6 7.6a2 2 0 0 1 0 2.8z', 'M7.5 7.5h.01'],
  grid: ['M4 4h7v7H4z', 'M13 4h7v7h-7z', 'M4 13h7v7H4z', 'M13 13h7v7h-7z'],
  search: ['M11 19a8 8 0 1 0 0-16 8 8 0 0 0 0 16z', 'M21 21l-4.35-4.35'],
};

function icon(name, className = 'icon') {
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('fill', 'none');
  svg.setAttribute('stroke', 'currentColor');
  svg.setAttribute('stroke-width', '2');
  svg.setAttribute('stroke-linecap', 'round');
  svg.setAttribute('stroke-linejoin', 'round');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', className);
  for (const d of ICONS[name] ?? ICONS.file) {
    const path = document.createElementNS(SVG_NS, 'path');
    path.setAttribute('d', d);
    svg.append(path);
  }
  return svg;
}

// ---------------------------------------------------------------------------------------------
// The key and the address.

function storedKey() {
  try {
    return sessionStorage.getItem(KEY_STORAGE) || '';
  } catch {
    return '';
  }
}

function storeKey(key) {
  try {
    if (key) sessionStorage.setItem(KEY_STORAGE, key);
    else sessionStorage.removeItem(KEY_STORAGE);
  } catch {
    // Storage is off: the key lives as long as this page.
  }
}

/**
 * Reads the slug, the key (or a browser token) and a buyer's pass from the address, and takes
 * the key or token out of the address. A pass is read from the fragment only
 * (`#pass=alp_...`), which a browser never sends to a server; it stays there, so the buyer's
 * link keeps working. So is a token (`#token=alt_...`).
 */
function readAddress() {
  const url = new URL(window.location.href);
  const hash = new URLSearchParams(url.hash.replace(/^#/, ''));
  const slug = (url.searchParams.get('library') || hash.get('library') || '').trim();
  const pass = (hash.get('pass') || '').trim();
  const token = (hash.get('token') || '').trim();
  const key = (url.searchParams.get('key') || hash.get('key') || '').trim()
    || (token.startsWith('alt_') ? token : '');
  if (url.searchParams.has('key') || hash.has('key') || hash.has('token')) {
    url.searchParams.delete('key');
    hash.delete('key');
    hash.delete('token');
    const rest = hash.toString();
    url.hash = rest ? `#${rest}` : '';
    window.history.replaceState(null, '', url.pathname + url.search + url.hash);
  }
  if (key) storeKey(key);
  return { slug, key: key || storedKey(), pass: pass.startsWith('alp_') ? pass : '' };
}

/** The `Authorization` value of a credential: a library pass (`alp_...`) or an API key. */
function authorization(credential) {
  return credential.startsWith('alp_') ? `Pass ${credential}` : `Bearer ${credential}`;
}

/** Puts `slug` in the address (never the key). */
function showSlugInAddress(slug) {
  const url = new URL(window.location.href);
  url.searchParams.set('library', slug);
  window.history.replaceState(null, '', url.pathname + url.search);
}

// ---------------------------------------------------------------------------------------------
// The API.

class ApiError extends Error {
  constructor(status, error, message) {
    super(message);
    this.status = status;
    this.error = error;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** At most this many API calls at once, so a big library stays within a key's rate limit. */
const MAX_IN_FLIGHT = 4;
let inFlight = 0;
const waiting = [];

async function slot() {
  if (inFlight >= MAX_IN_FLIGHT) await new Promise((resolve) => waiting.push(resolve));
  inFlight += 1;
}

function release() {
  inFlight -= 1;
  waiting.shift()?.();
}

/** One GET of the API with the key; a 429 is tried again after its `Retry-After`. */
async function api(path, key) {
  await slot();
  try {
    return await call(path, key);
  } finally {
    release();
  }
}

async function call(path, key) {
  let response;
  for (let attempt = 0; ; attempt += 1) {
    try {
      response = await fetch(API + path, {
        headers: { Authorization: authorization(key), Accept: 'application/json' },
        credentials: 'omit',
        cache: 'no-store',
        referrerPolicy: 'no-referrer',
      });
    } catch {
      throw new ApiError(0, 'Network error', 'The server could not be reached. Try again in a moment.');
    }
    if (response.status !== 429 || attempt >= 3) break;
    const seconds = Number(response.headers.get('Retry-After'));
    await sleep(1000 * (Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 10) : 1));
  }
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    const error = typeof body?.error === 'string' ? body.error : `HTTP ${response.status}`;
    const message = typeof body?.message === 'string' ? body.message : response.statusText;
    throw new ApiError(response.status, error, message);
  }
  return body;
}

/** A signed link's address, if it is one this page may follow (same site, http or https). */
function safeUrl(value) {
  if (typeof value !== 'string' || value === '') return null;
  try {
    const url = new URL(value, window.location.href);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    return url.origin === window.location.origin ? url.pathname + url.search : url.href;
  } catch {
    return null;
  }
}

/** Asks for a signed download link: `{url, expiresAt}` (ms since the epoch, or NaN). */
async function sign(path, key) {
  const body = await api(path, key);
  const url = safeUrl(body?.data?.url);
  if (!url) throw new ApiError(0, 'Bad answer', 'The server sent no download link.');
  return { url, expiresAt: Date.parse(body?.data?.expires_at ?? '') };
}

/**
 * Whether a signed asset link has something to download: a `HEAD` (which counts no download)
 * that is not a 404. Library assets may have no file yet (a video to come, say).
 */
async function hasFile(url) {
  await slot();
  try {
    const response = await fetch(url, {
      method: 'HEAD',
      redirect: 'manual',
      credentials: 'omit',
      cache: 'no-store',
      referrerPolicy: 'no-referrer',
    });
    return response.status !== 404;
  } catch {
    return true;
  } finally {
    release();
  }
}

/**
 * Makes `link` a download button for the signed link `path` answers: signed now, and signed
 * again on click when it is about to expire. With `probe`, a link to nothing (404) is shown
 * as unavailable. Resolves once the first signing is done.
 */
async function armDownload(link, path, key, probe = false) {
  let signed = null;
  const fresh = () =>
    signed && (Number.isNaN(signed.expiresAt) || signed.expiresAt - Date.now() > RESIGN_MARGIN_MS);
  const apply = (s) => {
    signed = s;
    link.href = s.url;
    link.removeAttribute('aria-disabled');
    link.removeAttribute('tabindex');
    link.dataset.signed = 'true';
    if (!Number.isNaN(s.expiresAt)) link.dataset.expiresAt = new Date(s.expiresAt).toISOString();
  };
  link.addEventListener('click', async (event) => {
    if (fresh()) return;
    event.preventDefault();
    try {
      apply(await sign(path, key));
      window.location.assign(signed.url);
    } catch (e) {
      link.title = e.message;
    }
  });
  const unavailable = (reason) => {
    link.dataset.signed = 'false';
    link.title = reason;
    link.lastChild.textContent = 'Unavailable';
  };
  let first;
  try {
    first = await sign(path, key);
  } catch (e) {
    // A paid file without a pass: no download button, the price says how to get it.
    if (e instanceof ApiError && e.status === 403 && link.dataset.paidLibrary === 'true') {
      link.replaceWith(h('span', { className: 'pill', dataset: { role: 'for-sale' }, text: 'Included with purchase' }));
      return;
    }
    unavailable(e.message);
    return;
  }
  if (probe && !(await hasFile(first.url))) unavailable('This asset has no file to download yet.');
  else apply(first);
}

function downloadButton(label, className, role, paidLibrary = false) {
  return h(
    'a',
    {
      className,
      dataset: { role, signed: 'pending', paidLibrary: String(paidLibrary) },
      attrs: { 'aria-disabled': 'true', tabindex: '-1', download: '' },
    },
    icon('download'),
    h('span', { text: label }),
  );
}

// ---------------------------------------------------------------------------------------------
// Rendering.

const TYPES = {
  pdf: { label: 'PDF', tone: 'pdf', icon: 'file' },
  image: { label: 'Image', tone: 'image', icon: 'image' },
  video: { label: 'Video', tone: 'video', icon: 'video' },
  audio: { label: 'Audio', tone: 'audio', icon: 'audio' },
  document: { label: 'Document', tone: 'document', icon: 'file' },
  external_video: { label: 'Video link', tone: 'video', icon: 'video' },
  link: { label: 'Link', tone: 'other', icon: 'link' },
  collection: { label: 'Collection', tone: 'other', icon: 'folder' },
  git: { label: 'Git', tone: 'other', icon: 'link' },
};

function typeOf(asset) {
  const known = Object.hasOwn(TYPES, asset.asset_type) ? TYPES[asset.asset_type] : null;
  return known ?? { label: String(asset.asset_type ?? 'Asset'), tone: 'other', icon: 'file' };
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

function formatPrice(price, currency) {
  if (typeof price !== 'number') return 'Paid';
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency: currency || 'USD' }).format(price);
  } catch {
    return `${price.toFixed(2)} ${currency ?? ''}`.trim();
  }
}

/** Whether a value is an id as the API writes them (a hyphenated UUID). */
function isId(value) {
  return typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value);
}

/** A #RGB or #RRGGBB colour, or null. */
function hexColour(value) {
  return typeof value === 'string' && /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i.test(value) ? value : null;
}

/** Where a cover image or thumbnail is: an http(s) address, or a file of the file store. */
function imageUrl(value) {
  if (typeof value !== 'string' || value.trim() === '') return null;
  const path = /^(?:https?:)?\//i.test(value) ? value : `/files/${value.replace(/^\/+/, '')}`;
  return safeUrl(path);
}

/** The id of the asset a cover path names (`/api/v1/assets/{id}/...`), or null. */
function coverAssetId(value) {
  if (typeof value !== 'string') return null;
  const match = /^(?:https?:\/\/[^/]+)?\/api\/v1\/assets\/([^/?#]+)(?:[/?#]|$)/i.exec(value);
  return match && isId(match[1]) ? match[1] : null;
}

/**
 * The cover picture. A cover path that names an asset of this API is shown through that
 * asset's image variants, the size the screen needs: the `card`, `cover` and `full` presets,
 * which a public asset serves without a key. Any other asset's cover is signed with the
 * page's key (a signed `cover` preset), and shown as its path says when that fails.
 */
function renderCoverImage(path, key) {
  const src = imageUrl(path);
  if (!src) return null;
  const img = h('img', { className: 'cover-image', src, alt: '', dataset: { role: 'cover-image' } });
  const id = coverAssetId(path);
  if (id) {
    const preset = (name) => `${API}/assets/${encodeURIComponent(id)}/image?preset=${name}`;
    img.srcset = `${preset('card')} 640w, ${preset('cover')} 1600w, ${preset('full')} 2048w`;
    img.sizes = '100vw';
    img.dataset.variant = 'preset';
  }
  img.addEventListener('load', () => {
    img.dataset.loaded = String(img.naturalWidth);
    img.dataset.source = img.currentSrc;
  });
  img.addEventListener('error', async () => {
    const state = img.dataset.variant;
    if (state === 'signing') return;
    if (state !== 'preset') {
      img.remove();
      return;
    }
    // The srcset stays until the signed address is there, so the browser asks for nothing
    // else meanwhile; then both change at once.
    img.dataset.variant = 'signing';
    let url = null;
    try {
      const query = `preset=cover&expires_in=${SIGN_SECONDS}`;
      url = (await sign(`/assets/${encodeURIComponent(id)}/image-url?${query}`, key)).url;
    } catch {
      url = null;
    }
    img.removeAttribute('srcset');
    img.removeAttribute('sizes');
    img.dataset.variant = url ? 'signed' : 'path';
    img.src = url ?? src;
  });
  return img;
}

function renderCover(library, assetCount, buyer, key) {
  const overlayColour = hexColour(library.cover_overlay_color);
  const opacity = Number(library.cover_overlay_opacity);
  const overlayOpacity = Number.isFinite(opacity) ? Math.min(1, Math.max(0, opacity)) : 0.5;
  const overlay = h('div', {
    className: 'cover-overlay',
    dataset: {
      role: 'cover-overlay',
      overlayColor: overlayColour ?? '',
      overlayOpacity: overlayColour ? String(overlayOpacity) : '0',
    },
  });
  if (overlayColour) {
    overlay.style.backgroundColor = overlayColour;
    overlay.style.opacity = String(overlayOpacity);
  }
  const cover = renderCoverImage(library.cover_image_path, key);
  const meta = h('div', { className: 'cover-meta' });
  if (library.is_paid && buyer) {
    meta.append(h('span', { className: 'pill pill-price', dataset: { role: 'purchased' } }, icon('tag'),
      h('span', { text: 'Purchased' })));
  } else if (library.is_paid) {
    meta.append(
      h('span', { className: 'pill pill-price', dataset: { role: 'price' } }, icon('tag'),
        h('span', { text: formatPrice(library.price, library.currency) })),
    );
  }
  if (library.show_asset_count) {
    meta.append(
      h('span', { className: 'pill', dataset: { role: 'asset-count', count: String(assetCount) } },
        icon('grid'), h('span', { text: plural(assetCount, 'asset') })),
    );
  }
  if (library.allow_bulk_download) {
    meta.append(downloadButton('Download all', 'button button-light', 'download-all', library.is_paid === true));
  }
  return h(
    'section',
    { className: 'cover', dataset: { role: 'cover' } },
    cover,
    overlay,
    h(
      'div',
      { className: 'wrap' },
      h('p', { className: 'eyebrow', text: 'Asset library' }),
      h('h1', { id: 'library-title', text: library.title ?? '' }),
      library.description ? h('p', { className: 'cover-description', text: library.description }) : null,
      meta.childElementCount ? meta : null,
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Placeholders: a ThumbHash (https://evanw.github.io/thumbhash/, base64 in
// `thumbnail_placeholder`) decodes to a blurred picture of the thumbnail, shown behind it until
// it has loaded.

/** The approximate width / height of a ThumbHash's picture. */
function thumbHashRatio(hash) {
  const lengths = hash[3];
  const hasAlpha = hash[2] & 0x80;
  const landscape = hash[4] & 0x80;
  const lx = landscape ? (hasAlpha ? 5 : 7) : lengths & 7;
  const ly = landscape ? lengths & 7 : hasAlpha ? 5 : 7;
  return lx / ly;
}

/** Decodes a ThumbHash to `{ w, h, rgba }`, at most 32 pixels a side. */
function thumbHashToRGBA(hash) {
  const header24 = hash[0] | (hash[1] << 8) | (hash[2] << 16);
  const header16 = hash[3] | (hash[4] << 8);
  const lDc = (header24 & 63) / 63;
  const pDc = ((header24 >> 6) & 63) / 31.5 - 1;
  const qDc = ((header24 >> 12) & 63) / 31.5 - 1;
  const lScale = ((header24 >> 18) & 31) / 31;
  const hasAlpha = header24 >> 23;
  const pScale = ((header16 >> 3) & 63) / 63;
  const qScale = ((header16 >> 9) & 63) / 63;
  const landscape = header16 >> 15;
  const lx = Math.max(3, landscape ? (hasAlpha ? 5 : 7) : header16 & 7);
  const ly = Math.max(3, landscape ? header16 & 7 : hasAlpha ? 5 : 7);
  const aDc = hasAlpha ? (hash[5] & 15) / 15 : 1;
  const aScale = (hash[5] >> 4) / 15;
  // The AC coefficients: 4 bits each, low nibble first, after the header.
  const acStart = hasAlpha ? 6 : 5;
  let acIndex = 0;
  const channel = (nx, ny, scale) => {
    const ac = [];
    for (let cy = 0; cy < ny; cy++) {
      for (let cx = cy ? 0 : 1; cx * ny < nx * (ny - cy); cx++) {
        const nibble = (hash[acStart + (acIndex >> 1)] >> ((acIndex & 1) << 2)) & 15;
        ac.push((nibble / 7.5 - 1) * scale);
        acIndex++;
      }
    }
    return ac;
  };
  const lAc = channel(lx, ly, lScale);
  const pAc = channel(3, 3, pScale * 1.25);
  const qAc = channel(3, 3, qScale * 1.25);
  const aAc = hasAlpha ? channel(5, 5, aScale) : null;
  const ratio = thumbHashRatio(hash);
  const w = Math.round(ratio > 1 ? 32 : 32 * ratio);
  const height = Math.round(ratio > 1 ? 32 / ratio : 32);
  const rgba = new Uint8ClampedArray(w * height * 4);
  const cxStop = Math.max(lx, hasAlpha ? 5 : 3);
  const cyStop = Math.max(ly, hasAlpha ? 5 : 3);
  const fx = new Float64Array(cxStop);
  const fy = new Float64Array(cyStop);
  for (let y = 0, i = 0; y < height; y++) {
    for (let x = 0; x < w; x++, i += 4) {
      let l = lDc;
      let p = pDc;
      let q = qDc;
      let a = aDc;
      for (let cx = 0; cx < cxStop; cx++) fx[cx] = Math.cos((Math.PI / w) * (x + 0.5) * cx);
      for (let cy = 0; cy < cyStop; cy++) fy[cy] = Math.cos((Math.PI / height) * (y + 0.5) * cy);
      for (let cy = 0, j = 0; cy < ly; cy++) {
        const fy2 = fy[cy] * 2;
        for (let cx = cy ? 0 : 1; cx * ly < lx * (ly - cy); cx++, j++) l += lAc[j] * fx[cx] * fy2;
      }
      for (let cy = 0, j = 0; cy < 3; cy++) {
        for (let cx = cy ? 0 : 1; cx < 3 - cy; cx++, j++) {
          const f = fx[cx] * fy[cy] * 2;
          p += pAc[j] * f;
          q += qAc[j] * f;
        }
      }
      if (aAc) {
        for (let cy = 0, j = 0; cy < 5; cy++) {
          for (let cx = cy ? 0 : 1; cx < 5 - cy; cx++, j++) a += aAc[j] * fx[cx] * fy[cy] * 2;
        }
      }
      const b = l - (2 / 3) * p;
      const r = (3 * l - b + q) / 2;
      const g = r - q;
      rgba[i] = 255 * Math.min(1, r);
      rgba[i + 1] = 255 * Math.min(1, g);
      rgba[i + 2] = 255 * Math.min(1, b);
      rgba[i + 3] = 255 * Math.min(1, a);
    }
  }
  return { w, h: height, rgba };
}

/** A data: URL of the picture a base64 ThumbHash stands for, or null when it is none. */
function placeholderUrl(base64) {
  if (typeof base64 !== 'string') return null;
  try {
    const hash = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    if (hash.length < 5) return null;
    const picture = thumbHashToRGBA(hash);
    if (!(picture.w > 0 && picture.h > 0)) return null;
    const canvas = document.createElement('canvas');
    canvas.width = picture.w;
    canvas.height = picture.h;
    canvas.getContext('2d').putImageData(new ImageData(picture.rgba, picture.w, picture.h), 0, 0);
    return canvas.toDataURL('image/png');
  } catch {
    return null;
  }
}

/** A playing time as `m:ss` (or `h:mm:ss`), or null. */
function formatDuration(seconds) {
  if (typeof seconds !== 'number' || !(seconds > 0)) return null;
  const total = Math.max(1, Math.round(seconds));
  const [hours, minutes, secs] = [Math.floor(total / 3600), Math.floor(total / 60) % 60, total % 60];
  const two = (n) => String(n).padStart(2, '0');
  return hours ? `${hours}:${two(minutes)}:${two(secs)}` : `${minutes}:${two(secs)}`;
}

function renderThumb(asset, type) {
  const placeholder = () => h('div', { className: 'thumb-placeholder' }, icon(type.icon));
  const duration = formatDuration(asset.duration_seconds);
  const badge = duration ? h('span', { className: 'duration', dataset: { role: 'duration' }, text: duration }) : null;
  const src = imageUrl(asset.thumbnail_url);
  if (!src) return h('div', { className: 'thumb' }, placeholder(), badge);
  const img = h('img', { src, alt: '', decoding: 'async', dataset: { role: 'thumbnail' } });
  const thumb = h('div', { className: 'thumb' }, img, badge);
  // Images and PDFs are shown through the API's image variants, the size the screen needs:
  // the `thumb` and `card` presets, which a public asset serves without a key. For any other
  // asset the browser's request is refused, and the card shows its thumbnail instead.
  const variants = (asset.asset_type === 'image' || asset.asset_type === 'pdf') && isId(asset.id);
  if (variants) {
    const preset = (name) => `${API}/assets/${encodeURIComponent(asset.id)}/image?preset=${name}`;
    img.srcset = `${preset('thumb')} 320w, ${preset('card')} 640w`;
    img.sizes = '(max-width: 600px) 50vw, 300px';
    thumb.dataset.variant = 'preset';
  }
  const blurred = placeholderUrl(asset.thumbnail_placeholder);
  if (blurred) {
    thumb.style.backgroundImage = `url("${blurred}")`;
    thumb.dataset.placeholder = 'shown';
    img.classList.add('loading');
  }
  img.addEventListener('load', () => {
    img.classList.remove('loading');
    thumb.dataset.loaded = String(img.naturalWidth);
    thumb.dataset.source = img.currentSrc;
  });
  img.addEventListener('error', () => {
    if (img.hasAttribute('srcset')) {
      // Not served without a key: the thumbnail (the `src`) instead.
      img.removeAttribute('srcset');
      img.removeAttribute('sizes');
      thumb.dataset.variant = 'thumbnail';
      return;
    }
    img.replaceWith(placeholder());
  });
  return thumb;
}

function renderAsset(asset, library, key, signing) {
  const type = typeOf(asset);
  const tags = tagsOf(asset);
  const card = h(
    'article',
    {
      className: `card tone-${type.tone}`,
      dataset: {
        role: 'asset',
        assetId: asset.id,
        assetType: asset.asset_type,
        tags: tags.map((t) => t.key).join(','),
      },
    },
    renderThumb(asset, type),
  );
  cardTags.set(card, new Set(tags.map((t) => t.key)));
  const body = h(
    'div',
    { className: 'card-body' },
    h('span', { className: 'type', dataset: { role: 'asset-type' }, text: type.label }),
    h('h3', { dataset: { role: 'asset-title' }, text: asset.title ?? '' }),
    asset.description ? h('p', { className: 'card-description', text: asset.description }) : null,
    tags.length
      ? h(
          'ul',
          { className: 'card-tags', dataset: { role: 'asset-tags' }, attrs: { 'aria-label': 'Tags' } },
          tags.map((t) => h('li', { text: t.label })),
        )
      : null,
  );
  if (library.allow_individual_downloads) {
    const link = downloadButton('Download', 'button button-quiet', 'download', library.is_paid === true);
    body.append(h('div', { className: 'card-actions' }, link));
    const path = `/assets/${encodeURIComponent(asset.id)}/download-url?expires_in=${SIGN_SECONDS}`;
    signing.push(armDownload(link, path, key, true));
  }
  card.append(body);
  return card;
}

function renderGrid(assets, library, key, signing) {
  return h('div', { className: 'grid' }, assets.map((a) => renderAsset(a, library, key, signing)));
}

function renderSection(section, library, key, signing) {
  const assets = Array.isArray(section.assets) ? section.assets : [];
  const collapsed = section.collapsed_by_default === true;
  return h(
    'details',
    {
      className: 'block',
      open: !collapsed,
      dataset: { role: 'section', sectionId: section.id, collapsed: String(collapsed) },
    },
    h(
      'summary',
      {},
      h('span', { className: 'chevron' }, icon('chevron')),
      h(
        'div',
        { className: 'block-heading' },
        h('h2', { dataset: { role: 'section-title' }, text: section.title ?? '' }),
        section.description ? h('p', { text: section.description }) : null,
      ),
      library.show_asset_count
        ? h('span', { className: 'count', dataset: { total: String(assets.length) }, text: plural(assets.length, 'asset') })
        : null,
    ),
    h(
      'div',
      { className: 'block-body' },
      assets.length
        ? renderGrid(assets, library, key, signing)
        : h('p', { className: 'empty', text: 'Nothing in this section yet.' }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// Filtering by tag: in the page, from the library detail's `tags` of each asset. Tags are
// compared as the API compares them: trimmed, ignoring case; a button shows the first spelling
// met in page order.

/** The tag keys of each card. */
const cardTags = new WeakMap();

/** The tags of a library asset, each once: `{ key, label }`, in the asset's order. */
function tagsOf(asset) {
  const seen = new Set();
  const tags = [];
  for (const tag of Array.isArray(asset.tags) ? asset.tags : []) {
    if (typeof tag !== 'string') continue;
    const label = tag.trim();
    const key = label.toLowerCase();
    if (!label || seen.has(key)) continue;
    seen.add(key);
    tags.push({ key, label });
  }
  return tags;
}

/** Every tag of `assets` with how many have it: most used first, then by name. */
function tagCounts(assets) {
  const counts = new Map();
  for (const asset of assets) {
    for (const { key, label } of tagsOf(asset)) {
      const known = counts.get(key);
      if (known) known.count += 1;
      else counts.set(key, { key, label, count: 1 });
    }
  }
  return [...counts.values()].sort((a, b) => b.count - a.count || a.label.localeCompare(b.label));
}

/**
 * The row of tag buttons over `main`'s cards, and the line that says what is shown; null when
 * no asset has a tag. Pressing a tag shows only the cards with it (and the blocks holding any),
 * pressing it again or "All" shows everything.
 */
function renderTagFilter(assets, main) {
  const tags = tagCounts(assets);
  if (!tags.length) return null;
  const status = h('p', { className: 'filter-status', dataset: { role: 'filter-status' }, attrs: { role: 'status' } });
  const button = (key, label, count) =>
    h(
      'button',
      {
        type: 'button',
        className: 'tag-button',
        dataset: { role: 'tag-button', tag: key },
        attrs: {
          'aria-pressed': key ? 'false' : 'true',
          'aria-label': key ? `${label}, ${plural(count, 'asset')}` : `All, ${plural(count, 'asset')}`,
        },
      },
      h('span', { text: label }),
      key ? h('span', { className: 'tag-count', attrs: { 'aria-hidden': 'true' }, text: String(count) }) : null,
    );
  const buttons = [button('', 'All', assets.length), ...tags.map((t) => button(t.key, t.label, t.count))];
  let current = '';
  const apply = (key) => {
    current = key;
    // From now on only the status line speaks: the page's live region would read out every
    // card a filter shows again.
    app.setAttribute('aria-live', 'off');
    for (const b of buttons) b.setAttribute('aria-pressed', String(b.dataset.tag === key));
    let shown = 0;
    for (const card of main.querySelectorAll('[data-role="asset"]')) {
      const visible = !key || (cardTags.get(card)?.has(key) ?? false);
      card.hidden = !visible;
      if (visible) shown += 1;
    }
    for (const block of main.querySelectorAll('.block')) {
      const cards = block.querySelectorAll('[data-role="asset"]');
      const visible = [...cards].filter((c) => !c.hidden).length;
      block.hidden = Boolean(key) && visible === 0;
      const count = block.querySelector('.count[data-total]');
      if (count) {
        const total = Number(count.dataset.total);
        count.textContent = key ? `${visible} of ${plural(total, 'asset')}` : plural(total, 'asset');
      }
    }
    main.dataset.tagFilter = key;
    const tag = tags.find((t) => t.key === key);
    status.textContent = tag
      ? `Showing ${plural(shown, 'asset')} tagged “${tag.label}”.`
      : `Showing all ${plural(shown, 'asset')}.`;
  };
  for (const b of buttons) {
    b.addEventListener('click', () => {
      apply(b.dataset.tag && b.dataset.tag !== current ? b.dataset.tag : '');
      // The filter is part of the address, so a filtered page can be linked to.
      const url = new URL(window.location.href);
      if (current) url.searchParams.set('tag', current);
      else url.searchParams.delete('tag');
      window.history.replaceState(null, '', url.pathname + url.search + url.hash);
    });
  }
  // A `tag` in the address (`?library=...&tag=print`) opens the page filtered by it.
  const asked = (new URL(window.location.href).searchParams.get('tag') || '').trim().toLowerCase();
  if (asked && tags.some((t) => t.key === asked)) apply(asked);
  const labelId = 'tag-filter-label';
  const row = h(
    'div',
    { className: 'tag-filter', dataset: { role: 'tag-filter' }, attrs: { role: 'group', 'aria-labelledby': labelId } },
    h('span', { className: 'tag-filter-label', id: labelId }, icon('tag'), h('span', { text: 'Filter by tag' })),
    buttons,
  );
  return [row, status];
}

// ---------------------------------------------------------------------------------------------
// Search.

/** What the API escapes in a snippet, as the text it stands for. */
const ENTITIES = { '&lt;': '<', '&gt;': '>', '&amp;': '&', '&quot;': '"', '&#39;': "'" };

/**
 * A snippet of the API (HTML-escaped text with `<mark>` around matches) as nodes: text nodes
 * and `<mark>` elements, built here; nothing of it is parsed as markup.
 */
function snippetNodes(snippet) {
  const text = (piece) => piece.replace(/&(?:lt|gt|amp|quot|#39);/g, (e) => ENTITIES[e]);
  return String(snippet)
    .split(/(<mark>[^<]*<\/mark>)/)
    .filter((piece) => piece !== '')
    .map((piece) => {
      const marked = /^<mark>([^<]*)<\/mark>$/.exec(piece);
      return marked ? h('mark', { text: text(marked[1]) }) : document.createTextNode(text(piece));
    });
}

function renderHit(hit) {
  const asset = hit.asset ?? {};
  const matches = Array.isArray(hit.matches) ? hit.matches : [];
  return h(
    'li',
    { className: 'search-hit', dataset: { role: 'search-hit', assetId: String(asset.id ?? '') } },
    h('span', { className: 'type', text: typeOf(asset).label }),
    h('h3', { dataset: { role: 'search-hit-title' }, text: asset.title ?? '' }),
    matches.map((m) =>
      h(
        'p',
        { className: 'snippet', dataset: { role: 'snippet', field: String(m.field ?? ''), page: String(m.page ?? '') } },
        Number.isInteger(m.page) ? h('span', { className: 'snippet-page', text: `Page ${m.page}` }) : null,
        snippetNodes(m.snippet ?? ''),
      ),
    ),
  );
}

/** The search box of `library`: hits as you type, the words kept in the address. */
function renderSearch(library, key) {
  const input = h('input', {
    type: 'search',
    name: 'q',
    maxLength: 500,
    placeholder: 'Search titles, tags and the text inside files',
    dataset: { role: 'search-input' },
    attrs: { 'aria-label': 'Search this library', autocomplete: 'off' },
  });
  const status = h('p', { className: 'search-status', dataset: { role: 'search-status' }, attrs: { role: 'status' } });
  const hits = h('ol', { className: 'search-hits', dataset: { role: 'search-hits' } });
  const form = h(
    'form',
    { className: 'search', dataset: { role: 'search' }, attrs: { role: 'search' } },
    h('div', { className: 'search-row' }, icon('search'), input),
    status,
    hits,
  );
  let asked = 0;
  let timer = null;
  const run = async (q) => {
    const mine = (asked += 1);
    const url = new URL(window.location.href);
    if (q) url.searchParams.set('q', q);
    else url.searchParams.delete('q');
    window.history.replaceState(null, '', url.pathname + url.search + url.hash);
    if (!q) {
      hits.replaceChildren();
      status.textContent = '';
      form.dataset.state = 'idle';
      return;
    }
    form.dataset.state = 'searching';
    const query = `q=${encodeURIComponent(q)}&library_id=${encodeURIComponent(library.id)}&per_page=20`;
    try {
      const body = await api(`/search?${query}`, key);
      if (mine !== asked) return;
      const found = Array.isArray(body?.data) ? body.data : [];
      hits.replaceChildren(...found.map(renderHit));
      const total = Number(body?.pagination?.total ?? found.length);
      status.textContent = total ? `${plural(total, 'asset')} found.` : 'Nothing found.';
      form.dataset.state = 'done';
    } catch (e) {
      if (mine !== asked) return;
      hits.replaceChildren();
      status.textContent = e instanceof ApiError && e.status === 400
        ? e.message
        : e instanceof ApiError && e.status === 403
          ? 'This key cannot search.'
          : e.message || 'The search failed.';
      form.dataset.state = 'error';
    }
  };
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(() => run(input.value.trim()), 250);
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    clearTimeout(timer);
    run(input.value.trim());
  });
  const given = (new URL(window.location.href).searchParams.get('q') || '').trim();
  const first = given ? ((input.value = given), run(given)) : Promise.resolve();
  return { form, first };
}

/** Renders `library` (the API's detail with assets); resolves once every link is signed. */
async function renderLibrary(library, key) {
  const sections = (Array.isArray(library.sections) ? library.sections : [])
    .map((s, i) => ({ s, i }))
    .sort((a, b) => (a.s.display_order ?? 0) - (b.s.display_order ?? 0) || a.i - b.i)
    .map(({ s }) => s);
  const unsectioned = Array.isArray(library.unsectioned_assets) ? library.unsectioned_assets : [];
  const count = sections.reduce((n, s) => n + (s.assets?.length ?? 0), 0) + unsectioned.length;
  const signing = [];

  document.title = `${library.title ?? 'Library'} · Asset library`;
  const main = h('main', { className: 'wrap' });
  for (const section of sections) main.append(renderSection(section, library, key, signing));
  if (unsectioned.length) {
    main.append(
      h(
        'section',
        { className: 'block', dataset: { role: 'unsectioned' } },
        h(
          'div',
          { className: 'block-header' },
          h('div', { className: 'block-heading' }, h('h2', { text: sections.length ? 'More assets' : 'Assets' })),
          library.show_asset_count
            ? h('span', { className: 'count', dataset: { total: String(unsectioned.length) }, text: plural(unsectioned.length, 'asset') })
            : null,
        ),
        h('div', { className: 'block-body' }, renderGrid(unsectioned, library, key, signing)),
      ),
    );
  }
  if (!count) main.append(h('p', { className: 'empty', text: 'This library has no assets yet.' }));
  const filter = renderTagFilter([...sections.flatMap((s) => (Array.isArray(s.assets) ? s.assets : [])), ...unsectioned], main);
  if (filter) main.prepend(...filter);
  // A pass opens no search: a buyer's page has no box.
  if (!key.startsWith('alp_')) {
    const search = renderSearch(library, key);
    main.prepend(search.form);
    signing.push(search.first);
  }

  const cover = renderCover(library, count, key.startsWith('alp_'), key);
  app.replaceChildren(cover, main);
  const all = cover.querySelector('[data-role="download-all"]');
  if (all) signing.push(armDownload(all, `/libraries/${encodeURIComponent(library.id)}/download-url`, key));
  await Promise.allSettled(signing);
}

function keyForm(slug, submitLabel) {
  const slugInput = h('input', {
    id: 'library-slug',
    name: 'library',
    value: slug,
    required: true,
    attrs: { autocomplete: 'off', spellcheck: 'false', placeholder: 'sample-brand-library' },
  });
  const keyInput = h('input', {
    id: 'api-key',
    name: 'key',
    type: 'password',
    required: true,
    attrs: { autocomplete: 'off', spellcheck: 'false', placeholder: 'alk_…' },
  });
  const form = h(
    'form',
    { className: 'key-form', dataset: { role: 'key-form' } },
    h('div', { className: 'field' }, h('label', { htmlFor: 'library-slug', text: 'Library' }), slugInput),
    h(
      'div',
      { className: 'field' },
      h('label', { htmlFor: 'api-key', text: 'API key' }),
      keyInput,
      h('small', { text: 'A key with read:libraries and read:assets. It stays in this tab.' }),
    ),
    h('button', { className: 'button', type: 'submit', text: submitLabel }),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const newSlug = slugInput.value.trim();
    const key = keyInput.value.trim();
    if (!newSlug || !key) return;
    storeKey(key);
    showSlugInAddress(newSlug);
    load(newSlug, key);
  });
  return form;
}

function showState(state, iconName, neutral, title, message, extra) {
  document.body.dataset.state = state;
  app.setAttribute('aria-live', 'polite');
  app.replaceChildren(
    h(
      'div',
      { className: 'state', id: state === 'error' ? 'error' : 'prompt' },
      h('div', { className: neutral ? 'state-icon neutral' : 'state-icon' }, icon(iconName)),
      h('h1', { text: title }),
      message ? h('p', { dataset: { role: 'message' }, text: message }) : null,
      extra,
    ),
  );
}

function showForm(slug) {
  document.title = 'Open a library · Asset library';
  showState('need-key', 'lock', true, 'Open a library', 'Enter the library to show and an API key that can read it.', keyForm(slug, 'Open library'));
}

function showError(error, slug, pass = false) {
  document.title = 'Library unavailable · Asset library';
  const status = error instanceof ApiError ? error.status : 0;
  let title = 'The library could not be loaded';
  let form = null;
  if (pass && (status === 401 || status === 403)) {
    title = status === 401 ? 'This pass is not valid' : 'This pass is for another library';
  } else if (status === 401 || status === 403) {
    storeKey('');
    title = status === 401 ? 'This key is not valid' : 'This key cannot open the library';
    form = keyForm(slug, 'Try another key');
  } else if (status === 404) {
    title = 'No such library';
    form = keyForm(slug, 'Open another library');
  }
  showState('error', 'alert', false, title, error.message || 'Something went wrong.', form);
  document.getElementById('error').dataset.status = String(status);
}

async function load(slug, key) {
  document.body.dataset.state = 'loading';
  app.setAttribute('aria-live', 'polite');
  let library;
  try {
    library = await api(`/libraries/slug/${encodeURIComponent(slug)}?include_assets=true`, key);
  } catch (error) {
    showError(error, slug, key.startsWith('alp_'));
    return;
  }
  await renderLibrary(library, key);
  document.body.dataset.state = 'ready';
}

const { slug, key, pass } = readAddress();
// A buyer's pass opens the library and its paid files; a key, what its scopes allow.
if (slug && (pass || key)) load(slug, pass || key);
else showForm(slug);
