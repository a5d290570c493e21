import * as Code from '@hapi/code';
import * as Lab from '@hapi/lab';
import * as Path from 'node:path';
import { stageOfStack, summarizeStages } from '../../bench/profile-stages';

const { expect } = Code;
const { describe, it } = exports.lab = Lab.script();

// The checkout's own files, as a CPU profile names them.
const ROOT = Path.join(__dirname, '..', '..');
const ours = (path: string) => `file://${ROOT}/dist/${path}`;
const pkg = (path: string) => `file://${ROOT}/node_modules/${path}`;
const frame = (functionName: string, url = '') => ({ functionName, url });

describe('the cost table by stage (bench/README.md, "The small-mail fast path: cost per stage")', () => {
    it('counts a socket write for the package that called it: the SMTP dialogue', () => {
        const stack = [
            frame('writeUtf8String'),
            frame('handleWriteReq', 'node:internal/stream_base_commons'),
            frame('send', pkg('smtp-server/dist/cjs/smtp-connection.js')),
            frame('(anonymous)', ours('adapters/smtp/smtp-listener.js'))
        ];
        expect(stageOfStack(stack)).to.startWith('SMTP dialogue');
    });

    it('counts a message port\'s work as a thread crossing, even when our parse pool called it', () => {
        expect(stageOfStack([frame('postMessage'), frame('pump', ours('lib/mime/parse-pool.js'))])).to.startWith('thread crossings');
        expect(stageOfStack([frame('(anonymous)', 'node:internal/per_context/messageport'), frame('(root)')])).to.startWith('thread crossings');
        // The parse the message started is the parse's, not the crossing's.
        const parse = [frame('_transform', pkg('mailsplit/lib/message-splitter.js')), frame('parse', ours('lib/mime/parse.js')), frame('(anonymous)', 'node:internal/per_context/messageport')];
        expect(stageOfStack(parse)).to.startWith('parse');
    });

    it('tells hash, extraction, save, GC and idle apart', () => {
        expect(stageOfStack([frame('digest', 'node:internal/crypto/hash'), frame('rawSha256Hex', ours('lib/identity/ids.js'))])).to.startWith('hash');
        expect(stageOfStack([frame('findLinks', ours('lib/extract/links.js'))])).to.startWith('extraction');
        expect(stageOfStack([frame('(anonymous)', pkg('sqlite3/lib/sqlite3.js'))])).to.startWith('save statements');
        expect(stageOfStack([frame('run', ours('lib/record-store/sqlite/sqlite-batch-writer.js'))])).to.startWith('save statements');
        expect(stageOfStack([frame('(garbage collector)')])).to.equal('garbage collector');
        expect(stageOfStack([frame('(idle)')])).to.equal('(idle)');
        expect(stageOfStack([frame('readFileSync', 'node:fs'), frame('(root)')])).to.startWith('node internals');
    });

    it('sums each sample\'s time (the next delta) for its node\'s stage, within the window', () => {
        const profile = {
            nodes: [
                { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: 0 }, children: [2, 3] },
                { id: 2, callFrame: { functionName: 'onData', url: ours('adapters/smtp/reply-batching.js'), lineNumber: 0 }, children: [4] },
                { id: 3, callFrame: { functionName: '(idle)', url: '', lineNumber: 0 } },
                { id: 4, callFrame: { functionName: 'cork', url: 'node:net', lineNumber: 0 } }
            ],
            samples: [4, 3, 4, 3],
            timeDeltas: [0, 1000, 2000, 4000]
        };
        const { total, stages } = summarizeStages(profile);
        expect(total).to.equal(7);
        // The first sample 1 ms and the third 4 ms (SMTP), the second 2 ms (idle), the last none.
        expect(stages.get('SMTP dialogue (smtp-server, adapters/smtp)')).to.equal(5);
        expect(stages.get('(idle)')).to.equal(2);
        // Only the samples taken from 2.5 ms on: the third (at 3 ms, 4 ms long) and the fourth (at 7 ms, none).
        expect(summarizeStages(profile, { fromMs: 2.5, toMs: Infinity }).stages.get('SMTP dialogue (smtp-server, adapters/smtp)')).to.equal(4);
    });
});
