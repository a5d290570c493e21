import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { toInboxPageView } from '../../../adapters/hapi/inbox-view';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('inbox-view', () => {

    describe('toInboxPageView()', () => {
        const inboxes = [{ name: 'b', count: 2, lastReceivedAt: 20 }, { name: 'a', count: 1, lastReceivedAt: 10 }];

        it('points nextCursor after the last inbox when more follow', () => {
            expect(toInboxPageView({ inboxes, hasMore: true })).to.equal({ inboxes, hasMore: true, nextCursor: '10#a' });
        });

        it('has no nextCursor key at all on the last page', () => {
            const view = toInboxPageView({ inboxes, hasMore: false });
            expect(Object.keys(view)).to.equal(['inboxes', 'hasMore']);
            expect(toInboxPageView({ inboxes: [], hasMore: false })).to.equal({ inboxes: [], hasMore: false });
        });
    });
});
