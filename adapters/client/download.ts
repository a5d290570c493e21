import { apiErrorFrom, InboxCaptureApiError, UNEXPECTED_RESPONSE } from './errors';
import type { FetchFunction } from './types';

/**
 * Fetches a download route and follows its 302 to the time-limited link without the
 * API key: the link's host (S3, a CDN) must never see it, and needs no key anyway.
 * Node answers `redirect: 'manual'` with the 302 and its Location, fetched here without
 * the header. Browsers hide a manual redirect's Location (an `opaqueredirect`), so there
 * the request is made again with `redirect: 'follow'`: the Fetch standard drops
 * `Authorization` when a redirect leaves the origin.
 */
export async function fetchDownload(fetchFn: FetchFunction, url: string, headers: Record<string, string>, signal: AbortSignal | undefined): Promise<Uint8Array> {
    const first = await fetchFn(url, { headers, redirect: 'manual', signal });
    let target: Response;
    if (first.type === 'opaqueredirect') {
        target = await fetchFn(url, { headers, redirect: 'follow', signal });
    }
    else if (first.status >= 300 && first.status < 400) {
        const location = first.headers.get('location');
        await first.body?.cancel();
        if (!location) {
            throw new InboxCaptureApiError(first.status, UNEXPECTED_RESPONSE);
        }

        target = await fetchFn(new URL(location, url).href, { redirect: 'follow', signal });
    }
    else {
        target = first;
    }

    if (!target.ok) {
        throw await apiErrorFrom(target);
    }

    return new Uint8Array(await target.arrayBuffer());
}

/**
 * The time-limited link a download route redirects to, fetching no more of it than its
 * headers: Node reads the 302's Location; a browser, which hides it, follows the redirect
 * (without the key when it leaves the origin) and reads where it ended.
 */
export async function resolveDownloadLink(fetchFn: FetchFunction, url: string, headers: Record<string, string>, signal: AbortSignal | undefined): Promise<string> {
    const first = await fetchFn(url, { headers, redirect: 'manual', signal });
    if (first.type === 'opaqueredirect') {
        const followed = await fetchFn(url, { headers, redirect: 'follow', signal });
        if (!followed.ok) {
            throw await apiErrorFrom(followed);
        }

        await followed.body?.cancel();
        return followed.url;
    }

    if (first.status >= 300 && first.status < 400) {
        const location = first.headers.get('location');
        await first.body?.cancel();
        if (!location) {
            throw new InboxCaptureApiError(first.status, UNEXPECTED_RESPONSE);
        }

        return new URL(location, url).href;
    }

    if (!first.ok) {
        throw await apiErrorFrom(first);
    }

    await first.body?.cancel();
    throw new InboxCaptureApiError(first.status, UNEXPECTED_RESPONSE);
}
