import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { isInboxCaptureError } from '../../../lib/errors';
import { checkHtmlCompatibility } from '../../../lib/html-check/html-checker';

// The check is worked out once per HTML and globs and kept (docs/api.md, "Checks").

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

describe('lib/html-check/html-checker', () => {

    it('checks the same HTML with the same globs once, and keeps the last 256 answers', async () => {
        const html = '<div style="display:flex">kept</div>';
        const first = checkHtmlCompatibility(html, ['outlook.*']);
        expect(checkHtmlCompatibility(html, ['outlook.*'])).to.shallow.equal(first);
        expect((await first).findings.map((f) => f.title)).to.include('display:flex');
        expect(checkHtmlCompatibility(html, ['outlook.*'])).to.shallow.equal(first);
        // Other globs are another check.
        const gmail = checkHtmlCompatibility(html, ['gmail.*']);
        expect(gmail).to.not.shallow.equal(first);

        // 255 answers more: 257 in all, so the oldest (the first) is no longer kept, the next (gmail) is.
        for (let i = 0; i < 255; i++) {
            await checkHtmlCompatibility(`<p>${i}</p>`, ['outlook.*']);
        }

        expect(checkHtmlCompatibility(html, ['gmail.*'])).to.shallow.equal(gmail);
        // gmail was just used: one answer more pushes out the oldest after it, not gmail.
        await checkHtmlCompatibility('<p>one more</p>', ['outlook.*']);
        expect(checkHtmlCompatibility(html, ['gmail.*'])).to.shallow.equal(gmail);
        expect(checkHtmlCompatibility(html, ['outlook.*'])).to.not.shallow.equal(first);
    });

    it('keeps no failure: globs that match no client are INVALID_INPUT each time', async () => {
        const first = checkHtmlCompatibility('<p>x</p>', ['nothing.*']);
        const err = await expect(first).to.reject();
        expect(isInboxCaptureError(err, 'INVALID_INPUT')).to.be.true();
        const again = checkHtmlCompatibility('<p>x</p>', ['nothing.*']);
        expect(again).to.not.shallow.equal(first);
        expect(isInboxCaptureError(await expect(again).to.reject(), 'INVALID_INPUT')).to.be.true();
    });
});
