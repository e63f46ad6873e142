/**
 * Whether an action request comes from the web view's own pages, decided from its headers alone
 * (pure, so every case is a unit test): the defence of the view's tokenless actions on loopback
 * against other sites' pages (cross-site requests) and against DNS rebinding.
 *
 * - `Host` must be one of the served authorities: the address the view is bound to with its port
 *   (`127.0.0.1:8080`, `[::1]:8080`), and `localhost:<port>` when it is bound to 127.0.0.1 or ::1
 *   (browsers resolve `localhost` to loopback themselves, so no site can rebind it). A rebinding
 *   page reaches the port under its own name (`evil.example:8080`), which is not served.
 * - `Origin` must be `http://<that Host>`: a page of the view itself. `null` (a sandboxed frame, a
 *   `file:` or `data:` page, a redirect across sites) is refused like any other site.
 * - Without `Origin`, `Sec-Fetch-Site: same-origin` is taken instead (a header no page's script can
 *   set). Browsers send `Origin` on every POST, so this only helps one that strips it. `Referer` is
 *   never taken: the view's pages send none (`Referrer-Policy: no-referrer`). A request with neither
 *   is refused: a client that is no browser sends `Origin` itself.
 * - A body a `<form>` can send (`application/x-www-form-urlencoded`, `multipart/form-data`,
 *   `text/plain`) is refused whatever the other headers say: the actions take no body.
 */

/** What the guard reads of a request: its headers, lower-case names as node:http gives them. */
export interface ActionRequestHeaders {
  readonly host?: string | undefined;
  readonly origin?: string | undefined;
  readonly 'sec-fetch-site'?: string | undefined;
  readonly 'content-type'?: string | undefined;
}

/** Why a request was refused: a stable code and a sentence saying what to do. */
export interface ActionRefusal {
  readonly code: 'HOST_MISMATCH' | 'CROSS_ORIGIN' | 'ORIGIN_MISSING' | 'FORM_POST';
  readonly message: string;
}

/** The body types a `<form>` can post without a script: never an action's. */
const FORM_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'];

/**
 * The authorities (`host:port`, normalised as a browser writes them) under which the view is
 * served, from the address it is bound to: the address itself, and `localhost` beside 127.0.0.1
 * and ::1. Port 80 is written without it, as browsers send it.
 */
export function servedAuthorities(address: string, port: number): readonly string[] {
  const bare = address.startsWith('[') ? address.slice(1, -1) : address;
  const host = bare.includes(':') ? `[${bare}]` : bare;
  const authorities = [normalizedAuthority(`${host}:${port}`)];
  if (bare === '127.0.0.1' || bare === '::1')
    authorities.push(normalizedAuthority(`localhost:${port}`));
  return authorities.filter((authority): authority is string => authority !== undefined);
}

/**
 * The authority a Host header (or an origin's host part) names, as a browser's URL parser writes
 * it: lower case, IPv6 compressed, the default port dropped. Undefined when it is no authority
 * (a path, a user name, an empty string).
 */
export function normalizedAuthority(authority: string): string | undefined {
  if (authority === '' || /[/?#@\\\s]/.test(authority)) return undefined;
  try {
    return new URL(`http://${authority}`).host;
  } catch {
    return undefined;
  }
}

/** Refuses a body type a `<form>` can post (whatever else the request carries): undefined for any other, or none. */
export function refuseFormBody(contentType: string | undefined): ActionRefusal | undefined {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (!FORM_TYPES.includes(type)) return undefined;
  return {
    code: 'FORM_POST',
    message: `actions take no body, and never a form's (${type}): a page of another site may post forms`,
  };
}

/**
 * Decides whether an action request with these headers comes from a page of the view served
 * under `served` (servedAuthorities): undefined when it does, else why not.
 */
export function refuseForeignRequest(
  served: readonly string[],
  headers: ActionRequestHeaders,
): ActionRefusal | undefined {
  const formPost = refuseFormBody(headers['content-type']);
  if (formPost !== undefined) return formPost;
  const host = normalizedAuthority(headers.host ?? '');
  if (host === undefined || !served.includes(host))
    return {
      code: 'HOST_MISMATCH',
      message: `actions are taken at ${served.map((authority) => `http://${authority}/`).join(' or ')} only, not through ${JSON.stringify(headers.host ?? '')} (another name for this port is how DNS rebinding reaches it); through a tunnel or another name, start the view with --allow-actions and use its token`,
    };
  const origin = headers.origin;
  if (origin === undefined) {
    if (headers['sec-fetch-site'] === 'same-origin') return undefined;
    return {
      code: 'ORIGIN_MISSING',
      message: `an action request must say where it comes from: a browser sends Origin itself; another client adds the header Origin: http://${host}`,
    };
  }
  if (origin !== `http://${host}`)
    return {
      code: 'CROSS_ORIGIN',
      message: `actions are taken from the view's own pages (http://${host}) only, not from ${origin.slice(0, 200)}`,
    };
  return undefined;
}
