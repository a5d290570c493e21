import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { FULL_ACCESS, inboxInScope, listingPrefix, newInboxPrefix } from '../../../lib/identity/key-scope';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('key scope', () => {

    it('inboxInScope(): every inbox without a prefix, else those that start with it', () => {
        expect(inboxInScope(undefined, 'any')).to.be.true();
        expect(inboxInScope(FULL_ACCESS, 'any')).to.be.true();
        expect(inboxInScope({ inboxPrefix: 'team-' }, 'team-a')).to.be.true();
        expect(inboxInScope({ inboxPrefix: 'team-' }, 'team-')).to.be.true();
        expect(inboxInScope({ inboxPrefix: 'team-' }, 'team')).to.be.false();
        expect(inboxInScope({ inboxPrefix: 'team-' }, 'other-team-a')).to.be.false();
    });

    it('listingPrefix(): the narrower prefix, none, or null when they exclude each other', () => {
        expect(listingPrefix(FULL_ACCESS, undefined)).to.be.undefined();
        expect(listingPrefix(FULL_ACCESS, '')).to.be.undefined();
        expect(listingPrefix(FULL_ACCESS, 'a')).to.equal('a');
        expect(listingPrefix({ inboxPrefix: 'team-' }, undefined)).to.equal('team-');
        expect(listingPrefix({ inboxPrefix: 'team-' }, 'te')).to.equal('team-');
        expect(listingPrefix({ inboxPrefix: 'team-' }, 'team-a')).to.equal('team-a');
        expect(listingPrefix({ inboxPrefix: 'team-' }, 'other')).to.be.null();
    });

    it('newInboxPrefix(): inside the key\'s prefix, the request kept when it already is', () => {
        expect(newInboxPrefix(FULL_ACCESS, undefined)).to.equal('');
        expect(newInboxPrefix(FULL_ACCESS, 'x-')).to.equal('x-');
        expect(newInboxPrefix({ inboxPrefix: 'team-' }, undefined)).to.equal('team-');
        expect(newInboxPrefix({ inboxPrefix: 'team-' }, 'team-signup-')).to.equal('team-signup-');
        expect(newInboxPrefix({ inboxPrefix: 'team-' }, 'signup-')).to.equal('team-signup-');
    });
});
