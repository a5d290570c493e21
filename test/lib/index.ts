import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Core from '../../lib/index';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('index', () => {

    it('exports exactly the public API, no internals or tuning constants', () => {
        expect(Object.keys(Core).sort()).to.equal([
            'DEFAULT_MAX_MESSAGE_BYTES',
            'DEFAULT_MESSAGE_BUDGET_BYTES',
            'InboxCaptureError',
            'MAX_INBOX_LENGTH',
            'MAX_RECIPIENTS',
            'SearchSyntaxError',
            'WaitCanceller',
            'createInboxCapture',
            'createLongPoller',
            'createMessageBudget',
            'createNotifier',
            'decodeCursor',
            'decodeInboxCursor',
            'defaultInboxFromAddress',
            'deriveMessageId',
            'encodeCursor',
            'encodeInboxCursor',
            'extractCodes',
            'extractLinks',
            'generateApiKey',
            'generateMessageId',
            'hashApiKey',
            'isInboxCaptureError',
            'isSearchSyntaxError',
            'isValidInbox',
            'isValidTag',
            'parseSearchQuery'
        ]);
    });

    it('exports only functions, classes and the four documented limits', () => {
        for (const name of Object.keys(Core) as (keyof typeof Core)[]) {
            if (name === 'DEFAULT_MAX_MESSAGE_BYTES' || name === 'DEFAULT_MESSAGE_BUDGET_BYTES' || name === 'MAX_INBOX_LENGTH' || name === 'MAX_RECIPIENTS') {
                expect(Core[name]).to.be.a.number();
                continue;
            }

            expect(Core[name], name).to.be.a.function();
        }
    });
});
