import { createHmac, timingSafeEqual } from 'node:crypto';
import { InboxCaptureError } from '../errors';
import { isValidBlobKey } from './blob-key';
import type { LinkSigner } from './blob-store';

/**
 * Signed download links: the one way a store whose links the embedding server
 * serves (file, SQLite, tiered) makes and checks them. A link is a blob key and a
 * query (expiry, filename, media type, HMAC-SHA256 of all four); the core never
 * says at which URL the server serves it. The types of a link (SignedLinkTarget,
 * LinkSigner) are part of the store interface, in blob-store.ts.
 */

/** Shortest signing secret accepted, bytes: an HMAC key any shorter is open to guessing. */
export const MIN_SIGNING_SECRET_BYTES = 16;

/** Longest filename or media type a link may carry, characters: bounds the HMAC input. */
const MAX_LINK_FIELD_LENGTH = 1024;

/** Options of the link signer. */
export interface LinkSignerOptions {
    /** HMAC-SHA256 key, at least 16 bytes (see loadOrCreateSigningSecret()). */
    signingSecret: Buffer | string;
    /** Clock, Unix ms (tests inject one to expire links). */
    now?: () => number;
}

/** Creates the signer of download links for `signingSecret`. */
export function createLinkSigner(options: LinkSignerOptions): LinkSigner {
    const given = options?.signingSecret;
    const secret = typeof given === 'string' ? Buffer.from(given, 'utf8') : given;
    if (!Buffer.isBuffer(secret) || secret.length < MIN_SIGNING_SECRET_BYTES) {
        throw new TypeError(`createLinkSigner: options.signingSecret must be at least ${MIN_SIGNING_SECRET_BYTES} bytes`);
    }

    const now = options.now ?? Date.now;

    const sign = (key: string, expires: string, filename: string, contentType: string): Buffer => {
        return createHmac('sha256', secret).update(`${key}\n${expires}\n${filename}\n${contentType}`, 'utf8').digest();
    };

    return {
        async createDownloadLink(key, linkOptions) {
            const { expiresInSeconds, filename, contentType } = linkOptions;
            if (!isValidBlobKey(key)) {
                throw new InboxCaptureError('INVALID_INPUT', 'invalid blob key');
            }

            if (!Number.isInteger(expiresInSeconds) || expiresInSeconds <= 0) {
                throw new InboxCaptureError('INVALID_INPUT', 'expiresInSeconds must be a positive integer');
            }

            if (!isLinkField(filename) || !isLinkField(contentType)) {
                throw new InboxCaptureError('INVALID_INPUT', 'link filename and contentType must be short and free of control characters');
            }

            const expires = String(Math.floor(now() / 1000) + expiresInSeconds);
            const sig = sign(key, expires, filename, contentType).toString('hex');
            return { key, query: { expires, filename, type: contentType, sig } };
        },

        verifyDownload(key, query) {
            const { expires, filename, type, sig } = query ?? {};
            if (!isValidBlobKey(key) ||
                typeof expires !== 'string' || !/^\d{1,12}$/.test(expires) ||
                !isLinkField(filename) || !isLinkField(type) ||
                typeof sig !== 'string' || !/^[0-9a-f]{64}$/.test(sig)) {
                return null;
            }

            // Checked before the clock so that a forged link learns nothing from timing.
            if (!timingSafeEqual(Buffer.from(sig, 'hex'), sign(key, expires, filename, type))) {
                return null;
            }

            if (now() >= Number(expires) * 1000) {
                return null;
            }

            return { filename, contentType: type };
        }
    };
}

// A field may go into the HMAC input only if it cannot contain the `\n` separator:
// otherwise `a\nb` + `c` and `a` + `b\nc` would share one signature.
function isLinkField(value: unknown): value is string {
    return typeof value === 'string' &&
        value.length > 0 &&
        value.length <= MAX_LINK_FIELD_LENGTH &&
        !/[\u0000-\u001f\u007f]/.test(value);
}
