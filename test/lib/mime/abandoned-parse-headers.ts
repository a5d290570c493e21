import { monitorEventLoopDelay } from 'node:perf_hooks';
import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { withHeadersOfAbandonedParse } from '../../../lib/mime/abandoned-parse-headers';
import { headerSectionOf, MAX_HEADER_SECTION_BYTES } from '../../../lib/mime/header-section';
import { emptyParsedMessage, parseMessage } from '../../../lib/mime/parse';
import { createParsePool } from '../../../lib/mime/parse-pool';
import { nestedGroupsMessage, punycodeMessage } from '../../helpers/hostile-addresses';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

/** Far above what reading a bounded header section takes (milliseconds), far below the unbounded parses of these shapes (2.3 to 25 s). */
const FAR_BOUND_MS = 1000;

/** A message whose parse cannot finish in 1 ms: headers a list shows, then MiBs of text. */
function largeMessage(mib: number): Buffer {
    const head = [
        'From: =?utf-8?Q?J=C3=BCrgen_Sender?= <juergen@sender.test>',
        'To: first@x.test, Team: second@x.test, third@x.test;',
        'Cc: "Copy, Carbon" <cc@x.test>',
        'Subject: =?utf-8?B?R3LDvMOfZQ==?= from a large',
        '  message',
        'Message-ID: <large-1@sender.test>',
        'X-Tags: big, slow',
        'Date: Sat, 28 Nov 2026 20:00:00 +0000',
        'Content-Type: text/plain; charset=utf-8'
    ].join('\r\n');
    const line = `${'x'.repeat(76)}\r\n`;
    return Buffer.concat([Buffer.from(`${head}\r\n\r\n`), Buffer.from(line.repeat(Math.ceil(mib * 1024 * 1024 / line.length)))]);
}

/** The header fields a ParsedMessage holds. */
const headerFields = (p: Awaited<ReturnType<typeof parseMessage>>) => ({ messageId: p.messageId, from: p.from, fromName: p.fromName, to: p.to, cc: p.cc, subject: p.subject, tags: p.tags });

describe('abandoned-parse-headers', () => {

    describe('withHeadersOfAbandonedParse()', () => {

        it('gives a parse abandoned at a 1 ms deadline the header fields a whole parse gives, and no bodies or attachments', async () => {
            const raw = largeMessage(8);
            const pool = createParsePool({ size: 1, timeoutMs: 1 });
            try {
                const abandoned = await pool.parse(raw);
                expect(abandoned.abandoned).to.be.true();
                const kept = await withHeadersOfAbandonedParse(abandoned, raw);
                const whole = await parseMessage(raw);
                expect(headerFields(whole)).to.equal({
                    messageId: 'large-1@sender.test', from: 'juergen@sender.test', fromName: 'Jürgen Sender',
                    to: ['first@x.test', 'second@x.test', 'third@x.test'], cc: ['cc@x.test'], subject: 'Grüße from a large message', tags: ['big', 'slow']
                });
                expect(headerFields(kept)).to.equal(headerFields(whole));
                expect({ ...kept, ...headerFields(emptyParsedMessage()), abandoned: undefined, error: undefined }).to.equal({ ...emptyParsedMessage(), abandoned: undefined, error: undefined });
                expect(kept.abandoned).to.be.true();
                expect(kept.error).to.shallow.equal(abandoned.error);
            }
            finally {
                await pool.close();
            }
        });

        it('returns a parse that was not abandoned as it is', async () => {
            const raw = Buffer.from('Subject: whole\r\nTo: a@x.test\r\n\r\nbody\r\n');
            const parsed = await parseMessage(raw);
            expect(await withHeadersOfAbandonedParse(parsed, raw)).to.shallow.equal(parsed);
        });

        it('reads the hostile header section of an abandoned parse in bounded time without holding the event loop, keeping its other fields', async () => {
            const delay = monitorEventLoopDelay({ resolution: 10 });
            try {
                for (const raw of [punycodeMessage(), nestedGroupsMessage()]) {
                    // What the pool resolves at its deadline (the test above). Not raced against a real
                    // deadline here: these parses take tens of ms, and a starved test process can see the
                    // worker's answer before its 1 ms timer.
                    const abandoned = { ...emptyParsedMessage(), abandoned: true, error: new Error('the parse took longer than 1 ms and was abandoned') };
                    delay.reset();
                    delay.enable();
                    const started = process.hrtime.bigint();
                    const kept = await withHeadersOfAbandonedParse(abandoned, raw);
                    const ms = Number(process.hrtime.bigint() - started) / 1e6;
                    delay.disable();
                    expect(ms).to.be.below(FAR_BOUND_MS);
                    expect(delay.max / 1e6).to.be.below(FAR_BOUND_MS);
                    expect(kept.from).to.equal('hostile@x.test');
                    expect(kept.subject).to.be.a.string().and.to.not.be.empty();
                    expect(headerFields(kept)).to.equal(headerFields(await parseMessage(raw)));
                }
            }
            finally {
                delay.disable();
            }
        });

        it('reads no further than the header section, and no more than its bound of a message that is all header', async () => {
            expect(headerSectionOf(Buffer.from('Subject: a\r\n\r\nSubject: b\r\n'))).to.equal(Buffer.from('Subject: a\r\n'));
            expect(headerSectionOf(Buffer.from('Subject: a\n\nb'))).to.equal(Buffer.from('Subject: a\n'));
            expect(headerSectionOf(Buffer.from('\r\nbody'))).to.equal(Buffer.alloc(0));
            const endless = Buffer.from(`Subject: endless\r\n${'X-Filler: y\r\n'.repeat(MAX_HEADER_SECTION_BYTES / 8)}`);
            expect(headerSectionOf(endless).length).to.equal(MAX_HEADER_SECTION_BYTES);
        });
    });
});
