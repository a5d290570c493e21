import type { Request, ResponseToolkit, ServerRoute } from '@hapi/hapi';
import Joi from 'joi';
import type { DownloadLink } from '../../../lib/blob-store/blob-store';
import { errorResponses, SERVER_ERRORS } from '../api-schemas';
import { AUTH_STRATEGY } from '../auth-scheme';
import { quoted } from '../../error-detail/detail-line';
import { apiError } from '../error-mapping';
import { keyScopeOf, routeAccess } from '../route-access';
import { API_TAG, BEARER_SECURITY, GROUP_DOWNLOADS, type RouteContext } from '../route-context';
import { downloadLocation } from './blobs';
import { paramsFailAction } from './emails';

const redirectResponse = (what: string) => ({
    description: `Found: redirect to a pre-signed URL of the ${what}, valid for the plugin's \`downloadTtlSeconds\` (default 15 minutes)`,
    headers: {
        Location: { description: 'The pre-signed URL (relative when this server serves the link itself).', schema: { type: 'string' } },
        'Cache-Control': { description: 'Always `no-store`: the link expires.', schema: { type: 'string' } }
    }
});

/** Redirects to time-limited links of the raw message and attachments (docs/design.md, "Deletes and downloads"). */
export function downloadRoutes(context: RouteContext): ServerRoute[] {
    const { capture, prefix } = context;

    // The link expires, so no cache may keep the redirect.
    const redirect = (h: ResponseToolkit, link: DownloadLink | null, what: string) => {
        if (link === null) {
            throw apiError(404, 'NOT_FOUND', what);
        }

        return h.redirect(downloadLocation(link, prefix)).code(302).header('Cache-Control', 'no-store');
    };

    const raw = async (request: Request, h: ResponseToolkit) => {
        const messageId = request.params.messageId as string;
        return redirect(h, await capture.rawDownloadLink(messageId, keyScopeOf(request)), `messageId: no email ${quoted(messageId)}`);
    };

    const attachment = async (request: Request, h: ResponseToolkit) => {
        const { messageId, filename } = request.params as { messageId: string; filename: string };
        // One answer for a missing email and a missing attachment: neither says which.
        return redirect(h, await capture.attachmentDownloadLink(messageId, filename, keyScopeOf(request)), `filename: no attachment ${quoted(filename)} of an email ${quoted(messageId)}`);
    };

    const auth = { strategy: AUTH_STRATEGY, mode: 'required' as const };
    const errors = errorResponses({ 401: ['UNAUTHORIZED'], 404: ['NOT_FOUND'], ...SERVER_ERRORS });
    const messageId = Joi.string().required()
        .description('The email\'s `messageId`, percent-encoded as one path segment.')
        .example('abc@example.com');

    return [
        {
            method: 'GET',
            path: '/v1/emails/{messageId}/raw',
            options: {
                auth,
                tags: [API_TAG, GROUP_DOWNLOADS],
                description: 'Download the raw message (.eml)',
                notes: 'Answers 302 to a time-limited link; the target is served as `message/rfc822` with `Content-Disposition: attachment`.',
                validate: { params: Joi.object({ messageId }).label('RawParams'), failAction: paramsFailAction },
                plugins: {
                    ...routeAccess({ access: 'read' }),
                    'hapi-swagger': {
                        id: 'downloadRaw',
                        security: BEARER_SECURITY,
                        responses: { 302: redirectResponse('raw .eml message'), ...errors }
                    }
                }
            },
            handler: raw
        },
        {
            method: 'GET',
            path: '/v1/emails/{messageId}/attachments/{filename}',
            options: {
                auth,
                tags: [API_TAG, GROUP_DOWNLOADS],
                description: 'Download one attachment',
                notes: 'Answers 302 to a time-limited link; the target is served with the attachment\'s media type and `Content-Disposition: attachment`.',
                validate: {
                    params: Joi.object({
                        messageId,
                        filename: Joi.string().required().description('The attachment\'s `filename`, index prefix included, percent-encoded.').example('0-report.pdf')
                    }).label('AttachmentParams'),
                    failAction: paramsFailAction
                },
                plugins: {
                    ...routeAccess({ access: 'read' }),
                    'hapi-swagger': {
                        id: 'downloadAttachment',
                        security: BEARER_SECURITY,
                        responses: { 302: redirectResponse('attachment'), ...errors }
                    }
                }
            },
            handler: attachment
        }
    ];
}
