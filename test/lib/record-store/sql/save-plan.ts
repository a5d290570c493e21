import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import { MAX_MESSAGE_ID_BYTES, sha256Hex } from '../../../../lib/identity/ids';
import { MAX_ID_DERIVATIONS, planSave, prepareDeliveries, type SavePlan, type StoredRow } from '../../../../lib/record-store/sql/save-plan';
import type { EmailDraft, EmailRecord } from '../../../../lib/types';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

function draft(sourceId: string, inbox: string, extra: Partial<EmailDraft> = {}): EmailDraft {
    return {
        sourceId,
        inbox,
        sender: 'a@x.test',
        recipient: `${inbox}@x.test`,
        subject: 'hello',
        body: 'body',
        htmlBody: '',
        receivedAt: 1000,
        rawKey: `raw-${inbox}`,
        rawSize: 10,
        rawSha256: 'a'.repeat(64),
        attachments: [{ filename: 'a.txt', contentType: 'text/plain', size: 1, blobKey: `att-${inbox}` }],
        links: [],
        codes: [],
        tags: [],
        senderName: '',
        searchText: 'body',
        ...extra
    };
}

function stored(seq: number, messageId: string, sourceId: string, inbox: string): StoredRow {
    const fields: Partial<EmailDraft> = draft(sourceId, inbox);
    delete fields.searchText;
    const record = { messageId, ...fields, links: [], codes: [], seen: false } as EmailRecord;
    return { seq, record, messageHash: sha256Hex(messageId), sourceHash: sha256Hex(sourceId) };
}

/**
 * Plans `deliveries` the way the store does: `rows` stand for the store's lookup, and
 * each lookUp is answered from `held`, the message ids the database holds.
 */
function plan(deliveries: EmailDraft[][], rows: StoredRow[] = [], held: string[] = []): { plan: SavePlan; lookUps: string[] } {
    const planned = prepareDeliveries(deliveries);
    const heldHashes = new Set([...held, ...rows.map((r) => r.record.messageId)].map(sha256Hex));
    const checked = new Map<string, boolean>();
    const lookUps: string[] = [];
    for (;;) {
        const outcome = planSave(planned, rows, checked);
        if ('plan' in outcome) {
            return { plan: outcome.plan, lookUps };
        }

        expect(checked.has(outcome.lookUp)).to.be.false();
        lookUps.push(outcome.lookUp);
        checked.set(outcome.lookUp, heldHashes.has(outcome.lookUp));
    }
}

const savedIds = (p: SavePlan) => p.results.map((r) => r.saved.map((s) => s.messageId));

describe('save-plan', () => {

    describe('prepareDeliveries()', () => {

        it('digests the source id and the first-choice id of each draft', () => {
            const planned = prepareDeliveries([[draft('<m@x>', 'one')], [draft('<n@x>', 'a'), draft('<n@x>', 'b')]]);
            const [single, a, b] = planned.flat();
            expect(planned.map((d) => d.length)).to.equal([1, 2]);
            expect(single!.sourceHash).to.equal(sha256Hex('<m@x>'));
            expect(single!.candidateHash).to.equal(sha256Hex('<m@x>'));
            expect(a!.candidateHash).to.equal(sha256Hex('<n@x>~a'));
            expect(b!.candidateHash).to.equal(sha256Hex('<n@x>~b'));
        });
    });

    describe('planSave()', () => {

        it('gives a single-inbox delivery the bare Message-ID', () => {
            const { plan: p, lookUps } = plan([[draft('<m@x>', 'one')]]);
            expect(lookUps).to.equal([]);
            expect(savedIds(p)).to.equal([['<m@x>']]);
            expect(p.results[0]!.replaced).to.equal([]);
            expect(p.removed).to.equal([]);
            expect(p.inserts.map((i) => i.messageHash)).to.equal([sha256Hex('<m@x>')]);
            expect(p.inserts[0]!.sourceHash).to.equal(sha256Hex('<m@x>'));
            expect(p.inserts[0]!.record).to.shallow.equal(p.results[0]!.saved[0]!);
            const { searchText, ...fields } = draft('<m@x>', 'one');
            expect(p.inserts[0]!.record).to.equal({ messageId: '<m@x>', ...fields, seen: false });
            expect(p.inserts[0]!.searchText).to.equal(searchText);
        });

        it('gives a single-inbox delivery of an unaddressable Message-ID a derived id', () => {
            const long = 'x'.repeat(MAX_MESSAGE_ID_BYTES + 1);
            const { plan: p } = plan([[draft('.', 'one')], [draft('..', 'one')], [draft(long, 'one')], [draft('./x', 'one')]]);
            expect(savedIds(p)).to.equal([['.~one'], ['..~one'], [`${sha256Hex(long)}@inbox-capture`], ['./x']]);
        });

        it('replaces a re-ingested message with an unaddressable Message-ID, keeping the derived id', () => {
            const rows = [stored(3, '.~one', '.', 'one')];
            const { plan: p } = plan([[draft('.', 'one')]], rows);
            expect(savedIds(p)).to.equal([['.~one']]);
            expect(p.removed).to.equal([3]);
        });

        it('derives again when the id derived from a dot segment is held', () => {
            const { plan: p } = plan([[draft('.', 'one')]], [stored(5, '.~one', 'unrelated@x', 'two')]);
            expect(savedIds(p)).to.equal([['.~one~one']]);
        });

        it('gives each copy of a delivery to several inboxes a derived id', () => {
            const { plan: p, lookUps } = plan([[draft('<m@x>', 'a'), draft('<m@x>', 'b'), draft('<m@x>', 'c')]]);
            expect(lookUps).to.equal([]);
            expect(savedIds(p)).to.equal([['<m@x>~a', '<m@x>~b', '<m@x>~c']]);
            expect(p.inserts.map((i) => i.record.inbox)).to.equal(['a', 'b', 'c']);
        });

        it('derives the id when the same Message-ID arrives later for another inbox', () => {
            const rows = [stored(7, '<m@x>', '<m@x>', 'a')];
            const { plan: p, lookUps } = plan([[draft('<m@x>', 'b')]], rows);
            expect(lookUps).to.equal([sha256Hex('<m@x>~b')]);
            expect(savedIds(p)).to.equal([['<m@x>~b']]);
            expect(p.results[0]!.replaced).to.equal([]);
            expect(p.removed).to.equal([]);
        });

        it('derives the id when an earlier delivery of the same batch holds it in another inbox', () => {
            const { plan: p } = plan([[draft('<m@x>', 'a')], [draft('<m@x>', 'b')]]);
            expect(savedIds(p)).to.equal([['<m@x>'], ['<m@x>~b']]);
            expect(p.inserts).to.have.length(2);
        });

        it('replaces the stored copy of a re-ingested message in the same inbox, keeping its id', () => {
            const rows = [stored(7, '<m@x>', '<m@x>', 'a')];
            const again = draft('<m@x>', 'a', { subject: 'again' });
            const { plan: p, lookUps } = plan([[again]], rows);
            expect(lookUps).to.equal([]);
            expect(savedIds(p)).to.equal([['<m@x>']]);
            expect(p.results[0]!.saved[0]!.subject).to.equal('again');
            expect(p.results[0]!.replaced).to.equal([rows[0]!.record]);
            expect(p.results[0]!.replaced[0]).to.not.shallow.equal(rows[0]!.record);
            expect(p.results[0]!.replaced[0]!.attachments[0]).to.not.shallow.equal(rows[0]!.record.attachments[0]);
            expect(p.removed).to.equal([7]);
            expect(p.inserts.map((i) => i.record.subject)).to.equal(['again']);
        });

        it('keeps the derived id of a replaced copy', () => {
            const rows = [stored(3, '<m@x>', '<m@x>', 'a'), stored(4, '<m@x>~b', '<m@x>', 'b')];
            const { plan: p } = plan([[draft('<m@x>', 'b')]], rows);
            expect(savedIds(p)).to.equal([['<m@x>~b']]);
            expect(p.removed).to.equal([4]);
        });

        it('replaces a copy planned earlier in the batch without writing it', () => {
            const first = draft('<m@x>', 'a', { subject: 'first' });
            const second = draft('<m@x>', 'a', { subject: 'second' });
            const { plan: p } = plan([[first], [second]]);
            expect(savedIds(p)).to.equal([['<m@x>'], ['<m@x>']]);
            expect(p.results[1]!.replaced.map((r) => r.subject)).to.equal(['first']);
            expect(p.results[1]!.replaced[0]).to.not.shallow.equal(p.results[0]!.saved[0]);
            expect(p.removed).to.equal([]);
            expect(p.inserts.map((i) => i.record.subject)).to.equal(['second']);
        });

        it('removes a stored copy once when the batch replaces it twice', () => {
            const rows = [stored(9, '<m@x>', '<m@x>', 'a')];
            const { plan: p } = plan([[draft('<m@x>', 'a', { subject: '1' })], [draft('<m@x>', 'a', { subject: '2' })]], rows);
            expect(p.removed).to.equal([9]);
            expect(p.results[0]!.replaced).to.have.length(1);
            expect(p.results[1]!.replaced.map((r) => r.subject)).to.equal(['1']);
            expect(p.inserts.map((i) => i.record.subject)).to.equal(['2']);
        });

        it('derives again while the derived id is held by an unrelated record', () => {
            const rows = [stored(1, '<m@x>', '<m@x>', 'a')];
            const held = ['<m@x>~b', '<m@x>~b~b'];
            const { plan: p, lookUps } = plan([[draft('<m@x>', 'b')]], rows, held);
            expect(savedIds(p)).to.equal([['<m@x>~b~b~b']]);
            expect(lookUps).to.equal(['<m@x>~b', '<m@x>~b~b', '<m@x>~b~b~b'].map(sha256Hex));
        });

        it(`derives up to ${MAX_ID_DERIVATIONS} times`, () => {
            const rows = [stored(1, '<m@x>', '<m@x>', 'a')];
            const held: string[] = [];
            let id = '<m@x>';
            for (let i = 1; i < MAX_ID_DERIVATIONS; i++) {
                id = `${id}~b`;
                held.push(id);
            }

            const { plan: p } = plan([[draft('<m@x>', 'b')]], rows, held);
            expect(savedIds(p)).to.equal([[`<m@x>${'~b'.repeat(MAX_ID_DERIVATIONS)}`]]);
        });

        it(`fails when the id derived ${MAX_ID_DERIVATIONS} times is held too`, () => {
            const rows = [stored(1, '<m@x>', '<m@x>', 'a')];
            const held: string[] = [];
            let id = '<m@x>';
            for (let i = 1; i <= MAX_ID_DERIVATIONS; i++) {
                id = `${id}~b`;
                held.push(id);
            }

            expect(() => plan([[draft('<m@x>', 'b')]], rows, held)).to.throw('No free message id for a copy of <m@x> in b');
        });

        it('answers the deliveries in order, each with its own results', () => {
            const { plan: p } = plan([
                [draft('<1@x>', 'a')],
                [draft('<2@x>', 'a'), draft('<2@x>', 'b')],
                [draft('<3@x>', 'c')]
            ]);
            expect(savedIds(p)).to.equal([['<1@x>'], ['<2@x>~a', '<2@x>~b'], ['<3@x>']]);
            expect(p.inserts.map((i) => i.record.messageId)).to.equal(['<1@x>', '<2@x>~a', '<2@x>~b', '<3@x>']);
        });

        it('treats a first-choice id that no looked-up row holds as free', () => {
            const planned = prepareDeliveries([[draft('<m@x>', 'a')]]);
            const outcome = planSave(planned, [], new Map());
            expect(outcome).to.part.include({ plan: { removed: [] } });
            expect('lookUp' in outcome).to.be.false();
        });
    });
});
